#pragma once
// The what-ifs simulate answers besides "where do the pending pods go": a drain, nodes added,
// pods added. Each rewrites the cluster file's objects before the run, as the change would
// rewrite the cluster, and the run places what it left pending with the real pipeline.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/object_file.h"
#include "pkg/labels/selector.h"
#include "pkg/util/result.h"

namespace berth::simulate {

// kubectl drain of the named nodes and of the nodes the selector matches.
struct DrainRequest {
  std::vector<std::string> nodes;
  std::optional<labels::Selector> selector;
};

// What a drain did to the cluster file before the run, pods as namespace/name.
struct DrainPlan {
  std::vector<std::string> nodes;  // cordoned, in file order
  // Evicted and re-created pending by their controller: the run places them.
  std::vector<std::string> moved;
  std::vector<std::string> lost;  // evicted, no controller re-creates them
  struct Blocked {
    std::string pod;
    std::vector<std::string> budgets;  // the PodDisruptionBudgets that refused the eviction
  };
  std::vector<Blocked> blocked;  // left on their node: the eviction API would refuse them
  // The PodDisruptionBudget (namespace/name) each moved pod's eviction spent, when one covered it.
  std::map<std::string, std::string, std::less<>> budgetOf;
};

// Disruptions a budget allows beyond its status.disruptionsAllowed, by namespace/name: its pods'
// replacements that became healthy elsewhere, as the disruption controller would count them.
using RestoredDisruptions = std::map<std::string, int32_t, std::less<>>;

// Cordons the nodes and evicts their pods as kubectl drain with --ignore-daemonsets --force
// would: DaemonSet and mirror pods stay; an eviction that a PodDisruptionBudget's
// disruptionsAllowed (or a second budget for the same pod) refuses leaves the pod in place; a
// pod with a controller comes back as a pending copy (same name and spec, no node), a pod
// without one is lost. An unknown node name is InvalidArgument naming it.
util::Result<DrainPlan> applyDrain(const DrainRequest& request, const RestoredDisruptions& restored,
                                   api::ObjectSet& objects);

// `count` copies of `node` named NAME-1, NAME-2... with their own hostname label; a copy's name
// taken by a node of the file is InvalidArgument.
util::Result<void> addNodeCopies(const api::Node& node, size_t count, api::ObjectSet& objects);

// `count` pending copies of `pod` named NAME-1, NAME-2..., created after every pod of the file;
// returns their namespace/name keys.
util::Result<std::vector<std::string>> addPodCopies(const api::Pod& pod, size_t count,
                                                    api::ObjectSet& objects);

// "NODE_FILE[:COUNT]" and "POD_FILE[:COUNT]" of --add-nodes / --add-pods: the path and the count
// (nullopt: search for it). `flag` names the flag in errors.
struct TemplateArg {
  std::string path;
  std::optional<size_t> count;
};
util::Result<TemplateArg> parseTemplateArg(std::string_view flag, std::string_view value);

}  // namespace berth::simulate
