#pragma once
// Diagnosis and FitError: why a pod fits no node, kept per node for explanation and summarised in
// upstream's message: "0/5 nodes are available: 1 node(s) were unschedulable, 4 Insufficient cpu."

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/framework/status.h"

namespace berth::framework {

struct Diagnosis {
  // The rejecting status of each evaluated node that did not fit (status.plugin() says which
  // plugin). Node names point into the snapshot the cycle ran on and are valid as long as it lives.
  std::vector<std::pair<std::string_view, Status>> nodeToStatus;
  // The status of nodes that were never evaluated (a PreFilter rejected the pod, or narrowed the
  // nodes).
  std::optional<Status> absentNodesStatus;
  std::set<std::string> unschedulablePlugins;
  std::string preFilterMsg;   // set when a PreFilter plugin rejected the pod outright
  std::string postFilterMsg;  // appended to the message, e.g. by preemption
};

struct FitError {
  int numAllNodes = 0;
  Diagnosis diagnosis;

  // Upstream's FitError.Error(): a histogram of reasons, sorted as strings, joined with ", ".
  std::string message() const;
};

}  // namespace berth::framework
