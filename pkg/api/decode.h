#pragma once
// Decoding Kubernetes objects from JSON and YAML exactly as kube-apiserver and kubectl write them.
// Unknown fields are ignored; a malformed value is an error that names the object and the field path:
//   pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity "abc"

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pkg/api/types.h"
#include "pkg/util/result.h"

namespace berth::api {

util::Result<Pod> decodePod(const nlohmann::json& j);
util::Result<Node> decodeNode(const nlohmann::json& j);

// The JSON form kube-apiserver writes (apiVersion/kind included, empty fields omitted).
nlohmann::json encodePod(const Pod& pod);
nlohmann::json encodeNode(const Node& node);

// RFC 3339 ("2024-05-01T10:00:00Z", with optional fraction and offset) to and from Timestamp.
util::Result<Timestamp> parseTimestamp(std::string_view text);
std::string formatTimestamp(Timestamp t);             // seconds: metav1.Time
std::string formatMicroTimestamp(Timestamp t);        // microseconds: metav1.MicroTime

// Parses JSON or YAML text (a single document or a multi-document YAML stream) into JSON values.
// YAML scalars are typed as sigs.k8s.io/yaml does (plain 2 is a number, "2" a string, true a bool).
util::Result<std::vector<nlohmann::json>> parseDocuments(std::string_view text);

// The nodes and pods in a file written by `kubectl get nodes,pods -A -o json|yaml`: a kind: List with
// items, a multi-document stream, or a single object. Objects of other kinds are counted in `skipped`.
struct ObjectSet {
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::vector<std::string> skipped;  // "Service default/x" for objects of kinds berth does not read
};
util::Result<ObjectSet> decodeObjects(std::string_view text);

}  // namespace berth::api
