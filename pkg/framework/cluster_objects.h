#pragma once
// ClusterObjects: what plugins read of the cluster besides nodes and pods (upstream's informer
// listers): Namespaces for InterPodAffinity's namespaceSelector, and the Services, ReplicaSets,
// StatefulSets and ReplicationControllers behind PodTopologySpread's system default constraints,
// the PodDisruptionBudgets preemption respects, and the claims, volumes, classes and CSI objects
// the volume plugins read.
// ClusterObjectStore is the one implementation: the daemon feeds it from informers, the simulator
// from the cluster file. Every method may be called from several threads at once.

#include <map>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "pkg/api/types.h"

namespace berth::framework {

class ClusterObjects {
 public:
  virtual ~ClusterObjects() = default;
  // Null when absent.
  virtual api::NamespacePtr getNamespace(std::string_view name) const = 0;
  virtual std::vector<api::NamespacePtr> listNamespaces() const = 0;
  virtual std::vector<api::ServicePtr> listServices(std::string_view ns) const = 0;
  virtual api::ReplicaSetPtr getReplicaSet(std::string_view ns, std::string_view name) const = 0;
  virtual api::StatefulSetPtr getStatefulSet(std::string_view ns, std::string_view name) const = 0;
  virtual api::ReplicationControllerPtr getReplicationController(std::string_view ns,
                                                                 std::string_view name) const = 0;
  // Preemption's PodDisruptionBudgets.
  virtual std::vector<api::PodDisruptionBudgetPtr> listPodDisruptionBudgets(
      std::string_view ns) const = 0;
  // The volume plugins' objects, as the informers last saw them (VolumeBinding overlays what it
  // assumed itself). PersistentVolumes, StorageClasses, CSINodes and CSIDrivers are
  // cluster-scoped; a CSINode is named as its node.
  virtual api::PersistentVolumeClaimPtr getPersistentVolumeClaim(std::string_view ns,
                                                                 std::string_view name) const = 0;
  virtual api::PersistentVolumePtr getPersistentVolume(std::string_view name) const = 0;
  virtual std::vector<api::PersistentVolumePtr> listPersistentVolumes() const = 0;
  virtual api::StorageClassPtr getStorageClass(std::string_view name) const = 0;
  virtual api::CSINodePtr getCSINode(std::string_view name) const = 0;
  virtual api::CSIDriverPtr getCSIDriver(std::string_view name) const = 0;
  // Every namespace's.
  virtual std::vector<api::CSIStorageCapacityPtr> listCSIStorageCapacities() const = 0;
};

class ClusterObjectStore final : public ClusterObjects {
 public:
  // Adds or replaces the object with the same namespace and name.
  void upsert(api::NamespacePtr obj);
  void upsert(api::ServicePtr obj);
  void upsert(api::ReplicaSetPtr obj);
  void upsert(api::StatefulSetPtr obj);
  void upsert(api::ReplicationControllerPtr obj);
  void upsert(api::PodDisruptionBudgetPtr obj);
  void upsert(api::PersistentVolumeClaimPtr obj);
  void upsert(api::PersistentVolumePtr obj);
  void upsert(api::StorageClassPtr obj);
  void upsert(api::CSINodePtr obj);
  void upsert(api::CSIDriverPtr obj);
  void upsert(api::CSIStorageCapacityPtr obj);
  // Removes the object of that kind with this namespace and name; false when absent.
  bool removeNamespace(std::string_view name);
  bool removeService(std::string_view ns, std::string_view name);
  bool removeReplicaSet(std::string_view ns, std::string_view name);
  bool removeStatefulSet(std::string_view ns, std::string_view name);
  bool removeReplicationController(std::string_view ns, std::string_view name);
  bool removePodDisruptionBudget(std::string_view ns, std::string_view name);
  bool removePersistentVolumeClaim(std::string_view ns, std::string_view name);
  bool removePersistentVolume(std::string_view name);
  bool removeStorageClass(std::string_view name);
  bool removeCSINode(std::string_view name);
  bool removeCSIDriver(std::string_view name);
  bool removeCSIStorageCapacity(std::string_view ns, std::string_view name);

  api::NamespacePtr getNamespace(std::string_view name) const override;
  std::vector<api::NamespacePtr> listNamespaces() const override;
  std::vector<api::ServicePtr> listServices(std::string_view ns) const override;
  api::ReplicaSetPtr getReplicaSet(std::string_view ns, std::string_view name) const override;
  api::StatefulSetPtr getStatefulSet(std::string_view ns, std::string_view name) const override;
  api::ReplicationControllerPtr getReplicationController(std::string_view ns,
                                                         std::string_view name) const override;
  std::vector<api::PodDisruptionBudgetPtr> listPodDisruptionBudgets(
      std::string_view ns) const override;
  api::PersistentVolumeClaimPtr getPersistentVolumeClaim(std::string_view ns,
                                                         std::string_view name) const override;
  api::PersistentVolumePtr getPersistentVolume(std::string_view name) const override;
  std::vector<api::PersistentVolumePtr> listPersistentVolumes() const override;
  api::StorageClassPtr getStorageClass(std::string_view name) const override;
  api::CSINodePtr getCSINode(std::string_view name) const override;
  api::CSIDriverPtr getCSIDriver(std::string_view name) const override;
  std::vector<api::CSIStorageCapacityPtr> listCSIStorageCapacities() const override;

 private:
  // Keyed by (namespace, name): a namespace's objects are one contiguous range.
  template <typename T>
  using ByKey =
      std::map<std::tuple<std::string, std::string>, std::shared_ptr<const T>, std::less<>>;

  mutable std::shared_mutex mu_;
  ByKey<api::Namespace> namespaces_;
  ByKey<api::Service> services_;
  ByKey<api::ReplicaSet> replica_sets_;
  ByKey<api::StatefulSet> stateful_sets_;
  ByKey<api::ReplicationController> replication_controllers_;
  ByKey<api::PodDisruptionBudget> pod_disruption_budgets_;
  ByKey<api::PersistentVolumeClaim> persistent_volume_claims_;
  ByKey<api::PersistentVolume> persistent_volumes_;
  ByKey<api::StorageClass> storage_classes_;
  ByKey<api::CSINode> csi_nodes_;
  ByKey<api::CSIDriver> csi_drivers_;
  ByKey<api::CSIStorageCapacity> csi_storage_capacities_;
};

}  // namespace berth::framework
