#pragma once
// Decoding Kubernetes objects from JSON and YAML exactly as kube-apiserver and kubectl write them.
// Unknown fields are ignored; a malformed value is an error naming the object and the field path:
//   pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "abc"
// As with Go's decoder, null means absent, int fields take only integer literals in range, and
// quantities may be strings or numbers. Two API server defaults are applied (a port's protocol is
// TCP, an empty toleration operator is Equal) and the enum values the scheduler switches on are
// checked as validation would (node selector and toleration operators, taint effects).

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/encode.h"
#include "pkg/api/object_file.h"
#include "pkg/api/time.h"
#include "pkg/api/types.h"
#include "pkg/api/yaml.h"
#include "pkg/util/result.h"

namespace berth::api {

util::Result<Pod> decodePod(const nlohmann::json& j);
util::Result<Node> decodeNode(const nlohmann::json& j);
util::Result<Namespace> decodeNamespace(const nlohmann::json& j);
util::Result<Service> decodeService(const nlohmann::json& j);
util::Result<ReplicaSet> decodeReplicaSet(const nlohmann::json& j);
util::Result<StatefulSet> decodeStatefulSet(const nlohmann::json& j);
util::Result<ReplicationController> decodeReplicationController(const nlohmann::json& j);
util::Result<PodDisruptionBudget> decodePodDisruptionBudget(const nlohmann::json& j);
util::Result<PersistentVolumeClaim> decodePersistentVolumeClaim(const nlohmann::json& j);
util::Result<PersistentVolume> decodePersistentVolume(const nlohmann::json& j);
util::Result<StorageClass> decodeStorageClass(const nlohmann::json& j);
util::Result<CSINode> decodeCSINode(const nlohmann::json& j);
util::Result<CSIDriver> decodeCSIDriver(const nlohmann::json& j);
util::Result<CSIStorageCapacity> decodeCSIStorageCapacity(const nlohmann::json& j);

// How messages name an object: "default/web-1", "n1" or "<unknown>".
std::string objectKey(const nlohmann::json& obj);

}  // namespace berth::api
