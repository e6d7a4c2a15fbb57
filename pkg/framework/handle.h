#pragma once
// Handle: what plugins may reach outside the scheduling core, as interfaces the edge implements.

#include <string>

#include "pkg/api/types.h"
#include "pkg/framework/cluster_objects.h"
#include "pkg/framework/status.h"

namespace berth::framework {

// Binds a pod to a node (the API client POSTs a Binding; the simulator records the placement).
class PodBinder {
 public:
  virtual ~PodBinder() = default;
  virtual Status bind(const api::Pod& pod, const std::string& node) = 0;
};

struct Handle {
  PodBinder* binder = nullptr;  // not owned; null where nothing is ever bound
  // Not owned; null where there are none (plugins then see no namespaces, services or
  // controllers).
  const ClusterObjects* objects = nullptr;
};

}  // namespace berth::framework
