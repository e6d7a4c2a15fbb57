#include "pkg/simulate/simulator.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "pkg/algorithm/generic_scheduler.h"
#include "pkg/framework/cluster_objects.h"
#include "pkg/framework/snapshot.h"
#include "pkg/plugins/defaultpreemption/default_preemption.h"
#include "pkg/plugins/names.h"
#include "pkg/plugins/podtopologyspread/constraints.h"
#include "pkg/plugins/registry.h"
#include "pkg/resource/quantity.h"

namespace berth::simulate {
namespace {

using framework::runtime::Framework;

// Each filter plugin's verdict on one node, not only the first rejection's: what a cycle that did
// not stop at the first would have said.
std::vector<FilterVerdict> everyFilter(const Framework& fw, const framework::CycleState& state,
                                       const framework::PodInfo& pod,
                                       const framework::NodeInfo& node) {
  std::unordered_map<std::string_view, const framework::FilterPlugin*> running;
  for (const auto* plugin : fw.filtersToRun(state)) running.emplace(plugin->name(), plugin);
  std::vector<FilterVerdict> verdicts;
  const auto points = fw.pluginsByExtensionPoint();
  const auto filters = points.find("Filter");
  if (filters == points.end()) return verdicts;
  for (const std::string& name : filters->second) {
    FilterVerdict v{.plugin = name};
    const auto it = running.find(name);
    if (it == running.end()) {
      v.skipped = true;
    } else if (framework::Status s = it->second->filter(state, pod, node); !s.isSuccess()) {
      v.reasons = s.reasons();
      if (v.reasons.empty()) v.reasons.push_back(s.message());
    }
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

// Explains every node of the snapshot for one decision, in snapshot order; with `fw`, every
// filter plugin's verdict on the nodes the cycle filtered.
std::vector<NodeExplanation> explain(const framework::Snapshot& snapshot,
                                     const algorithm::ScheduleOutcome& out, const Framework* fw,
                                     const framework::CycleState& state,
                                     const framework::PodInfo& pod) {
  std::unordered_map<std::string_view, const framework::Status*> rejected;
  for (const auto& [name, status] : out.diagnosis.nodeToStatus) rejected.emplace(name, &status);
  std::unordered_map<std::string_view, size_t> feasibleIndex;
  for (size_t i = 0; i < out.feasible.size(); ++i)
    feasibleIndex.emplace(out.feasible[i]->name(), i);

  std::vector<NodeExplanation> nodes;
  for (const auto& info : snapshot.nodeInfos()) {
    NodeExplanation e;
    e.name = info->name();
    if (auto it = feasibleIndex.find(e.name); it != feasibleIndex.end()) {
      e.feasible = true;
      const auto& table = out.scores;
      for (size_t k = 0; k < table.plugins.size() && !table.totals.empty(); ++k) {
        e.scores.emplace_back(std::string(table.plugins[k]), table.scores[k][it->second]);
      }
      if (!table.totals.empty()) e.total = table.totals[it->second];
    } else if (auto r = rejected.find(e.name); r != rejected.end()) {
      e.reasons = r->second->reasons();
      e.plugin = r->second->plugin();
    } else if (out.diagnosis.absentNodesStatus) {
      e.reasons = out.diagnosis.absentNodesStatus->reasons();
      e.plugin = out.diagnosis.absentNodesStatus->plugin();
    } else {
      e.evaluated = false;
    }
    const bool filtered = e.feasible || rejected.contains(e.name);
    if (fw != nullptr && filtered && out.diagnosis.preFilterMsg.empty()) {
      e.filters = everyFilter(*fw, state, pod, *info);
    }
    nodes.push_back(std::move(e));
  }
  return nodes;
}

// What preemption would do on each node for a pod that fits nowhere, by node name: the victims
// of a dry run like DefaultPreemption's (on every node, not only until enough candidates), or why
// evicting pods cannot make room there.
std::unordered_map<std::string_view, std::string> explainPreemption(
    const Framework& fw, const framework::ClusterObjects& objects,
    const framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& snapshot, const framework::Diagnosis& diagnosis,
    const std::string& chosen) {
  namespace dp = plugins::defaultpreemption;
  std::unordered_map<std::string_view, framework::Code> codes;
  for (const auto& [name, status] : diagnosis.nodeToStatus) codes.emplace(name, status.code());
  std::unordered_map<std::string_view, std::string> verdicts;
  for (const auto& info : snapshot.nodeInfos()) {
    auto it = codes.find(info->name());
    const framework::Code code = it != codes.end() ? it->second
                                 : diagnosis.absentNodesStatus
                                     ? diagnosis.absentNodesStatus->code()
                                     : framework::Code::UnschedulableAndUnresolvable;
    std::string& verdict = verdicts[info->name()];
    if (code != framework::Code::Unschedulable) {
      verdict = "cannot help: evicting pods does not lift this rejection";
      continue;
    }
    framework::NodeInfo node = *info;
    framework::CycleState copy = state.clone();
    dp::Victims victims;
    framework::Status s = dp::selectVictimsOnNode(fw, &objects, copy, pod, node, victims);
    if (!s.isSuccess()) {
      verdict =
          s.message() == dp::kNoVictims
              ? "cannot help: no lower-priority pods to preempt"
              : "cannot help: still does not fit without its lower-priority pods: " + s.message();
      continue;
    }
    verdict = "would preempt ";
    for (size_t i = 0; i < victims.pods.size(); ++i) {
      verdict += (i ? ", " : "") + api::podKey(*victims.pods[i]->pod);
    }
    if (victims.numPDBViolations > 0) {
      verdict +=
          " (" + std::to_string(victims.numPDBViolations) + " against its PodDisruptionBudget)";
    }
    if (info->name() == chosen) verdict += " (chosen)";
  }
  return verdicts;
}

// Whether DefaultPreemption refused the pod before looking at any node.
bool ineligible(const framework::Status& postFilter) {
  namespace dp = plugins::defaultpreemption;
  const std::string message = postFilter.message();
  for (std::string_view reason : {dp::kNeverPolicy, dp::kTerminatingOnNominated}) {
    if (message == std::string(dp::kMessagePrefix) + std::string(reason)) return true;
  }
  return false;
}

bool runsDefaultPreemption(const Framework& fw) {
  const auto points = fw.pluginsByExtensionPoint();
  const auto it = points.find("PostFilter");
  return it != points.end() && std::find(it->second.begin(), it->second.end(),
                                         plugins::names::kDefaultPreemption) != it->second.end();
}

void addClusterObjects(const api::ObjectSet& objects, framework::ClusterObjectStore& store) {
  for (const auto& o : objects.namespaces) store.upsert(o);
  for (const auto& o : objects.services) store.upsert(o);
  for (const auto& o : objects.replicaSets) store.upsert(o);
  for (const auto& o : objects.statefulSets) store.upsert(o);
  for (const auto& o : objects.replicationControllers) store.upsert(o);
  for (const auto& o : objects.podDisruptionBudgets) store.upsert(o);
  for (const auto& o : objects.persistentVolumeClaims) store.upsert(o);
  for (const auto& o : objects.persistentVolumes) store.upsert(o);
  for (const auto& o : objects.storageClasses) store.upsert(o);
  for (const auto& o : objects.csiNodes) store.upsert(o);
  for (const auto& o : objects.csiDrivers) store.upsert(o);
  for (const auto& o : objects.csiStorageCapacities) store.upsert(o);
}

// The first field of the pod's inter-pod constraints that no API server would have accepted: the
// daemon reports it as a PreFilter error, simulate as bad input in the cluster file.
std::optional<std::string> interPodConstraintProblem(const framework::PodInfo& pod) {
  if (auto r = plugins::podtopologyspread::validatePodConstraints(*pod); !r.ok()) {
    return r.error().message;
  }
  if (const std::string& error = pod.affinityTerms().error; !error.empty()) return error;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ignoredKinds(const std::vector<std::string>& skipped) {
  if (skipped.empty()) return std::nullopt;
  std::map<std::string, size_t> byKind;
  for (const std::string& entry : skipped) ++byKind[entry.substr(0, entry.find(' '))];
  std::string line = "ignored " + std::to_string(skipped.size()) +
                     (skipped.size() == 1 ? " item" : " items") +
                     " of kinds simulate does not use: ";
  bool first = true;
  for (const auto& [kind, count] : byKind) {
    if (!first) line += ", ";
    first = false;
    line += kind + " (" + std::to_string(count) + ")";
  }
  return line;
}

std::optional<std::string> missingClaimsNote(const api::ObjectSet& objects) {
  if (!objects.persistentVolumeClaims.empty()) return std::nullopt;
  size_t pods = 0;
  for (const api::PodPtr& pod : objects.pods) {
    const bool usesClaims = std::any_of(
        pod->spec.volumes.begin(), pod->spec.volumes.end(),
        [](const api::Volume& v) { return !v.claimName.empty() || v.source == "ephemeral"; });
    if (usesClaims && !api::isAssigned(*pod)) ++pods;
  }
  if (pods == 0) return std::nullopt;
  return std::to_string(pods) + (pods == 1 ? " pending pod uses" : " pending pods use") +
         " PersistentVolumeClaims, but the cluster file has none (export them too: kubectl get "
         "nodes,pods,pvc,pv,storageclass,csinode -A -o json)";
}

util::Result<Report> run(const api::ObjectSet& objects, const config::Configuration& config,
                         const Options& options, util::Parallelizer& parallelizer) {
  auto registry = plugins::makeInTreeRegistry();
  framework::ClusterObjectStore clusterObjects;
  addClusterObjects(objects, clusterObjects);
  // Nothing is bound: placements are assumed in the snapshot. The seed fixes preemption's draws
  // too, so that a run repeats.
  util::SeededRandom random(options.seed);
  framework::Handle handle{.binder = nullptr, .objects = &clusterObjects, .random = &random};
  std::map<std::string, std::unique_ptr<Framework>, std::less<>> profiles;
  for (const auto& p : config.profiles) {
    auto fw = Framework::create(registry, p, handle);
    if (!fw.ok()) return fw.error();
    profiles.emplace(p.schedulerName, std::move(*fw));
  }
  if (!options.allPending && !profiles.contains(options.schedulerName)) {
    return util::invalidArgument("no profile for scheduler name \"" + options.schedulerName +
                                 "\" in the configuration");
  }
  const Framework& firstProfile = *profiles.at(config.profiles.front().schedulerName);

  Report report;
  std::vector<framework::PodInfoPtr> bound;
  std::vector<framework::QueuedPodInfo> pending;
  for (const auto& pod : objects.pods) {
    if (api::isTerminal(*pod)) continue;
    if (!pod->spec.nodeName.empty()) {
      bound.push_back(framework::makePodInfo(pod));
    } else if (options.allPending || pod->spec.schedulerName == options.schedulerName ||
               options.alsoPlace.contains(api::podKey(*pod))) {
      framework::PodInfoPtr info = framework::makePodInfo(pod);
      if (auto problem = interPodConstraintProblem(*info)) {
        return util::invalidArgument("pod " + api::podKey(*pod) + ": " + *problem);
      }
      pending.push_back(
          {std::move(info), pod->metadata.creationTimestamp.value_or(api::Timestamp{}), 0});
    }
  }
  std::vector<framework::PodInfoPtr> orphans;
  framework::Snapshot snapshot = framework::Snapshot::build(objects.nodes, bound, &orphans);
  for (const auto& p : orphans) {
    report.warnings.push_back("pod " + api::podKey(*p->pod) + " is bound to node \"" +
                              p->pod->spec.nodeName + "\", which is not in the file");
  }
  report.numNodes = static_cast<int>(snapshot.numNodes());

  // Queue order; a stable sort keeps file order among equals.
  std::stable_sort(pending.begin(), pending.end(),
                   [&](const auto& a, const auto& b) { return firstProfile.less(a, b); });

  algorithm::GenericScheduler scheduler(parallelizer, options.seed,
                                        config.percentageOfNodesToScore);
  for (const auto& queued : pending) {
    const api::Pod& pod = *queued.podInfo->pod;
    PodResult result;
    result.pod = api::podKey(pod);
    auto it = profiles.find(pod.spec.schedulerName);
    const Framework& fw = it != profiles.end() ? *it->second : firstProfile;
    result.profile = fw.profileName();

    if (pod.metadata.deletionTimestamp) {
      result.message = "skip schedule deleting pod: " + result.pod;
    } else if (!pod.spec.schedulingGates.empty()) {
      result.message = "Scheduling is blocked due to non-empty scheduling gates";
    } else {
      framework::CycleState state;
      auto out = scheduler.schedulePod(fw, state, *queued.podInfo, snapshot);
      std::string node = out.node;
      framework::PostFilterResult preempted;
      std::unordered_map<std::string_view, std::string> preemption;
      if (out.fitError) {
        if (options.preemption && fw.hasPostFilterPlugins()) {
          framework::Status s =
              fw.runPostFilterPlugins(state, *queued.podInfo, out.fitError->diagnosis, preempted);
          out.fitError->diagnosis.postFilterMsg = s.message();
          if (options.explain && runsDefaultPreemption(fw) && !ineligible(s)) {
            preemption = explainPreemption(fw, clusterObjects, state, *queued.podInfo, snapshot,
                                           out.fitError->diagnosis, preempted.nominatedNode);
          }
          if (s.isSuccess()) node = preempted.nominatedNode;
        }
        result.message = out.fitError->message();
      } else if (!out.status.isSuccess()) {
        result.message = out.status.message();
      }
      if (options.explain) {
        result.nodes =
            explain(snapshot, out, options.allFilters ? &fw : nullptr, state, *queued.podInfo);
        for (auto& n : result.nodes) {
          if (auto verdict = preemption.find(n.name); verdict != preemption.end()) {
            n.preemption = std::move(verdict->second);
          }
        }
      }
      if (!node.empty()) {
        result.node = node;
        // Evict, then assume: the next pod sees this one on its node, and not its victims.
        for (const auto& victim : preempted.victims) {
          if (!snapshot.removePod(node, *victim->pod)) continue;
          result.victims.push_back(api::podKey(*victim->pod));
          report.evictions.push_back({api::podKey(*victim->pod), node, result.pod});
        }
        if (!preempted.nominatedNode.empty()) result.nominatedNode = node;
        auto assumed = std::make_shared<api::Pod>(pod);
        assumed->spec.nodeName = node;
        snapshot.addPod(node, framework::makePodInfo(std::move(assumed)));
      }
    }
    report.results.push_back(std::move(result));
  }
  for (const auto& info : snapshot.nodeInfos()) {
    report.allocation.push_back({.name = info->name(),
                                 .cpuRequested = info->requested().milliCPU,
                                 .cpuAllocatable = info->allocatable().milliCPU,
                                 .memoryRequested = info->requested().memory,
                                 .memoryAllocatable = info->allocatable().memory,
                                 .pods = static_cast<int64_t>(info->pods().size()),
                                 .podsAllocatable = info->allocatable().allowedPodNumber});
  }
  return report;
}

namespace {

size_t placedCount(const Report& report) {
  return static_cast<size_t>(std::count_if(report.results.begin(), report.results.end(),
                                           [](const PodResult& r) { return r.node.has_value(); }));
}

// How many nodes the placed pods went to.
size_t nodesUsed(const Report& report) {
  std::set<std::string_view> used;
  for (const PodResult& r : report.results) {
    if (r.node) used.insert(*r.node);
  }
  return used.size();
}

// Pod slots left in the cluster (allocatable pods less the bound pods): no more copies of a pod
// can fit than that; kMaxAddedPods when no node states its pod count.
size_t freePodSlots(const api::ObjectSet& objects) {
  int64_t slots = 0;
  bool stated = false;
  for (const auto& node : objects.nodes) {
    if (auto it = node->status.allocatable.find("pods"); it != node->status.allocatable.end()) {
      slots += std::max<int64_t>(0, it->second.value());
      stated = true;
    }
  }
  if (!stated) return kMaxAddedPods;
  for (const auto& pod : objects.pods) {
    if (!pod->spec.nodeName.empty() && !api::isTerminal(*pod)) --slots;
  }
  return static_cast<size_t>(std::clamp<int64_t>(slots, 0, kMaxAddedPods));
}

}  // namespace

util::Result<Report> runWhatIfs(const api::ObjectSet& objects, const WhatIfs& whatIfs,
                                const config::Configuration& config, const Options& options,
                                util::Parallelizer& parallelizer) {
  if (whatIfs.nodeTemplate && !whatIfs.nodeCount && whatIfs.podTemplate && !whatIfs.podCount) {
    return util::invalidArgument(
        "--add-nodes and --add-pods cannot both search for their count: give one of them a COUNT");
  }
  // One run with `nodes` copies of the node template and `pods` copies of the pod template;
  // `copies` gets the pod copies' keys.
  auto once = [&](size_t nodes, size_t pods, const RestoredDisruptions& restored,
                  std::vector<std::string>* copies) -> util::Result<Report> {
    api::ObjectSet set = objects;  // shares the objects; the what-ifs replace what they change
    Options o = options;
    std::optional<DrainPlan> drain;
    if (whatIfs.drain) {
      auto plan = applyDrain(*whatIfs.drain, restored, set);
      if (!plan.ok()) return plan.error();
      o.alsoPlace.insert(plan->moved.begin(), plan->moved.end());
      drain = std::move(*plan);
    }
    if (whatIfs.nodeTemplate) {
      if (auto r = addNodeCopies(*whatIfs.nodeTemplate, nodes, set); !r.ok()) return r.error();
    }
    if (whatIfs.podTemplate) {
      auto keys = addPodCopies(*whatIfs.podTemplate, pods, set);
      if (!keys.ok()) return keys.error();
      o.alsoPlace.insert(keys->begin(), keys->end());
      if (copies) *copies = std::move(*keys);
    }
    auto report = run(set, config, o, parallelizer);
    if (report.ok()) report->drain = std::move(drain);
    return report;
  };
  // kubectl drain retries an eviction a budget refuses until the budget allows it again, which
  // it does once an evicted pod's replacement runs elsewhere: each replacement placed gives its
  // budget one disruption back, until no more are given back.
  auto attempt = [&](size_t nodes, size_t pods,
                     std::vector<std::string>* copies) -> util::Result<Report> {
    RestoredDisruptions restored;
    for (;;) {
      auto report = once(nodes, pods, restored, copies);
      if (!report.ok() || !report->drain || report->drain->blocked.empty()) return report;
      RestoredDisruptions placed;
      for (const PodResult& r : report->results) {
        const auto budget = report->drain->budgetOf.find(r.pod);
        if (r.node && budget != report->drain->budgetOf.end()) ++placed[budget->second];
      }
      // Only ever more: the loop ends, and a budget never takes back what it gave.
      bool more = false;
      for (const auto& [budget, n] : placed) {
        if (int32_t& given = restored[budget]; n > given) {
          given = n;
          more = true;
        }
      }
      if (!more) return report;
    }
  };

  size_t nodes = whatIfs.nodeCount.value_or(0);
  std::optional<AddedNodes> addedNodes;
  if (whatIfs.nodeTemplate) {
    addedNodes = AddedNodes{.name = whatIfs.nodeTemplate->metadata.name, .count = nodes};
  }
  size_t pods = whatIfs.podCount.value_or(0);
  std::optional<AddedPods> addedPods;
  if (whatIfs.podTemplate) {
    addedPods = AddedPods{.name = whatIfs.podTemplate->metadata.name, .requested = pods};
  }

  if (whatIfs.nodeTemplate && !whatIfs.nodeCount) {
    // The smallest count that places as many pods as the bound does: each pod that fits an empty
    // such node needs at most one, so the pods left pending without any bound the search.
    auto none = attempt(0, pods, nullptr);
    if (!none.ok()) return none.error();
    const size_t pending = none->results.size() - placedCount(*none);
    addedNodes->searched = true;
    addedNodes->bound = std::min(kMaxAddedNodes, pending);
    if (addedNodes->bound > 0) {
      auto most = attempt(addedNodes->bound, pods, nullptr);
      if (!most.ok()) return most.error();
      const size_t target = placedCount(*most);
      if (target == placedCount(*none)) {
        addedNodes->helps = false;
      } else {
        size_t lo = 1;
        size_t hi = addedNodes->bound;
        while (lo < hi) {
          const size_t mid = lo + (hi - lo) / 2;
          auto r = attempt(mid, pods, nullptr);
          if (!r.ok()) return r.error();
          if (placedCount(*r) >= target) {
            hi = mid;
          } else {
            lo = mid + 1;
          }
        }
        nodes = lo;
      }
    }
    addedNodes->count = nodes;
  }

  std::vector<std::string> copies;
  if (whatIfs.podTemplate && !whatIfs.podCount) {
    // Copies until the first that fits nowhere, as the daemon would place them one by one; then
    // the run again with only the copies up to that one, so later copies change nothing.
    api::ObjectSet withNodes = objects;
    if (whatIfs.nodeTemplate) {
      if (auto r = addNodeCopies(*whatIfs.nodeTemplate, nodes, withNodes); !r.ok()) {
        return r.error();
      }
    }
    auto all = attempt(nodes, freePodSlots(withNodes) + 1, &copies);
    if (!all.ok()) return all.error();
    const std::set<std::string, std::less<>> copyKeys(copies.begin(), copies.end());
    size_t fit = 0;
    std::optional<std::string> stop;
    for (const PodResult& r : all->results) {
      if (!copyKeys.contains(r.pod)) continue;
      if (!r.node) {
        stop = r.message;
        break;
      }
      ++fit;
    }
    pods = stop ? fit + 1 : fit;
    addedPods->placed = fit;
    addedPods->stoppedBy = stop.value_or("");
  }

  auto report = attempt(nodes, pods, &copies);
  if (!report.ok()) return report.error();
  if (addedPods && whatIfs.podCount) {
    const std::set<std::string, std::less<>> copyKeys(copies.begin(), copies.end());
    for (const PodResult& r : report->results) {
      if (!copyKeys.contains(r.pod)) continue;
      if (!r.node) {
        if (addedPods->stoppedBy.empty()) addedPods->stoppedBy = r.message;
        continue;
      }
      ++addedPods->placed;
    }
  }
  report->addedNodes = std::move(addedNodes);
  report->addedPods = std::move(addedPods);
  return report;
}

namespace {

// One line on the drain: "drain of 2 nodes: 5 pods move, 1 stays pending, 1 blocked by
// PodDisruptionBudget web-pdb, 1 lost".
std::string drainVerdict(const Report& report) {
  const DrainPlan& plan = *report.drain;
  const std::set<std::string, std::less<>> moved(plan.moved.begin(), plan.moved.end());
  size_t placed = 0;
  size_t pending = 0;
  for (const PodResult& r : report.results) {
    if (!moved.contains(r.pod)) continue;
    ++(r.node ? placed : pending);
  }
  auto pods = [](size_t n, std::string_view one, std::string_view many) {
    return std::to_string(n) + " " + std::string(n == 1 ? one : many);
  };
  std::string line = "drain of " + pods(plan.nodes.size(), "node", "nodes") + ": " +
                     pods(placed, "pod moves", "pods move") + ", " +
                     pods(pending, "stays pending", "stay pending");
  if (!plan.blocked.empty()) {
    std::set<std::string> budgets;
    for (const auto& b : plan.blocked) budgets.insert(b.budgets.begin(), b.budgets.end());
    line += ", " + std::to_string(plan.blocked.size()) + " blocked by PodDisruptionBudget";
    if (budgets.size() > 1) line += "s";
    bool first = true;
    for (const std::string& b : budgets) {
      line += (first ? " " : ", ") + b;
      first = false;
    }
  }
  if (!plan.lost.empty()) line += ", " + std::to_string(plan.lost.size()) + " lost";
  return line;
}

std::string addedNodesLine(const AddedNodes& a, size_t placed, size_t pending) {
  const std::string like = " like " + a.name;
  if (!a.searched) return "added " + std::to_string(a.count) + " nodes" + like;
  if (a.bound == 0) return "no nodes" + like + " needed: every pending pod is placed";
  if (!a.helps) {
    return "no number of nodes" + like + " up to " + std::to_string(a.bound) +
           " places another pod";
  }
  return std::to_string(a.count) + (a.count == 1 ? " node" : " nodes") + like +
         " place every pending pod that fits one (" + std::to_string(placed) + " of " +
         std::to_string(placed + pending) + " placed)";
}

std::string addedPodsLine(const AddedPods& a) {
  if (a.requested > 0) {
    std::string line = std::to_string(a.placed) + " of " + std::to_string(a.requested) +
                       " copies of " + a.name + " placed";
    if (!a.stoppedBy.empty()) line += "; the first left pending: " + a.stoppedBy;
    return line;
  }
  if (a.stoppedBy.empty()) {
    return std::to_string(a.placed) + " copies of " + a.name + " fit (every free pod slot)";
  }
  return std::to_string(a.placed) + (a.placed == 1 ? " copy of " : " copies of ") + a.name +
         " fit; the next fits nowhere: " + a.stoppedBy;
}

}  // namespace

nlohmann::json toJson(const Report& report, bool withExplain) {
  nlohmann::json results = nlohmann::json::array();
  const size_t placed = placedCount(report);
  for (const auto& r : report.results) {
    nlohmann::json j = {{"pod", r.pod}};
    j["node"] = r.node ? nlohmann::json(*r.node) : nlohmann::json(nullptr);
    if (!r.node || !r.nominatedNode.empty()) j["message"] = r.message;
    if (!r.nominatedNode.empty()) {
      j["nominatedNode"] = r.nominatedNode;
      j["victims"] = r.victims;
    }
    if (withExplain) {
      nlohmann::json nodes = nlohmann::json::array();
      for (const auto& n : r.nodes) {
        nlohmann::json scores = nlohmann::json::object();
        for (const auto& [plugin, s] : n.scores) scores[plugin] = s;
        nlohmann::json e = {{"name", n.name},
                            {"feasible", n.feasible},
                            {"reasons", n.reasons},
                            {"scores", scores},
                            {"total", n.total}};
        if (!n.plugin.empty()) e["plugin"] = n.plugin;
        if (!n.evaluated) e["evaluated"] = false;
        if (!n.preemption.empty()) e["preemption"] = n.preemption;
        if (!n.filters.empty()) {
          nlohmann::json filters = nlohmann::json::array();
          for (const FilterVerdict& v : n.filters) {
            nlohmann::json f = {{"plugin", v.plugin}, {"passed", !v.skipped && v.reasons.empty()}};
            if (v.skipped) f["skipped"] = true;
            if (!v.reasons.empty()) f["reasons"] = v.reasons;
            filters.push_back(std::move(f));
          }
          e["filters"] = std::move(filters);
        }
        nodes.push_back(std::move(e));
      }
      j["nodes"] = std::move(nodes);
    }
    results.push_back(std::move(j));
  }
  nlohmann::json allocation = nlohmann::json::array();
  for (const NodeAllocation& n : report.allocation) {
    allocation.push_back(
        {{"node", n.name},
         {"requested",
          {{"cpu", resource::Quantity::fromMilli(n.cpuRequested).toString()},
           {"memory",
            resource::Quantity::fromValue(n.memoryRequested, resource::Quantity::Format::BinarySI)
                .toString()},
           {"pods", n.pods}}},
         {"allocatable",
          {{"cpu", resource::Quantity::fromMilli(n.cpuAllocatable).toString()},
           {"memory",
            resource::Quantity::fromValue(n.memoryAllocatable, resource::Quantity::Format::BinarySI)
                .toString()},
           {"pods", n.podsAllocatable}}}});
  }
  nlohmann::json out = {{"results", std::move(results)},
                        {"summary",
                         {{"pending", report.results.size()},
                          {"placed", placed},
                          {"evicted", report.evictions.size()},
                          {"lost", report.drain ? report.drain->lost.size() : 0},
                          {"nodesUsed", nodesUsed(report)},
                          {"nodes", report.numNodes},
                          {"allocation", std::move(allocation)}}}};
  if (!report.evictions.empty()) {
    nlohmann::json evicted = nlohmann::json::array();
    for (const auto& e : report.evictions) {
      evicted.push_back({{"pod", e.pod}, {"node", e.node}, {"by", e.by}});
    }
    out["evicted"] = std::move(evicted);
  }
  if (report.drain) {
    nlohmann::json blocked = nlohmann::json::array();
    for (const auto& b : report.drain->blocked) {
      blocked.push_back({{"pod", b.pod}, {"budgets", b.budgets}});
    }
    out["drain"] = {{"nodes", report.drain->nodes},
                    {"moved", report.drain->moved},
                    {"lost", report.drain->lost},
                    {"blocked", std::move(blocked)},
                    {"verdict", drainVerdict(report)}};
  }
  if (report.addedNodes) {
    const auto& a = *report.addedNodes;
    out["addedNodes"] = {{"template", a.name},
                         {"count", a.count},
                         {"searched", a.searched},
                         {"helps", a.helps},
                         {"verdict", addedNodesLine(a, placed, report.results.size() - placed)}};
  }
  if (report.addedPods) {
    const auto& a = *report.addedPods;
    out["addedPods"] = {{"template", a.name}, {"placed", a.placed}, {"verdict", addedPodsLine(a)}};
    if (a.requested > 0) out["addedPods"]["count"] = a.requested;
    if (!a.stoppedBy.empty()) out["addedPods"]["stoppedBy"] = a.stoppedBy;
  }
  if (!report.warnings.empty()) out["warnings"] = report.warnings;
  return out;
}

namespace {

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::string toTable(const Report& report, bool withExplain) {
  size_t podWidth = 3;
  size_t nodeWidth = 4;
  for (const auto& r : report.results) {
    podWidth = std::max(podWidth, r.pod.size());
    nodeWidth = std::max(nodeWidth, r.node ? r.node->size() : 6);
  }
  std::ostringstream out;
  out << pad("POD", podWidth + 3) << pad("NODE", nodeWidth + 3) << "RESULT\n";
  for (const auto& r : report.results) {
    out << pad(r.pod, podWidth + 3) << pad(r.node ? *r.node : "<none>", nodeWidth + 3);
    if (!r.nominatedNode.empty()) {
      out << "Scheduled after preempting";
      for (size_t i = 0; i < r.victims.size(); ++i) out << (i ? ", " : " ") << r.victims[i];
    } else {
      out << (r.node ? "Scheduled" : r.message);
    }
    out << "\n";
    if (!withExplain || r.nodes.empty()) continue;
    size_t w = 4;
    for (const auto& n : r.nodes) w = std::max(w, n.name.size());
    for (const auto& n : r.nodes) {
      out << "    " << pad(n.name, w + 2);
      if (n.feasible && n.scores.empty()) {
        out << "fits   (the only feasible node: not scored)";
      } else if (n.feasible) {
        out << "fits   total=" << n.total;
        for (const auto& [plugin, s] : n.scores) out << " " << plugin << "=" << s;
      } else if (!n.evaluated) {
        out << "not evaluated";
      } else {
        out << "no     ";
        for (size_t i = 0; i < n.reasons.size(); ++i) out << (i ? ", " : "") << n.reasons[i];
        if (!n.preemption.empty()) out << "; preemption: " << n.preemption;
      }
      out << "\n";
      for (const FilterVerdict& v : n.filters) {
        out << "      " << pad(v.plugin + ":", 28);
        if (v.skipped) {
          out << "skipped (nothing to check for this pod)";
        } else if (v.reasons.empty()) {
          out << "passes";
        }
        for (size_t i = 0; i < v.reasons.size(); ++i) out << (i ? ", " : "") << v.reasons[i];
        out << "\n";
      }
    }
  }
  const size_t placed = placedCount(report);
  out << "\n"
      << placed << "/" << report.results.size() << " pending pods placed on " << nodesUsed(report)
      << " of " << report.numNodes << " nodes\n";
  for (const auto& e : report.evictions) {
    out << "evicted " << e.pod << " from node " << e.node << " to make room for " << e.by << "\n";
  }
  if (report.drain) {
    out << drainVerdict(report) << "\n";
    for (const auto& b : report.drain->blocked) {
      out << "  " << b.pod << " stays: "
          << (b.budgets.size() == 1 ? "evicting it would violate PodDisruptionBudget "
                                    : "the eviction API refuses a pod under several "
                                      "PodDisruptionBudgets: ");
      for (size_t i = 0; i < b.budgets.size(); ++i) out << (i ? ", " : "") << b.budgets[i];
      out << "\n";
    }
    for (const auto& p : report.drain->lost) {
      out << "  " << p << " is lost: no controller re-creates it\n";
    }
  }
  if (report.addedNodes) {
    out << addedNodesLine(*report.addedNodes, placed, report.results.size() - placed) << "\n";
  }
  if (report.addedPods) out << addedPodsLine(*report.addedPods) << "\n";
  for (const auto& w : report.warnings) out << "warning: " << w << "\n";
  return out.str();
}

}  // namespace berth::simulate
