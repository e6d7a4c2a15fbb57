#pragma once
// Reading the cluster files berth simulates and serves: what `kubectl get -o json|yaml` writes.

#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/util/result.h"

namespace berth::api {

// The objects in a file written by `kubectl get nodes,pods,namespaces,services,replicasets,
// statefulsets,replicationcontrollers,pdb,pvc,pv,storageclass,csinode,csidriver,
// csistoragecapacity -A -o json|yaml`: a kind: List (or PodList, NodeList...)
// with items, a multi-document stream, or a single object. Objects of other kinds are listed in
// `skipped`. The first object that fails to decode fails the whole file.
struct ObjectSet {
  std::vector<NodePtr> nodes{};
  std::vector<PodPtr> pods{};
  // "ConfigMap default/x" for objects of kinds berth does not read.
  std::vector<std::string> skipped{};
  std::vector<NamespacePtr> namespaces{};
  std::vector<ServicePtr> services{};
  std::vector<ReplicaSetPtr> replicaSets{};
  std::vector<StatefulSetPtr> statefulSets{};
  std::vector<ReplicationControllerPtr> replicationControllers{};
  std::vector<PodDisruptionBudgetPtr> podDisruptionBudgets{};
  std::vector<PersistentVolumeClaimPtr> persistentVolumeClaims{};
  std::vector<PersistentVolumePtr> persistentVolumes{};
  std::vector<StorageClassPtr> storageClasses{};
  std::vector<CSINodePtr> csiNodes{};
  std::vector<CSIDriverPtr> csiDrivers{};
  std::vector<CSIStorageCapacityPtr> csiStorageCapacities{};
};
util::Result<ObjectSet> decodeObjects(std::string_view text);

}  // namespace berth::api
