#include "pkg/plugins/defaultpreemption/default_preemption.h"

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "pkg/framework/snapshot.h"
#include "pkg/labels/selector.h"
#include "pkg/log/log.h"
#include "pkg/plugins/names.h"

namespace berth::plugins::defaultpreemption {
namespace {

using framework::Code;
using framework::PodInfoPtr;
using framework::Status;

// Upstream's PodPriority: a pod without a priority has priority 0.
int32_t priorityOf(const api::Pod& pod) { return pod.spec.priority.value_or(0); }

// A pod not started yet counts as starting now, that is after every pod that has started.
int64_t startOf(const api::Pod& pod) {
  return pod.status.startTime ? pod.status.startTime->micros : std::numeric_limits<int64_t>::max();
}

// Upstream's MoreImportantPod: higher priority, then the earlier start.
bool moreImportant(const PodInfoPtr& a, const PodInfoPtr& b) {
  const int32_t pa = priorityOf(*a->pod);
  const int32_t pb = priorityOf(*b->pod);
  if (pa != pb) return pa > pb;
  return startOf(*a->pod) < startOf(*b->pod);
}

// Deleted with the DisruptionTarget condition a scheduler's preemption sets.
bool terminatingByPreemption(const api::Pod& pod) {
  if (!pod.metadata.deletionTimestamp) return false;
  for (const auto& c : pod.status.conditions) {
    if (c.type == "DisruptionTarget") {
      return c.status == "True" && c.reason == "PreemptionByScheduler";
    }
  }
  return false;
}

// The part of spec.selector that does not parse, and why: the first matchLabels entry or
// matchExpressions item that fails on its own (`whole` is the error of the selector as a whole).
std::pair<std::string, std::string> invalidSelectorPart(const api::LabelSelector& selector,
                                                        const std::string& whole) {
  for (const auto& [key, value] : selector.matchLabels) {
    const api::LabelSelector one{.matchLabels = {{key, value}}, .matchExpressions = {}};
    if (auto s = labels::Selector::fromLabelSelector(one); !s.ok()) {
      return {"spec.selector.matchLabels", s.error().message};
    }
  }
  for (size_t i = 0; i < selector.matchExpressions.size(); ++i) {
    const api::LabelSelector one{.matchLabels = {},
                                 .matchExpressions = {selector.matchExpressions[i]}};
    if (auto s = labels::Selector::fromLabelSelector(one); !s.ok()) {
      return {"spec.selector.matchExpressions[" + std::to_string(i) + "]", s.error().message};
    }
  }
  return {"spec.selector", whole};
}

// Logs a PodDisruptionBudget whose selector does not parse once per process (per object and
// problem), not once per preemption attempt and candidate node.
void warnInvalidBudgetSelector(const api::PodDisruptionBudget& pdb, const std::string& whole) {
  static std::mutex mu;
  static std::set<std::tuple<std::string, std::string, std::string, std::string>> warned;
  auto [field, why] = invalidSelectorPart(*pdb.selector, whole);
  {
    std::lock_guard lock(mu);
    if (!warned
             .emplace(log::ref(pdb.metadata.namespace_, pdb.metadata.name), pdb.metadata.uid, field,
                      why)
             .second) {
      return;
    }
  }
  log::warning(
      "PodDisruptionBudget has an invalid selector; preemption treats it as matching no "
      "pod",
      {{"podDisruptionBudget", log::ref(pdb.metadata.namespace_, pdb.metadata.name)},
       {"field", field},
       {"error", why}});
}

// The disruptions each PodDisruptionBudget of a namespace still allows, counted down as victims
// are chosen (upstream's filterPodsWithPDBViolation). A PDB whose selector does not parse (logged
// once), or is empty, matches no pod.
class DisruptionBudgets {
 public:
  explicit DisruptionBudgets(const framework::ClusterObjects* objects) : objects_(objects) {}

  // Takes one disruption from every budget that covers the pod; false when one goes below zero.
  bool disrupt(const api::Pod& pod) {
    if (pod.metadata.labels.empty() || objects_ == nullptr) return true;
    bool allowed = true;
    for (Budget& b : inNamespace(pod.metadata.namespace_)) {
      if (!b.selector || b.selector->empty() || !b.selector->matches(pod.metadata.labels)) continue;
      // Already being disrupted: the API server counted it.
      if (b.pdb->disruptedPods.contains(pod.metadata.name)) continue;
      if (--b.allowed < 0) allowed = false;
    }
    return allowed;
  }

 private:
  struct Budget {
    api::PodDisruptionBudgetPtr pdb;
    std::optional<labels::Selector> selector;
    int32_t allowed = 0;
  };

  std::vector<Budget>& inNamespace(const std::string& ns) {
    auto it = by_namespace_.find(ns);
    if (it != by_namespace_.end()) return it->second;
    std::vector<Budget> budgets;
    for (auto& pdb : objects_->listPodDisruptionBudgets(ns)) {
      Budget b{.pdb = pdb, .selector = std::nullopt, .allowed = pdb->disruptionsAllowed};
      if (pdb->selector) {
        if (auto s = labels::Selector::fromLabelSelector(*pdb->selector); s.ok()) {
          b.selector = std::move(*s);
        } else {
          warnInvalidBudgetSelector(*pdb, s.error().message);
        }
      }
      budgets.push_back(std::move(b));
    }
    return by_namespace_.emplace(ns, std::move(budgets)).first->second;
  }

  const framework::ClusterObjects* objects_;
  std::map<std::string, std::vector<Budget>, std::less<>> by_namespace_;
};

// A failed PreFilter extension is the plugin's error, not a verdict on the node.
Status asError(const Status& s) { return Status::error(s.message()); }

class DefaultPreemption final : public framework::PostFilterPlugin {
 public:
  DefaultPreemption(const DefaultPreemptionArgs& args, const framework::Handle& handle)
      : args_(args),
        runner_(*handle.runner),
        objects_(handle.objects),
        random_(handle.random != nullptr ? *handle.random : util::defaultRandom()) {}

  std::string_view name() const override { return names::kDefaultPreemption; }

  Status postFilter(framework::CycleState& state, const framework::PodInfo& pod,
                    const framework::Diagnosis& diagnosis,
                    framework::PostFilterResult& result) const override {
    Status s = preempt(state, pod, diagnosis, result);
    const std::string message = s.message();
    if (message.empty()) return s;
    return Status(s.code(), std::string(kMessagePrefix) + message);
  }

 private:
  // Upstream's Evaluator.Preempt, without the API writes.
  Status preempt(framework::CycleState& state, const framework::PodInfo& pod,
                 const framework::Diagnosis& diagnosis, framework::PostFilterResult& result) const {
    const framework::Snapshot* snapshot = state.snapshot();
    if (snapshot == nullptr) return Status::error("no snapshot in the cycle state");
    std::unordered_map<std::string_view, const Status*> statuses;
    for (const auto& [node, status] : diagnosis.nodeToStatus) statuses.emplace(node, &status);
    auto codeOf = [&](std::string_view node) {
      if (auto it = statuses.find(node); it != statuses.end()) return it->second->code();
      return diagnosis.absentNodesStatus ? diagnosis.absentNodesStatus->code()
                                         : Code::UnschedulableAndUnresolvable;
    };

    if (Status s = eligible(*snapshot, pod, codeOf); !s.isSuccess()) return s;
    if (snapshot->numNodes() == 0) return Status::error("no nodes available");

    // Only a node some pod's absence could fix: Unschedulable, never UnschedulableAndUnresolvable.
    std::vector<const framework::NodeInfo*> potential;
    for (const auto& info : snapshot->nodeInfos()) {
      if (codeOf(info->name()) == Code::Unschedulable) potential.push_back(info.get());
    }
    framework::FitError notHelpful;
    notHelpful.numAllNodes = static_cast<int>(snapshot->numNodes());
    notHelpful.diagnosis.absentNodesStatus =
        Status(Code::UnschedulableAndUnresolvable, kNotHelpful);
    if (potential.empty()) {
      result.clearNomination = true;
      return Status(Code::Unschedulable, notHelpful.message());
    }

    const auto n = static_cast<int32_t>(potential.size());
    const auto offset = std::min(n - 1, static_cast<int32_t>(random_.uniform() * n));
    const int32_t enough = numCandidates(args_, n);
    std::vector<Candidate> nonViolating;
    std::vector<Candidate> violating;
    std::string firstError;
    for (int32_t i = 0; i < n; ++i) {
      if (!nonViolating.empty() &&
          static_cast<int32_t>(nonViolating.size() + violating.size()) >= enough) {
        break;
      }
      const framework::NodeInfo& info = *potential[static_cast<size_t>((offset + i) % n)];
      framework::NodeInfo node = info;
      framework::CycleState stateCopy = state.clone();
      Victims victims;
      Status s = selectVictimsOnNode(runner_, objects_, stateCopy, pod, node, victims);
      if (s.isSuccess() && !victims.pods.empty()) {
        auto& list = victims.numPDBViolations == 0 ? nonViolating : violating;
        list.push_back({info.name(), std::move(victims)});
        continue;
      }
      if (s.isSuccess()) {
        s = Status::error("expected at least one victim pod on node \"" + info.name() + "\"");
      }
      if (s.code() == Code::Error && firstError.empty()) firstError = s.message();
      notHelpful.diagnosis.nodeToStatus.emplace_back(info.name(), std::move(s));
    }
    std::vector<Candidate> candidates = std::move(nonViolating);
    for (auto& c : violating) candidates.push_back(std::move(c));
    if (candidates.empty()) {
      if (!firstError.empty()) return Status::error(firstError);
      result.clearNomination = true;
      return Status(Code::Unschedulable, notHelpful.message());
    }
    Candidate& best = candidates[pickOneNodeForPreemption(candidates)];
    result.nominatedNode = std::string(best.node);
    result.victims = std::move(best.victims.pods);
    return Status::success();
  }

  // Upstream's PodEligibleToPreemptOthers.
  template <typename CodeOf>
  Status eligible(const framework::Snapshot& snapshot, const framework::PodInfo& pod,
                  const CodeOf& codeOf) const {
    if (pod->spec.preemptionPolicy == "Never") return Status(Code::Unschedulable, kNeverPolicy);
    const std::string& nominated = pod->status.nominatedNodeName;
    // A nominated node the filters now rule out entirely is preempted for again.
    if (nominated.empty() || codeOf(nominated) == Code::UnschedulableAndUnresolvable) {
      return Status::success();
    }
    // A victim of an earlier preemption is still terminating there: wait for it.
    if (const framework::NodeInfo* node = snapshot.get(nominated)) {
      const int32_t priority = priorityOf(*pod);
      for (const auto& p : node->pods()) {
        if (priorityOf(*p->pod) < priority && terminatingByPreemption(*p->pod)) {
          return Status(Code::Unschedulable, kTerminatingOnNominated);
        }
      }
    }
    return Status::success();
  }

  DefaultPreemptionArgs args_;
  const framework::PluginRunner& runner_;
  const framework::ClusterObjects* objects_;
  util::Random& random_;
};

}  // namespace

util::Result<framework::PluginPtr> newDefaultPreemption(const DefaultPreemptionArgs& args,
                                                        const framework::Handle& handle) {
  if (handle.runner == nullptr) {
    return util::invalidArgument("DefaultPreemption needs the framework's plugin runner");
  }
  return framework::PluginPtr(std::make_unique<DefaultPreemption>(args, handle));
}

Status selectVictimsOnNode(const framework::PluginRunner& runner,
                           const framework::ClusterObjects* objects, framework::CycleState& state,
                           const framework::PodInfo& pod, framework::NodeInfo& node, Victims& out) {
  auto remove = [&](const PodInfoPtr& p) {
    if (!node.removePod(*p->pod)) {
      return Status::error("pod " + api::podKey(*p->pod) + " not found on node " + node.name());
    }
    Status s = runner.runPreFilterExtensionRemovePod(state, pod, *p, node);
    return s.isSuccess() ? s : asError(s);
  };
  auto add = [&](const PodInfoPtr& p) {
    node.addPod(p);
    Status s = runner.runPreFilterExtensionAddPod(state, pod, *p, node);
    return s.isSuccess() ? s : asError(s);
  };

  const int32_t priority = priorityOf(*pod);
  std::vector<PodInfoPtr> potential;
  for (const auto& p : node.pods()) {
    if (priorityOf(*p->pod) < priority) potential.push_back(p);
  }
  if (potential.empty()) return Status(Code::UnschedulableAndUnresolvable, kNoVictims);
  for (const auto& p : potential) {
    if (Status s = remove(p); !s.isSuccess()) return s;
  }
  // Not even without every lower-priority pod: this node cannot be made to fit (affinity to a
  // victim is not considered, as upstream).
  if (Status s = runner.runFilterPluginsWithNominatedPods(state, pod, node); !s.isSuccess()) {
    return s;
  }

  std::stable_sort(potential.begin(), potential.end(), moreImportant);
  std::vector<PodInfoPtr> violating;
  std::vector<PodInfoPtr> nonViolating;
  DisruptionBudgets budgets(objects);
  for (const auto& p : potential) {
    (budgets.disrupt(*p->pod) ? nonViolating : violating).push_back(p);
  }
  // Give back as many pods as still lets the pod fit, those a budget protects first, the most
  // important first; the others become victims.
  auto reprieve = [&](const PodInfoPtr& p, bool& evicted) {
    evicted = false;
    if (Status s = add(p); !s.isSuccess()) return s;
    if (runner.runFilterPluginsWithNominatedPods(state, pod, node).isSuccess()) {
      return Status::success();
    }
    evicted = true;
    out.pods.push_back(p);
    return remove(p);
  };
  for (const auto& p : violating) {
    bool evicted = false;
    if (Status s = reprieve(p, evicted); !s.isSuccess()) return s;
    if (evicted) ++out.numPDBViolations;
  }
  for (const auto& p : nonViolating) {
    bool evicted = false;
    if (Status s = reprieve(p, evicted); !s.isSuccess()) return s;
  }
  if (!violating.empty() && !nonViolating.empty()) {
    std::stable_sort(out.pods.begin(), out.pods.end(), moreImportant);
  }
  return Status::success();
}

size_t pickOneNodeForPreemption(const std::vector<Candidate>& candidates) {
  using Score = int64_t (*)(const Victims&);
  static constexpr Score kCriteria[] = {
      // Fewest PodDisruptionBudget violations.
      [](const Victims& v) { return -v.numPDBViolations; },
      // The lowest priority among the most important victims.
      [](const Victims& v) { return -static_cast<int64_t>(priorityOf(*v.pods.front()->pod)); },
      // The smallest sum of priorities, each shifted to be positive.
      [](const Victims& v) {
        int64_t sum = 0;
        for (const auto& p : v.pods) {
          sum += static_cast<int64_t>(priorityOf(*p->pod)) +
                 static_cast<int64_t>(std::numeric_limits<int32_t>::max()) + 1;
        }
        return -sum;
      },
      // Fewest victims.
      [](const Victims& v) { return -static_cast<int64_t>(v.pods.size()); },
      // The latest start among the victims of the highest priority (upstream's
      // GetEarliestPodStartTime): evicting pods that ran shortest loses the least work.
      [](const Victims& v) {
        int32_t top = priorityOf(*v.pods.front()->pod);
        int64_t earliest = startOf(*v.pods.front()->pod);
        for (const auto& p : v.pods) {
          const int32_t priority = priorityOf(*p->pod);
          if (priority > top) {
            top = priority;
            earliest = startOf(*p->pod);
          } else if (priority == top) {
            earliest = std::min(earliest, startOf(*p->pod));
          }
        }
        return earliest;
      },
  };
  std::vector<size_t> tied(candidates.size());
  for (size_t i = 0; i < tied.size(); ++i) tied[i] = i;
  for (Score score : kCriteria) {
    std::vector<size_t> best;
    int64_t max = std::numeric_limits<int64_t>::min();
    for (size_t i : tied) {
      const int64_t s = score(candidates[i].victims);
      if (s > max) {
        max = s;
        best.clear();
      }
      if (s == max) best.push_back(i);
    }
    if (best.size() == 1) return best.front();
    tied = std::move(best);
  }
  return tied.front();
}

int32_t numCandidates(const DefaultPreemptionArgs& args, int32_t numNodes) {
  int32_t n =
      static_cast<int32_t>(static_cast<int64_t>(numNodes) * args.minCandidateNodesPercentage / 100);
  n = std::max(n, args.minCandidateNodesAbsolute);
  return std::min(n, numNodes);
}

}  // namespace berth::plugins::defaultpreemption
