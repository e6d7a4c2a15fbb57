#pragma once
// The Kubernetes objects a scheduler reads, as typed C++ values (the fields of k8s.io/api/core/v1
// that scheduling uses; everything else is ignored on decode). Objects are immutable once decoded
// and are shared as std::shared_ptr<const T>; to change one (e.g. assume a pod onto a node) copy it
// first.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/resource/quantity.h"

namespace berth::api {

// Time as microseconds since the Unix epoch (metav1.Time has seconds, MicroTime microseconds).
struct Timestamp {
  int64_t micros = 0;
  friend auto operator<=>(const Timestamp&, const Timestamp&) = default;
};

using ResourceList = std::map<std::string, resource::Quantity>;
using StringMap = std::map<std::string, std::string>;

struct OwnerReference {
  std::string apiVersion;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_;  // "namespace" is a keyword
  std::string uid;
  std::string resourceVersion;
  StringMap labels;
  StringMap annotations;
  std::optional<Timestamp> creationTimestamp;
  std::optional<Timestamp> deletionTimestamp;
  std::vector<OwnerReference> ownerReferences;
};

// --- Selectors -----------------------------------------------------------------------------------

struct LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
};

struct LabelSelector {
  StringMap matchLabels;
  std::vector<LabelSelectorRequirement> matchExpressions;
};

enum class NodeSelectorOperator { In, NotIn, Exists, DoesNotExist, Gt, Lt };

struct NodeSelectorRequirement {
  std::string key;
  NodeSelectorOperator op = NodeSelectorOperator::In;
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> matchExpressions;  // on node labels
  std::vector<NodeSelectorRequirement> matchFields;       // on node fields (metadata.name only)
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> nodeSelectorTerms;  // ORed
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;  // 1..100
  NodeSelectorTerm preference;
};

struct NodeAffinity {
  std::optional<NodeSelector> requiredDuringSchedulingIgnoredDuringExecution;
  std::vector<PreferredSchedulingTerm> preferredDuringSchedulingIgnoredDuringExecution;
};

// One pod (anti-)affinity term: the pods matched by labelSelector in `namespaces` (or the
// namespaces matched by namespaceSelector; both empty means the pod's own namespace) and the
// topology domain (nodes sharing topologyKey's value) they run in. matchLabelKeys and
// mismatchLabelKeys are already merged into labelSelector by the API server (v1.33+); they are kept
// for messages only.
struct PodAffinityTerm {
  std::optional<LabelSelector> labelSelector;  // absent selects no pod
  std::vector<std::string> namespaces;
  std::string topologyKey;
  std::optional<LabelSelector> namespaceSelector;  // absent: `namespaces` only; empty: all
  std::vector<std::string> matchLabelKeys;
  std::vector<std::string> mismatchLabelKeys;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;  // 1..100
  PodAffinityTerm podAffinityTerm;
};

// Used for both podAffinity and podAntiAffinity.
struct PodAffinity {
  std::vector<PodAffinityTerm> requiredDuringSchedulingIgnoredDuringExecution;
  std::vector<WeightedPodAffinityTerm> preferredDuringSchedulingIgnoredDuringExecution;
};

struct Affinity {
  std::optional<NodeAffinity> nodeAffinity;
  std::optional<PodAffinity> podAffinity;
  std::optional<PodAffinity> podAntiAffinity;
};

// spec.topologySpreadConstraints[]. Enum fields stay strings: PodTopologySpread validates them in
// PreFilter, so one bad pod is reported rather than dropped by the decoder.
struct TopologySpreadConstraint {
  int32_t maxSkew = 0;
  std::string topologyKey;
  std::string whenUnsatisfiable;  // DoNotSchedule or ScheduleAnyway
  std::optional<LabelSelector> labelSelector;
  std::optional<int32_t> minDomains;
  std::optional<std::string> nodeAffinityPolicy;  // Honor (default) or Ignore
  std::optional<std::string> nodeTaintsPolicy;    // Ignore (default) or Honor
  std::vector<std::string> matchLabelKeys;
};

// --- Taints and tolerations ----------------------------------------------------------------------

// v1.TaintEffect values.
inline constexpr std::string_view kTaintEffectNoSchedule = "NoSchedule";
inline constexpr std::string_view kTaintEffectPreferNoSchedule = "PreferNoSchedule";
inline constexpr std::string_view kTaintEffectNoExecute = "NoExecute";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // one of the kTaintEffect values
};

struct Toleration {
  std::string key;                  // empty with operator Exists: tolerates everything
  std::string operator_ = "Equal";  // Equal or Exists; empty means Equal
  std::string value;
  std::string effect;  // empty: all effects
  std::optional<int64_t> tolerationSeconds;
};

// --- Pods ----------------------------------------------------------------------------------------

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
};

struct ContainerPort {
  std::string name;
  int32_t containerPort = 0;
  int32_t hostPort = 0;
  std::string protocol = "TCP";
  std::string hostIP;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  std::vector<ContainerPort> ports;
  std::string restartPolicy;  // "Always" on an init container makes it a sidecar
};

// A pod volume: its name and which volume source it uses (the one source field set, e.g.
// "persistentVolumeClaim", "emptyDir", "csi"), with the fields placement depends on.
struct Volume {
  std::string name;
  std::string source;     // "" when no source field is set
  std::string claimName;  // persistentVolumeClaim.claimName
  bool readOnly = false;  // the source's readOnly, where it has one
  // The in-tree disk VolumeRestrictions compares: gcePersistentDisk.pdName,
  // awsElasticBlockStore.volumeID, iscsi.iqn or rbd.image (with rbd's pool and monitors).
  std::string disk;
  std::string rbdPool;
  std::vector<std::string> rbdMonitors;
  std::string csiDriver;  // csi.driver of an inline CSI volume
};

// spec.resourceClaims[] (dynamic resource allocation): only the name matters to berth today.
struct PodResourceClaim {
  std::string name;
};

struct PodSpec {
  std::string schedulerName;  // defaulted by the API server to "default-scheduler"
  std::string nodeName;
  StringMap nodeSelector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::optional<int32_t> priority;
  std::string priorityClassName;
  // "Never" keeps the pod from preempting others; empty or "PreemptLowerPriority" lets it.
  std::string preemptionPolicy;
  std::vector<Container> initContainers;
  std::vector<Container> containers;
  ResourceList overhead;
  bool hostNetwork = false;
  std::vector<std::string> schedulingGates;  // names of spec.schedulingGates
  std::vector<TopologySpreadConstraint> topologySpreadConstraints;
  std::vector<Volume> volumes;
  std::vector<PodResourceClaim> resourceClaims;
  std::optional<ResourceRequirements> resources;  // pod-level resources (PodLevelResources)
};

struct PodCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
  std::optional<Timestamp> lastTransitionTime;
};

// v1.PodPhase values.
inline constexpr std::string_view kPodPending = "Pending";
inline constexpr std::string_view kPodRunning = "Running";
inline constexpr std::string_view kPodSucceeded = "Succeeded";
inline constexpr std::string_view kPodFailed = "Failed";
inline constexpr std::string_view kPodUnknown = "Unknown";

struct PodStatus {
  std::string phase;  // one of the kPod phase values
  std::vector<PodCondition> conditions;
  std::string nominatedNodeName;
  std::optional<Timestamp> startTime;  // when the kubelet started the pod; preemption's tie-break
  std::string reason;                  // e.g. OutOfcpu when kubelet rejected the pod
  std::string message;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  // Set by decodePod for a pod larger than kube-apiserver can store: why, naming the field. Only
  // the metadata, scheduler and node names are kept; the scheduler refuses the pod with this.
  std::string sizeRefusal;
};

// --- Nodes ---------------------------------------------------------------------------------------

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
};

struct NodeCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
};

struct ContainerImage {
  std::vector<std::string> names;
  int64_t sizeBytes = 0;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  std::vector<NodeCondition> conditions;
  std::vector<ContainerImage> images;
};

struct Node {
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;
};

// --- Objects PodTopologySpread and InterPodAffinity read ----------------------------------------

struct Namespace {
  ObjectMeta metadata;
};

struct Service {
  ObjectMeta metadata;
  StringMap selector;  // spec.selector; empty selects nothing
};

// ReplicaSets, StatefulSets and ReplicationControllers: only their pod selector matters here.
struct ReplicaSet {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;  // spec.selector
};

struct StatefulSet {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;  // spec.selector
};

struct ReplicationController {
  ObjectMeta metadata;
  StringMap selector;  // spec.selector (a plain map for RCs)
};

// policy/v1 PodDisruptionBudget: what preemption reads (upstream uses the status the disruption
// controller maintains, not minAvailable/maxUnavailable).
struct PodDisruptionBudget {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;  // spec.selector; absent or empty matches no pod here
  int32_t disruptionsAllowed = 0;         // status.disruptionsAllowed
  // status.disruptedPods: names of pods already being disrupted (to their eviction times), which
  // preemption does not count again.
  StringMap disruptedPods;
};

// --- Storage: what the volume plugins read -------------------------------------------------------

// v1.PersistentVolumeAccessMode values.
inline constexpr std::string_view kReadWriteOnce = "ReadWriteOnce";
inline constexpr std::string_view kReadOnlyMany = "ReadOnlyMany";
inline constexpr std::string_view kReadWriteMany = "ReadWriteMany";
inline constexpr std::string_view kReadWriteOncePod = "ReadWriteOncePod";

// storage.k8s.io/v1 VolumeBindingMode values.
inline constexpr std::string_view kVolumeBindingImmediate = "Immediate";
inline constexpr std::string_view kVolumeBindingWaitForFirstConsumer = "WaitForFirstConsumer";

// core/v1 ObjectReference (an event's regarding object, a PersistentVolume's claimRef); empty
// fields are omitted on the wire.
struct ObjectReference {
  std::string kind{};
  std::string apiVersion{};
  std::string namespace_{};
  std::string name{};
  std::string uid{};
  std::string resourceVersion{};

  friend auto operator<=>(const ObjectReference&, const ObjectReference&) = default;
};

struct PersistentVolumeClaimSpec {
  std::vector<std::string> accessModes;  // kReadWriteOnce...
  std::optional<LabelSelector> selector;
  ResourceRequirements resources;  // requests.storage is the size asked for
  std::string volumeName;          // the PV it is (being) bound to
  // Absent: the default class applies (the admission plugin sets it); "": no class.
  std::optional<std::string> storageClassName;
  std::string volumeMode;  // Filesystem (the API server's default) or Block
  std::optional<std::string> volumeAttributesClassName;
};

struct PersistentVolumeClaimStatus {
  std::string phase;  // Pending, Bound or Lost
  std::vector<std::string> accessModes;
  ResourceList capacity;
};

struct PersistentVolumeClaim {
  ObjectMeta metadata;
  PersistentVolumeClaimSpec spec;
  PersistentVolumeClaimStatus status;
};

// spec.csi of a PersistentVolume.
struct CSIPersistentVolumeSource {
  std::string driver;
  std::string volumeHandle;
  bool readOnly = false;
};

struct PersistentVolumeSpec {
  ResourceList capacity;  // storage
  std::vector<std::string> accessModes;
  std::optional<ObjectReference> claimRef;
  std::string storageClassName;              // "" belongs to no class
  std::optional<NodeSelector> nodeAffinity;  // spec.nodeAffinity.required
  std::string volumeMode;                    // Filesystem (the API server's default) or Block
  std::string persistentVolumeReclaimPolicy;
  std::optional<std::string> volumeAttributesClassName;
  // The one volume source field set ("csi", "local", "gcePersistentDisk", "hostPath"...), with the
  // fields the plugins compare: `disk` as in Volume (pdName, volumeID, iqn or rbd image).
  std::string source;
  std::optional<CSIPersistentVolumeSource> csi;
  std::string disk;
};

struct PersistentVolumeStatus {
  std::string phase;  // Pending, Available, Bound, Released, Failed
};

struct PersistentVolume {
  ObjectMeta metadata;  // cluster-scoped
  PersistentVolumeSpec spec;
  PersistentVolumeStatus status;
};

// v1.TopologySelectorTerm: ANDed label requirements, as in a StorageClass's allowedTopologies.
struct TopologySelectorLabelRequirement {
  std::string key;
  std::vector<std::string> values;
};

struct TopologySelectorTerm {
  std::vector<TopologySelectorLabelRequirement> matchLabelExpressions;
};

struct StorageClass {
  ObjectMeta metadata;  // cluster-scoped
  std::string provisioner;
  // Absent only where no API server defaulted it (Immediate); VolumeBinding then refuses the class.
  std::optional<std::string> volumeBindingMode;
  std::vector<TopologySelectorTerm> allowedTopologies;  // ORed; empty allows every node
  std::string reclaimPolicy;
};

// One CSI driver installed on a node: spec.drivers[] of a CSINode.
struct CSINodeDriver {
  std::string name;
  std::string nodeID;
  std::vector<std::string> topologyKeys;
  std::optional<int32_t> allocatableCount;  // allocatable.count: volumes it can attach
};

// storage.k8s.io/v1 CSINode, named as its node.
struct CSINode {
  ObjectMeta metadata;  // annotation storage.alpha.kubernetes.io/migrated-plugins
  std::vector<CSINodeDriver> drivers;
};

struct CSIDriver {
  ObjectMeta metadata;  // cluster-scoped, named as the driver
  std::optional<bool> attachRequired;
  // True: the driver publishes CSIStorageCapacity objects, which VolumeBinding checks.
  std::optional<bool> storageCapacity;
};

struct CSIStorageCapacity {
  ObjectMeta metadata;
  std::optional<LabelSelector> nodeTopology;  // absent: no node has access
  std::string storageClassName;
  std::optional<resource::Quantity> capacity;
  std::optional<resource::Quantity> maximumVolumeSize;
};

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;
using NamespacePtr = std::shared_ptr<const Namespace>;
using ServicePtr = std::shared_ptr<const Service>;
using ReplicaSetPtr = std::shared_ptr<const ReplicaSet>;
using StatefulSetPtr = std::shared_ptr<const StatefulSet>;
using ReplicationControllerPtr = std::shared_ptr<const ReplicationController>;
using PodDisruptionBudgetPtr = std::shared_ptr<const PodDisruptionBudget>;
using PersistentVolumeClaimPtr = std::shared_ptr<const PersistentVolumeClaim>;
using PersistentVolumePtr = std::shared_ptr<const PersistentVolume>;
using StorageClassPtr = std::shared_ptr<const StorageClass>;
using CSINodePtr = std::shared_ptr<const CSINode>;
using CSIDriverPtr = std::shared_ptr<const CSIDriver>;
using CSIStorageCapacityPtr = std::shared_ptr<const CSIStorageCapacity>;

// "namespace/name", as kubectl and kube-scheduler name pods in messages.
inline std::string podKey(const Pod& pod) {
  return pod.metadata.namespace_ + "/" + pod.metadata.name;
}

// The owner reference marked controller (metav1.GetControllerOf), or nullptr.
inline const OwnerReference* controllerOf(const ObjectMeta& meta) {
  for (const OwnerReference& ref : meta.ownerReferences) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

// A pod that has finished (Succeeded or Failed) holds no resources and is never scheduled again.
inline bool isTerminal(const Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

// A pod with spec.nodeName set (by any scheduler, or by hand) is bound: only the cache counts it.
inline bool isAssigned(const Pod& pod) { return !pod.spec.nodeName.empty(); }

// kube-scheduler's pod informer leaves terminal pods out: their end arrives as a delete.
inline constexpr const char* kNonTerminalPodsSelector =
    "status.phase!=Succeeded,status.phase!=Failed";

}  // namespace berth::api
