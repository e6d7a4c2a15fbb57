#include "pkg/framework/cluster_objects.h"

#include <mutex>

namespace berth::framework {
namespace {

template <typename Map, typename Ptr>
void put(Map& map, Ptr obj) {
  if (obj == nullptr) {
    return;
  }
  auto key = std::make_tuple(obj->metadata.namespace_, obj->metadata.name);
  map.insert_or_assign(std::move(key), std::move(obj));
}

template <typename Map>
bool erase(Map& map, std::string_view ns, std::string_view name) {
  auto it = map.find(std::make_tuple(std::string(ns), std::string(name)));
  if (it == map.end()) {
    return false;
  }
  map.erase(it);
  return true;
}

template <typename Map>
typename Map::mapped_type find(const Map& map, std::string_view ns, std::string_view name) {
  auto it = map.find(std::make_tuple(std::string(ns), std::string(name)));
  return it == map.end() ? nullptr : it->second;
}

// The objects whose namespace is ns, in name order.
template <typename Map>
std::vector<typename Map::mapped_type> inNamespace(const Map& map, std::string_view ns) {
  std::vector<typename Map::mapped_type> out;
  for (auto it = map.lower_bound(std::make_tuple(std::string(ns), std::string()));
       it != map.end() && std::get<0>(it->first) == ns; ++it) {
    out.push_back(it->second);
  }
  return out;
}

// Every object, in (namespace, name) order.
template <typename Map>
std::vector<typename Map::mapped_type> all(const Map& map) {
  std::vector<typename Map::mapped_type> out;
  out.reserve(map.size());
  for (const auto& entry : map) {
    out.push_back(entry.second);
  }
  return out;
}

}  // namespace

void ClusterObjectStore::upsert(api::NamespacePtr obj) {
  std::unique_lock lock(mu_);
  put(namespaces_, std::move(obj));
}
void ClusterObjectStore::upsert(api::ServicePtr obj) {
  std::unique_lock lock(mu_);
  put(services_, std::move(obj));
}
void ClusterObjectStore::upsert(api::ReplicaSetPtr obj) {
  std::unique_lock lock(mu_);
  put(replica_sets_, std::move(obj));
}
void ClusterObjectStore::upsert(api::StatefulSetPtr obj) {
  std::unique_lock lock(mu_);
  put(stateful_sets_, std::move(obj));
}
void ClusterObjectStore::upsert(api::ReplicationControllerPtr obj) {
  std::unique_lock lock(mu_);
  put(replication_controllers_, std::move(obj));
}
void ClusterObjectStore::upsert(api::PodDisruptionBudgetPtr obj) {
  std::unique_lock lock(mu_);
  put(pod_disruption_budgets_, std::move(obj));
}
void ClusterObjectStore::upsert(api::PersistentVolumeClaimPtr obj) {
  std::unique_lock lock(mu_);
  put(persistent_volume_claims_, std::move(obj));
}
void ClusterObjectStore::upsert(api::PersistentVolumePtr obj) {
  std::unique_lock lock(mu_);
  put(persistent_volumes_, std::move(obj));
}
void ClusterObjectStore::upsert(api::StorageClassPtr obj) {
  std::unique_lock lock(mu_);
  put(storage_classes_, std::move(obj));
}
void ClusterObjectStore::upsert(api::CSINodePtr obj) {
  std::unique_lock lock(mu_);
  put(csi_nodes_, std::move(obj));
}
void ClusterObjectStore::upsert(api::CSIDriverPtr obj) {
  std::unique_lock lock(mu_);
  put(csi_drivers_, std::move(obj));
}
void ClusterObjectStore::upsert(api::CSIStorageCapacityPtr obj) {
  std::unique_lock lock(mu_);
  put(csi_storage_capacities_, std::move(obj));
}

bool ClusterObjectStore::removeNamespace(std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(namespaces_, "", name);
}
bool ClusterObjectStore::removeService(std::string_view ns, std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(services_, ns, name);
}
bool ClusterObjectStore::removeReplicaSet(std::string_view ns, std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(replica_sets_, ns, name);
}
bool ClusterObjectStore::removeStatefulSet(std::string_view ns, std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(stateful_sets_, ns, name);
}
bool ClusterObjectStore::removeReplicationController(std::string_view ns, std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(replication_controllers_, ns, name);
}
bool ClusterObjectStore::removePodDisruptionBudget(std::string_view ns, std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(pod_disruption_budgets_, ns, name);
}
bool ClusterObjectStore::removePersistentVolumeClaim(std::string_view ns, std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(persistent_volume_claims_, ns, name);
}
bool ClusterObjectStore::removePersistentVolume(std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(persistent_volumes_, "", name);
}
bool ClusterObjectStore::removeStorageClass(std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(storage_classes_, "", name);
}
bool ClusterObjectStore::removeCSINode(std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(csi_nodes_, "", name);
}
bool ClusterObjectStore::removeCSIDriver(std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(csi_drivers_, "", name);
}
bool ClusterObjectStore::removeCSIStorageCapacity(std::string_view ns, std::string_view name) {
  std::unique_lock lock(mu_);
  return erase(csi_storage_capacities_, ns, name);
}

api::NamespacePtr ClusterObjectStore::getNamespace(std::string_view name) const {
  std::shared_lock lock(mu_);
  return find(namespaces_, "", name);
}

std::vector<api::NamespacePtr> ClusterObjectStore::listNamespaces() const {
  std::shared_lock lock(mu_);
  return inNamespace(namespaces_, "");
}

std::vector<api::ServicePtr> ClusterObjectStore::listServices(std::string_view ns) const {
  std::shared_lock lock(mu_);
  return inNamespace(services_, ns);
}

api::ReplicaSetPtr ClusterObjectStore::getReplicaSet(std::string_view ns,
                                                     std::string_view name) const {
  std::shared_lock lock(mu_);
  return find(replica_sets_, ns, name);
}

api::StatefulSetPtr ClusterObjectStore::getStatefulSet(std::string_view ns,
                                                       std::string_view name) const {
  std::shared_lock lock(mu_);
  return find(stateful_sets_, ns, name);
}

api::ReplicationControllerPtr ClusterObjectStore::getReplicationController(
    std::string_view ns, std::string_view name) const {
  std::shared_lock lock(mu_);
  return find(replication_controllers_, ns, name);
}

std::vector<api::PodDisruptionBudgetPtr> ClusterObjectStore::listPodDisruptionBudgets(
    std::string_view ns) const {
  std::shared_lock lock(mu_);
  return inNamespace(pod_disruption_budgets_, ns);
}

api::PersistentVolumeClaimPtr ClusterObjectStore::getPersistentVolumeClaim(
    std::string_view ns, std::string_view name) const {
  std::shared_lock lock(mu_);
  return find(persistent_volume_claims_, ns, name);
}

api::PersistentVolumePtr ClusterObjectStore::getPersistentVolume(std::string_view name) const {
  std::shared_lock lock(mu_);
  return find(persistent_volumes_, "", name);
}

std::vector<api::PersistentVolumePtr> ClusterObjectStore::listPersistentVolumes() const {
  std::shared_lock lock(mu_);
  return all(persistent_volumes_);
}

api::StorageClassPtr ClusterObjectStore::getStorageClass(std::string_view name) const {
  std::shared_lock lock(mu_);
  return find(storage_classes_, "", name);
}

api::CSINodePtr ClusterObjectStore::getCSINode(std::string_view name) const {
  std::shared_lock lock(mu_);
  return find(csi_nodes_, "", name);
}

api::CSIDriverPtr ClusterObjectStore::getCSIDriver(std::string_view name) const {
  std::shared_lock lock(mu_);
  return find(csi_drivers_, "", name);
}

std::vector<api::CSIStorageCapacityPtr> ClusterObjectStore::listCSIStorageCapacities() const {
  std::shared_lock lock(mu_);
  return all(csi_storage_capacities_);
}

}  // namespace berth::framework
