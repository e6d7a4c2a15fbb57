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

}  // namespace berth::framework
