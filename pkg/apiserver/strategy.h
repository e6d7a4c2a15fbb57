#pragma once
// What each kind's registry strategy and defaulting do to an object on its way into the store
// (PrepareForCreate, PrepareForUpdate, SetDefaults_*), beyond the identity fields the store
// itself manages, and the objects admission refuses to delete.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/apiserver/resource_info.h"

namespace berth::apiserver {

// The SetDefaults_* of the storage kinds, applied to every object written (the decoder defaults
// each request body): claims and volumes get volumeMode Filesystem and phase Pending, a volume
// reclaim policy Retain, a StorageClass reclaimPolicy Delete and volumeBindingMode Immediate, a
// CSIDriver its spec booleans, fsGroupPolicy and lifecycle modes.
void applyDefaults(Resource resource, nlohmann::json& object);
// Pods start Pending with the default scheduler; namespaces Active with the "kubernetes"
// finalizer; services, replica sets, stateful sets and replication controllers with an empty
// status, the workloads at generation 1; claims and volumes Pending (a volume's phase stamped
// with `now`, an RFC 3339 time).
void prepareForCreate(Resource resource, nlohmann::json& object, std::string_view now);
// A main-resource update of `next` over `old`: every kind with a status subresource keeps the old
// status (and a namespace its finalizers); a workload's generation moves when its spec changes;
// a pod without spec.schedulerName gets the default one, as on create.
void prepareForUpdate(Resource resource, const nlohmann::json& old, nlohmann::json& next);
// Sets the label kubernetes.io/metadata.name to a namespace's name, on every write (the
// NamespaceDefaultLabelName defaulting).
void defaultNamespaceLabel(nlohmann::json& object);

// A status update of a PersistentVolume that changes its phase stamps lastPhaseTransitionTime with
// `now` unless the writer set a new one; the other kinds' status updates change nothing else.
void prepareForStatusUpdate(Resource resource, const nlohmann::json& old, nlohmann::json& next,
                            std::string_view now);

// Whether a create or update of the kind is refused when it does not decode (the storage kinds;
// the older kinds are checked only when patched).
bool validatesOnWrite(Resource resource);
// Why `object` does not decode as the resource's typed form; nullopt when it does.
std::optional<std::string> decodeFailure(Resource resource, const nlohmann::json& object);

// The namespaces kube-apiserver creates at startup, which NamespaceLifecycle admission never lets
// anyone delete: "default", "kube-system", "kube-public" (and "kube-node-lease", created but
// deletable).
inline constexpr std::string_view kSystemNamespaces[] = {"default", "kube-system", "kube-public",
                                                         "kube-node-lease"};
bool isImmortalNamespace(std::string_view name);

}  // namespace berth::apiserver
