#pragma once
// core/v1 Binding: the body POSTed to a pod's binding subresource, which sets the pod's node.

#include <nlohmann/json.hpp>
#include <string>

namespace berth::api {

struct Binding {
  // The pod being bound; a non-empty uid makes the server check it is still the same pod.
  std::string name{};
  std::string namespace_{};
  std::string uid{};
  std::string node{};  // target: the Node
};

// {"apiVersion":"v1","kind":"Binding","metadata":{name,namespace,uid},"target":{"kind":"Node",..}}
nlohmann::json encodeBinding(const Binding& binding);

}  // namespace berth::api
