#pragma once
// DefaultPreemption: when a pod fits no node, find the node where evicting the fewest and least
// important lower-priority pods makes it fit (upstream's defaultpreemption plugin and its
// preemption.Evaluator). Each candidate node is a dry run on copies of its NodeInfo and the
// CycleState through the profile's PreFilter extensions and Filters (Handle::runner), so every
// Filter plugin is respected; PodDisruptionBudgets (Handle::objects) are avoided where possible.
// The plugin does no I/O: the PostFilterResult names the node and the victims, and the caller
// evicts them.

#include <cstdint>
#include <string_view>
#include <vector>

#include "pkg/framework/runtime/framework.h"
#include "pkg/plugins/defaultpreemption/args.h"

namespace berth::plugins::defaultpreemption {

// PostFilter messages are prefixed with kMessagePrefix; the nested FitError's nodes carry these.
inline constexpr std::string_view kMessagePrefix = "preemption: ";
inline constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";
inline constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";
inline constexpr std::string_view kNeverPolicy = "not eligible due to preemptionPolicy=Never.";
inline constexpr std::string_view kTerminatingOnNominated =
    "not eligible due to a terminating pod on the nominated node.";
inline constexpr std::string_view kNoCandidate = "no candidate node for preemption";

// `args` as decodeDefaultPreemptionArgs leaves them; PodDisruptionBudgets come from
// handle.objects, the first node to dry-run from handle.random.
util::Result<framework::PluginPtr> newDefaultPreemption(const DefaultPreemptionArgs& args,
                                                        const framework::Handle& handle);

// What evicting pods from one node would take.
struct Victims {
  // Most important first (higher priority, then earlier start).
  std::vector<framework::PodInfoPtr> pods;
  // How many of them a PodDisruptionBudget does not allow to disrupt.
  int64_t numPDBViolations = 0;
};

// Upstream's SelectVictimsOnNode: removes every pod of lower priority than `pod` from `node` (a
// copy, as is `state`), checks that `pod` then fits, and gives back as many of them as still lets
// it fit, those a PodDisruptionBudget protects first, most important first. Success fills `out`;
// otherwise the status says why preemption cannot help on this node. `objects` may be null (no
// PodDisruptionBudgets).
framework::Status selectVictimsOnNode(const framework::PluginRunner& runner,
                                      const framework::ClusterObjects* objects,
                                      framework::CycleState& state, const framework::PodInfo& pod,
                                      framework::NodeInfo& node, Victims& out);

// A candidate node and its victims.
struct Candidate {
  std::string_view node;
  Victims victims;
};

// Upstream's pickOneNodeForPreemption: the index of the best candidate by, in order, fewest
// PodDisruptionBudget violations, lowest most important victim, smallest sum of priorities, fewest
// victims, latest start among the most important victims; still tied, the first. `candidates` is
// not empty.
size_t pickOneNodeForPreemption(const std::vector<Candidate>& candidates);

// Upstream's GetOffsetAndNumCandidates' count: how many candidates are enough among `numNodes`
// potential nodes.
int32_t numCandidates(const DefaultPreemptionArgs& args, int32_t numNodes);

}  // namespace berth::plugins::defaultpreemption
