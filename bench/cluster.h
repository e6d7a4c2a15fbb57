#pragma once
// A generated cluster for the scheduling benchmark: nodes with varied labels, taints and sizes,
// pods already bound to them, and pending pods with varied requests, selectors, affinity and
// tolerations.
// The same spec and seed always give the same objects.

#include <cstdint>
#include <string>
#include <vector>

#include "pkg/api/types.h"

namespace berth::bench {

struct ClusterSpec {
  int nodes = 5000;
  int boundPerNode = 2;  // pods already running on every node
  int pending = 10000;
  uint64_t seed = 42;
};

struct Cluster {
  std::vector<api::NodePtr> nodes;
  std::vector<api::PodPtr> bound;    // spec.nodeName set
  std::vector<api::PodPtr> pending;  // in queue order (creation time)
};

Cluster generateCluster(const ClusterSpec& spec);

// One line on what was generated: tainted nodes, pods with selectors, tolerations, GPUs, ports.
std::string describe(const Cluster& cluster);

}  // namespace berth::bench
