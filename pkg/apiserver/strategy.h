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

// Pods start Pending with the default scheduler; namespaces Active with the "kubernetes"
// finalizer; services, replica sets, stateful sets and replication controllers with an empty
// status, the workloads at generation 1.
void prepareForCreate(Resource resource, nlohmann::json& object);
// A main-resource update of `next` over `old`: every kind with a status subresource keeps the old
// status (and a namespace its finalizers); a workload's generation moves when its spec changes.
void prepareForUpdate(Resource resource, const nlohmann::json& old, nlohmann::json& next);
// Sets the label kubernetes.io/metadata.name to a namespace's name, on every write (the
// NamespaceDefaultLabelName defaulting).
void defaultNamespaceLabel(nlohmann::json& object);

// Why `object` does not decode as the resource's typed form; nullopt when it does.
std::optional<std::string> decodeFailure(Resource resource, const nlohmann::json& object);

// The namespaces kube-apiserver creates at startup, which NamespaceLifecycle admission never lets
// anyone delete: "default", "kube-system", "kube-public" (and "kube-node-lease", created but
// deletable).
inline constexpr std::string_view kSystemNamespaces[] = {"default", "kube-system", "kube-public",
                                                         "kube-node-lease"};
bool isImmortalNamespace(std::string_view name);

}  // namespace berth::apiserver
