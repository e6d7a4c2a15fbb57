#pragma once
// The API machinery vocabulary that the client and the embedded API server share
// (apimachinery/pkg/apis/meta/v1, pkg/watch, pkg/types): the resource table, list and watch
// options, watch event types, patch types and their media types, and the preconditions of a delete
// or a binding. One definition, so that what the
// client sends and what the server reads cannot drift apart.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace berth::api {

// A resource type: group ("" for core), version, the plural name its paths use, its kind and list
// kind, and whether it is namespaced.
struct ResourceInfo {
  std::string_view group;
  std::string_view version;   // "v1"
  std::string_view name;      // the path segment: "pods"
  std::string_view kind;      // "Pod"
  std::string_view listKind;  // "PodList"
  bool namespaced = true;

  std::string apiVersion() const;  // "v1", "coordination.k8s.io/v1"
  // "/api/v1/namespaces/NS/pods/NAME/SUB", or "/apis/GROUP/VERSION/..."; an empty `ns` addresses
  // every namespace (list and watch), an empty `name` the collection.
  std::string path(std::string_view ns = {}, std::string_view name = {},
                   std::string_view subresource = {}) const;
};

inline constexpr ResourceInfo kNodes{"", "v1", "nodes", "Node", "NodeList", false};
inline constexpr ResourceInfo kPods{"", "v1", "pods", "Pod", "PodList", true};
inline constexpr ResourceInfo kEvents{"", "v1", "events", "Event", "EventList", true};
inline constexpr ResourceInfo kEventsV1{"events.k8s.io", "v1",        "events",
                                        "Event",         "EventList", true};
inline constexpr ResourceInfo kLeases{"coordination.k8s.io", "v1", "leases", "Lease",
                                      "LeaseList",           true};
inline constexpr ResourceInfo kNamespaces{"",   "v1", "namespaces", "Namespace", "NamespaceList",
                                          false};
inline constexpr ResourceInfo kConfigMaps{"",  "v1", "configmaps", "ConfigMap", "ConfigMapList",
                                          true};
inline constexpr ResourceInfo kServices{"", "v1", "services", "Service", "ServiceList", true};
inline constexpr ResourceInfo kReplicationControllers{
    "", "v1", "replicationcontrollers", "ReplicationController", "ReplicationControllerList", true};
inline constexpr ResourceInfo kReplicaSets{"apps",           "v1", "replicasets", "ReplicaSet",
                                           "ReplicaSetList", true};
inline constexpr ResourceInfo kStatefulSets{
    "apps", "v1", "statefulsets", "StatefulSet", "StatefulSetList", true};
inline constexpr ResourceInfo kPodDisruptionBudgets{
    "policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", "PodDisruptionBudgetList", true};
inline constexpr ResourceInfo kPersistentVolumeClaims{
    "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", "PersistentVolumeClaimList", true};
inline constexpr ResourceInfo kPersistentVolumes{
    "", "v1", "persistentvolumes", "PersistentVolume", "PersistentVolumeList", false};
inline constexpr ResourceInfo kStorageClasses{
    "storage.k8s.io", "v1", "storageclasses", "StorageClass", "StorageClassList", false};
inline constexpr ResourceInfo kCSINodes{"storage.k8s.io", "v1",          "csinodes",
                                        "CSINode",        "CSINodeList", false};
inline constexpr ResourceInfo kCSIDrivers{"storage.k8s.io", "v1", "csidrivers", "CSIDriver",
                                          "CSIDriverList",  false};
inline constexpr ResourceInfo kCSIStorageCapacities{"storage.k8s.io",         "v1",
                                                    "csistoragecapacities",   "CSIStorageCapacity",
                                                    "CSIStorageCapacityList", true};

// metav1.ListOptions of a list call; each field is a query parameter, sent when set.
struct ListOptions {
  std::string labelSelector{};
  std::string fieldSelector{};
  std::string resourceVersion{};  // "" reads the latest state (a consistent read)
  // ?limit=: at most this many matching items (0 or less: all); when more match, the list carries
  // a continue token for the next page.
  int64_t limit = 0;
  // ?continue=: the previous page's token. Every page of one list is served at the first page's
  // resourceVersion: 410 Expired once the history no longer reaches back to it, 400 BadRequest for
  // a malformed token.
  std::string continueToken{};
};

// metav1.ListOptions of a watch. Every field is zero when absent from the query, as on the wire, so
// a watch asks for bookmarks only when it says so (the reflector does).
struct WatchOptions {
  // "" or "0": the current objects as ADDED events, then changes. Otherwise every change after it,
  // or 410 Expired when the history no longer reaches back.
  std::string resourceVersion{};
  std::string labelSelector{};
  std::string fieldSelector{};
  // The server ends the watch after this long (client-go's reflector picks 5-10 minutes at random
  // so watches do not all restart together); 0 leaves it to the server.
  int64_t timeoutSeconds = 0;
  bool allowWatchBookmarks = false;
};

// watch.EventType.
enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };

// "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR".
std::string_view watchEventTypeName(WatchEventType type);
// The type named on the wire; nullopt for any other text.
std::optional<WatchEventType> parseWatchEventType(std::string_view name);

// types.PatchType: the three patch formats kube-apiserver accepts for built-in resources.
enum class PatchType {
  Json,            // application/json-patch+json: RFC 6902 operations
  Merge,           // application/merge-patch+json: RFC 7386
  StrategicMerge,  // application/strategic-merge-patch+json: lists merged by their patchMergeKey
};

// The Content-Type a patch of `type` is sent with.
std::string_view contentType(PatchType type);
// The PatchType of a PATCH request's Content-Type (parameters such as charset are ignored, the
// type is case-insensitive, as mime.ParseMediaType reads it); nullopt for any other media type.
std::optional<PatchType> patchTypeFromContentType(std::string_view contentType);

// metav1.Preconditions of a DELETE (and a Binding's uid/resourceVersion): empty fields are neither
// sent nor checked.
struct Preconditions {
  std::string uid{};
  std::string resourceVersion{};
};

// metav1.DeleteOptions: the body of a DELETE; berth sends and reads only its preconditions.
struct DeleteOptions {
  Preconditions preconditions{};
  std::optional<int64_t> gracePeriodSeconds{};  // a pod's graceful deletion period
};

// {"kind":"DeleteOptions","apiVersion":"v1","preconditions":{...}}, with only the set fields.
nlohmann::json encodeDeleteOptions(const DeleteOptions& options);
// Reads a DELETE body as kube-apiserver's handler does here: preconditions that are not strings
// are ignored, as is everything else.
DeleteOptions decodeDeleteOptions(const nlohmann::json& body);

}  // namespace berth::api
