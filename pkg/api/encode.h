#pragma once
// Encoding Pods and Nodes as kube-apiserver writes them. Field presence follows the Go struct
// tags: `omitempty` fields are left out when empty, the others always appear.

#include <nlohmann/json.hpp>

#include "pkg/api/types.h"

namespace berth::api {

// The JSON form kube-apiserver writes (apiVersion/kind included, empty fields omitted).
nlohmann::json encodePod(const Pod& pod);
nlohmann::json encodeNode(const Node& node);

}  // namespace berth::api
