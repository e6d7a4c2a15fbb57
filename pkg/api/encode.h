#pragma once
// Encoding Pods, Nodes and the objects the inter-pod plugins read as kube-apiserver writes them.
// Field presence follows the Go struct tags: `omitempty` fields are left out when empty, the others
// always appear.

#include <nlohmann/json.hpp>

#include "pkg/api/types.h"

namespace berth::api {

// The JSON form kube-apiserver writes (apiVersion/kind included, empty fields omitted).
nlohmann::json encodePod(const Pod& pod);
nlohmann::json encodeNode(const Node& node);
// Only the fields berth decodes: metadata and the pod selector.
nlohmann::json encodeNamespace(const Namespace& ns);
nlohmann::json encodeService(const Service& service);
nlohmann::json encodeReplicaSet(const ReplicaSet& rs);
nlohmann::json encodeStatefulSet(const StatefulSet& ss);
nlohmann::json encodeReplicationController(const ReplicationController& rc);
nlohmann::json encodePodDisruptionBudget(const PodDisruptionBudget& pdb);
// The storage kinds the volume plugins read, with the fields berth decodes.
nlohmann::json encodePersistentVolumeClaim(const PersistentVolumeClaim& pvc);
nlohmann::json encodePersistentVolume(const PersistentVolume& pv);
nlohmann::json encodeStorageClass(const StorageClass& sc);
nlohmann::json encodeCSINode(const CSINode& node);
nlohmann::json encodeCSIDriver(const CSIDriver& driver);
nlohmann::json encodeCSIStorageCapacity(const CSIStorageCapacity& c);

}  // namespace berth::api
