#include "pkg/algorithm/generic_scheduler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

namespace berth::algorithm {

using framework::Code;
using framework::Status;

namespace {

constexpr size_t kMinFeasibleNodesToFind = 100;
constexpr int32_t kMinFeasibleNodesPercentageToFind = 5;
constexpr size_t kPrefetchDistance = 4;

void prefetchNode(const framework::NodeInfo& node) {
  const char* p = reinterpret_cast<const char*>(&node);
  for (size_t off = 0; off < sizeof(framework::NodeInfo); off += 64) __builtin_prefetch(p + off);
  node.labels().prefetch();
}

// Gathers a cycle's rejections, in visiting order, into the diagnosis (upstream's NodeToStatus and
// UnschedulablePlugins). A status that is an error rather than a rejection ends the cycle instead.
class RejectionRecorder {
 public:
  explicit RejectionRecorder(framework::Diagnosis& diagnosis) : diagnosis_(diagnosis) {}

  // False when `st` is an error: it is moved into `error`.
  bool add(const framework::NodeInfo& node, Status st, Status& error) {
    if (!st.isRejected()) {
      error = std::move(st);
      return false;
    }
    if (std::find(plugins_.begin(), plugins_.end(), st.plugin()) == plugins_.end()) {
      plugins_.push_back(st.plugin());
    }
    diagnosis_.nodeToStatus.emplace_back(node.name(), std::move(st));
    return true;
  }

  void finish() {
    for (auto p : plugins_) diagnosis_.unschedulablePlugins.emplace(p);
  }

 private:
  framework::Diagnosis& diagnosis_;
  std::vector<std::string_view> plugins_;  // distinct rejecting plugins, few
};

// The nodes that have pods of at least `pod`'s priority nominated to them (the pod itself aside),
// sorted: Filter runs there with those pods counted (upstream's RunFilterPluginsWithNominatedPods),
// everywhere else as usual. Few nodes, or none, in a cluster.
std::vector<const framework::NodeInfo*> nodesWithNominatedPods(
    const framework::runtime::Framework& fw, const framework::PodInfo& pod,
    const framework::Snapshot& snapshot) {
  std::vector<const framework::NodeInfo*> out;
  const framework::PodNominator* nominator = fw.nominator();
  if (nominator == nullptr) return out;
  const int32_t priority = pod->spec.priority.value_or(0);
  auto qualifies = [&](const framework::NodeInfo& node) {
    for (const auto& p : nominator->nominatedPodsForNode(node.name())) {
      if (p->pod->spec.priority.value_or(0) >= priority &&
          p->pod->metadata.uid != pod->metadata.uid) {
        return true;
      }
    }
    return false;
  };
  if (auto names = nominator->nominatedNodes()) {
    for (const auto& name : *names) {
      const framework::NodeInfo* node = snapshot.get(name);
      if (node != nullptr && qualifies(*node)) out.push_back(node);
    }
  } else {
    for (const auto& node : snapshot.nodeInfos()) {
      if (qualifies(*node)) out.push_back(node.get());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool contains(const std::vector<const framework::NodeInfo*>& sorted,
              const framework::NodeInfo* node) {
  return !sorted.empty() && std::binary_search(sorted.begin(), sorted.end(), node);
}

}  // namespace

GenericScheduler::GenericScheduler(util::Parallelizer& parallelizer, uint64_t seed,
                                   int32_t percentageOfNodesToScore, bool reuseEquivalentResults)
    : parallelizer_(parallelizer),
      rng_(seed),
      percentage_of_nodes_to_score_(percentageOfNodesToScore),
      reuse_equivalent_results_(reuseEquivalentResults) {}

size_t GenericScheduler::numFeasibleNodesToFind(int32_t percentage, size_t numAllNodes) {
  if (numAllNodes < kMinFeasibleNodesToFind || percentage >= 100) return numAllNodes;
  if (percentage <= 0) {
    // Adaptive: 50% for small clusters, shrinking with size, never below 5%.
    percentage = 50 - static_cast<int32_t>(numAllNodes / 125);
    percentage = std::max(percentage, kMinFeasibleNodesPercentageToFind);
  }
  size_t n = numAllNodes * static_cast<size_t>(percentage) / 100;
  return std::max(n, kMinFeasibleNodesToFind);
}

ScheduleOutcome GenericScheduler::schedulePod(const framework::runtime::Framework& fw,
                                              framework::CycleState& state,
                                              const framework::PodInfo& pod,
                                              const framework::Snapshot& snapshot) {
  ScheduleOutcome out;
  const auto& all = snapshot.nodeInfos();
  const int numAllNodes = static_cast<int>(all.size());
  auto fitError = [&](framework::Diagnosis d) {
    out.status = Status(Code::Unschedulable, std::string_view("no fit"));
    out.fitError = framework::FitError{numAllNodes, std::move(d)};
    out.diagnosis = out.fitError->diagnosis;
    return std::move(out);
  };
  if (all.empty()) {
    out.status = Status(Code::UnschedulableAndUnresolvable, kNoNodesAvailable);
    return out;
  }

  state.setSnapshot(&snapshot);
  framework::Diagnosis diagnosis;
  framework::PreFilterResult pre;
  auto started = fw.clock().monotonicNow();
  Status s = fw.runPreFilterPlugins(state, pod, pre, diagnosis.unschedulablePlugins);
  out.extensionPoints.push_back(
      {config::pointName(config::Point::PreFilter), s.code(), fw.clock().monotonicNow() - started});
  if (!s.isSuccess()) {
    if (!s.isRejected()) {
      out.status = std::move(s);
      return out;
    }
    diagnosis.preFilterMsg = s.message();
    diagnosis.absentNodesStatus = std::move(s);
    return fitError(std::move(diagnosis));
  }

  const std::vector<const framework::NodeInfo*> withNominated =
      nodesWithNominatedPods(fw, pod, snapshot);
  // A node nominated earlier (by preemption) is tried alone first.
  const std::string& nominated = pod->status.nominatedNodeName;
  if (const framework::NodeInfo* n = nominated.empty() ? nullptr : snapshot.get(nominated)) {
    if (fw.runFilterPluginsWithNominatedPods(state, pod, *n).isSuccess()) {
      out.node = n->name();
      out.evaluatedNodes = 1;
      out.feasible = {n};
      return out;
    }
  }

  std::vector<const framework::NodeInfo*> nodes;
  nodes.reserve(all.size());
  if (pre.nodeNames) {
    for (const auto& name : *pre.nodeNames) {
      if (const auto* n = snapshot.get(name)) nodes.push_back(n);
    }
    std::string plugins;
    for (const auto& p : diagnosis.unschedulablePlugins)
      plugins += (plugins.empty() ? "" : " ") + p;
    diagnosis.absentNodesStatus = Status(Code::UnschedulableAndUnresolvable,
                                         "node(s) didn't satisfy plugin(s) [" + plugins + "]");
  } else {
    for (const auto& n : all) nodes.push_back(n.get());
  }

  // Equivalent pods' results carry over only when every node is evaluated: a partial search depends
  // on where the previous cycle stopped.
  const bool everyNode =
      !pre.nodeNames && fw.hasScorePlugins() &&
      numFeasibleNodesToFind(fw.percentageOfNodesToScore(percentage_of_nodes_to_score_),
                             nodes.size()) >= nodes.size();
  EquivalenceCache::Class* reused = nullptr;
  if (reuse_equivalent_results_ && everyNode) {
    reused = &equivalence_cache_.lookup(fw, EquivalenceCache::classKey(*pod), nodes.size());
  }
  std::vector<size_t> positions;
  Status filterError;
  out.feasible = reused ? findNodesThatPassFiltersReusing(*reused, fw, state, pod, nodes,
                                                          snapshot.generations(), withNominated,
                                                          positions, diagnosis, filterError)
                        : findNodesThatPassFilters(fw, state, pod, nodes, all.size(), withNominated,
                                                   diagnosis, filterError);
  out.evaluatedNodes = static_cast<int>(out.feasible.size() + diagnosis.nodeToStatus.size());
  if (!filterError.isSuccess()) {
    out.status = std::move(filterError);
    return out;
  }
  if (out.feasible.empty()) return fitError(std::move(diagnosis));
  out.diagnosis = std::move(diagnosis);

  if (out.feasible.size() == 1) {
    out.node = out.feasible.front()->name();
    return out;
  }
  started = fw.clock().monotonicNow();
  s = fw.runPreScorePlugins(state, pod, out.feasible);
  out.extensionPoints.push_back(
      {config::pointName(config::Point::PreScore), s.code(), fw.clock().monotonicNow() - started});
  if (!s.isSuccess()) {
    out.status = std::move(s);
    return out;
  }
  started = fw.clock().monotonicNow();
  s = reused ? scoreReusing(*reused, fw, state, pod, out.feasible, positions, out.scores)
             : fw.runScorePlugins(state, pod, out.feasible, parallelizer_, out.scores);
  out.extensionPoints.push_back(
      {config::pointName(config::Point::Score), s.code(), fw.clock().monotonicNow() - started});
  if (!s.isSuccess()) {
    out.status = std::move(s);
    return out;
  }
  out.node = out.feasible[selectHost(out.scores.totals)]->name();
  return out;
}

std::vector<const framework::NodeInfo*> GenericScheduler::findNodesThatPassFilters(
    const framework::runtime::Framework& fw, const framework::CycleState& state,
    const framework::PodInfo& pod, const std::vector<const framework::NodeInfo*>& nodes,
    size_t numAllNodes, const std::vector<const framework::NodeInfo*>& withNominated,
    framework::Diagnosis& diagnosis, Status& error) {
  const size_t n = nodes.size();
  // Like upstream, "enough" is measured against the nodes PreFilter left, the rotation against all.
  size_t want =
      numFeasibleNodesToFind(fw.percentageOfNodesToScore(percentage_of_nodes_to_score_), n);
  if (!fw.hasScorePlugins()) want = 1;

  // Nodes are visited from a rotating start so that, when not every node is evaluated, each cycle
  // looks at different nodes first. Results land by position, so the outcome does not depend on
  // thread timing when every node is evaluated.
  enum : uint8_t { kUnvisited, kFeasible, kRejected };
  std::vector<uint8_t> verdict(n, kUnvisited);
  // Only rejections carry a status, so they are kept sparse: most nodes fit or share few reasons.
  std::vector<std::pair<size_t, Status>> rejected;
  std::mutex mu;
  std::atomic<size_t> found{0};
  std::atomic<bool> failed{false};
  const size_t start = n == 0 ? 0 : next_start_node_index_ % n;
  const auto filters = fw.filtersToRun(state);
  parallelizer_.forEachChunk(n, [&](size_t begin, size_t end) {
    std::vector<std::pair<size_t, Status>> local;
    for (size_t i = begin; i < end; ++i) {
      if (found.load(std::memory_order_relaxed) >= want || failed.load(std::memory_order_relaxed)) {
        break;
      }
      // Nodes live in separate allocations, so the hardware cannot guess the next one: fetch a few
      // nodes ahead, since Filter's cost at thousands of nodes is mostly waiting for memory.
      if (i + kPrefetchDistance < end) prefetchNode(*nodes[(start + i + kPrefetchDistance) % n]);
      const framework::NodeInfo& node = *nodes[(start + i) % n];
      Status st = contains(withNominated, &node)
                      ? fw.runFilterPluginsWithNominatedPods(state, pod, node)
                      : fw.runFilterPlugins(filters, state, pod, node);
      if (st.isSuccess()) {
        verdict[i] = kFeasible;
        found.fetch_add(1, std::memory_order_relaxed);
      } else {
        if (!st.isRejected()) failed = true;
        verdict[i] = kRejected;
        local.emplace_back(i, std::move(st));
      }
    }
    std::lock_guard lock(mu);
    for (auto& r : local) rejected.push_back(std::move(r));
  });
  std::sort(rejected.begin(), rejected.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });

  std::vector<const framework::NodeInfo*> feasible;
  diagnosis.nodeToStatus.reserve(rejected.size());
  RejectionRecorder rejections(diagnosis);
  size_t processed = 0;
  auto next = rejected.begin();
  for (size_t i = 0; i < n && feasible.size() < want; ++i) {
    if (verdict[i] == kUnvisited) continue;
    processed = i + 1;
    const framework::NodeInfo* node = nodes[(start + i) % n];
    if (verdict[i] == kFeasible) {
      feasible.push_back(node);
    } else if (!rejections.add(*node, std::move((next++)->second), error)) {
      return {};
    }
  }
  rejections.finish();
  if (numAllNodes > 0) next_start_node_index_ = (next_start_node_index_ + processed) % numAllNodes;
  return feasible;
}

std::vector<const framework::NodeInfo*> GenericScheduler::findNodesThatPassFiltersReusing(
    EquivalenceCache::Class& results, const framework::runtime::Framework& fw,
    const framework::CycleState& state, const framework::PodInfo& pod,
    const std::vector<const framework::NodeInfo*>& nodes, const std::vector<int64_t>& generations,
    const std::vector<const framework::NodeInfo*>& withNominated, std::vector<size_t>& positions,
    framework::Diagnosis& diagnosis, Status& error) {
  const size_t n = nodes.size();
  const auto filters = fw.filtersToRun(state);
  framework::runtime::Framework::FilterList local;
  framework::runtime::Framework::FilterList others;
  std::vector<size_t> othersAt;  // each of `others`' position in `filters`
  for (size_t k = 0; k < filters.size(); ++k) {
    if (filters[k]->nodeLocal()) {
      local.push_back(filters[k]);
    } else {
      others.push_back(filters[k]);
      othersAt.push_back(k);
    }
  }
  if (local != results.filters) {
    // Entries computed with other plugins (PreFilter skipped some) do not hold.
    results.filters = local;
    for (auto& r : results.nodes) r.node = nullptr;
  }
  std::vector<size_t> stale;
  for (size_t i = 0; i < n; ++i) {
    if (!results.fresh(i, nodes[i], generations[i])) stale.push_back(i);
  }
  parallelizer_.forEachChunk(stale.size(), [&](size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) {
      if (j + kPrefetchDistance < end) prefetchNode(*nodes[stale[j + kPrefetchDistance]]);
      const framework::NodeInfo& node = *nodes[stale[j]];
      EquivalenceCache::NodeResult& r = results.nodes[stale[j]];
      Status st = fw.runFilterPlugins(local, state, pod, node);
      r.feasible = st.isSuccess();
      // An error may not repeat: it is used by this cycle only.
      const bool keep = r.feasible || st.isRejected();
      results.rejections[stale[j]] = r.feasible ? Status() : std::move(st);
      r.node = keep ? &node : nullptr;
      r.generation = node.generation();
      r.classId = results.id;
      r.scored = false;
    }
  });

  std::vector<std::pair<uint32_t, Status>> overrides =
      runUncachedFilters(results, fw, filters, others, othersAt, state, pod, nodes);
  if (!withNominated.empty()) {
    // The entries were computed without nominated pods, which they stay valid for: on a node with
    // nominated pods this cycle's verdict is evaluated in full instead.
    std::vector<std::pair<uint32_t, Status>> merged;
    merged.reserve(overrides.size() + withNominated.size());
    auto next = overrides.begin();
    for (uint32_t i = 0; i < n; ++i) {
      const bool here = contains(withNominated, nodes[i]);
      const bool had = next != overrides.end() && next->first == i;
      if (here) {
        Status st = fw.runFilterPluginsWithNominatedPods(state, pod, *nodes[i]);
        if (!st.isSuccess()) merged.emplace_back(i, std::move(st));
      } else if (had) {
        merged.push_back(std::move(*next));
      }
      if (had) ++next;
    }
    overrides = std::move(merged);
  }
  std::vector<uint8_t> overridden(overrides.empty() ? 0 : n, 0);
  for (const auto& o : overrides) overridden[o.first] = 1;
  auto overrideOf = [&](uint32_t i) -> const Status& {
    return std::lower_bound(overrides.begin(), overrides.end(), i,
                            [](const auto& o, uint32_t at) { return o.first < at; })
        ->second;
  };

  // Read in the uncached order (from the rotating start), so ties and diagnoses come out the same.
  std::vector<const framework::NodeInfo*> feasible;
  feasible.reserve(n);
  positions.reserve(n);
  std::vector<uint32_t> rejectedAt;  // gathered first so that the diagnosis is sized once
  const size_t start = next_start_node_index_ % n;
  for (size_t k = 0, i = start; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
    if (results.nodes[i].feasible && (overridden.empty() || !overridden[i])) {
      feasible.push_back(nodes[i]);
      positions.push_back(i);
    } else {
      rejectedAt.push_back(static_cast<uint32_t>(i));
    }
  }
  diagnosis.nodeToStatus.reserve(rejectedAt.size());
  RejectionRecorder rejections(diagnosis);
  for (uint32_t i : rejectedAt) {
    const Status& st = !overridden.empty() && overridden[i] ? overrideOf(i) : results.rejections[i];
    if (!rejections.add(*nodes[i], st, error)) return {};
  }
  rejections.finish();
  return feasible;
}

std::vector<std::pair<uint32_t, Status>> GenericScheduler::runUncachedFilters(
    const EquivalenceCache::Class& results, const framework::runtime::Framework& fw,
    const framework::runtime::Framework::FilterList& filters,
    const framework::runtime::Framework::FilterList& others, const std::vector<size_t>& othersAt,
    const framework::CycleState& state, const framework::PodInfo& pod,
    const std::vector<const framework::NodeInfo*>& nodes) {
  std::vector<std::pair<uint32_t, Status>> overrides;
  if (others.empty()) return overrides;
  // A node the node-local plugins rejected keeps that status unless a plugin ordered before the
  // rejecting one rejects it too: only those run, as evaluating the node from scratch would.
  std::vector<framework::runtime::Framework::FilterList> prefixes(others.size() + 1);
  for (size_t k = 1; k <= others.size(); ++k) {
    prefixes[k].assign(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(k));
  }
  std::mutex mu;
  parallelizer_.forEachChunk(nodes.size(), [&](size_t begin, size_t end) {
    std::vector<std::pair<uint32_t, Status>> found;
    for (size_t i = begin; i < end; ++i) {
      size_t run = others.size();
      if (!results.nodes[i].feasible) {
        const std::string_view by = results.rejections[i].plugin();
        size_t at = 0;
        while (at < filters.size() && filters[at]->name() != by) ++at;
        run = static_cast<size_t>(std::lower_bound(othersAt.begin(), othersAt.end(), at) -
                                  othersAt.begin());
      }
      if (run == 0) continue;
      Status st = fw.runFilterPlugins(prefixes[run], state, pod, *nodes[i]);
      if (!st.isSuccess()) found.emplace_back(static_cast<uint32_t>(i), std::move(st));
    }
    std::lock_guard lock(mu);
    for (auto& f : found) overrides.push_back(std::move(f));
  });
  std::sort(overrides.begin(), overrides.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return overrides;
}

Status GenericScheduler::scoreReusing(EquivalenceCache::Class& results,
                                      const framework::runtime::Framework& fw,
                                      const framework::CycleState& state,
                                      const framework::PodInfo& pod,
                                      const std::vector<const framework::NodeInfo*>& feasible,
                                      const std::vector<size_t>& positions,
                                      framework::runtime::ScoreTable& table) {
  // Raw scores are kept for the node-local plugins that score this cycle (PreScore may skip some).
  std::vector<std::string_view> cached = fw.activeScorePluginNames(state, /*nodeLocal=*/true);
  const size_t plugins = cached.size();
  const size_t numNodes = results.nodes.size();
  if (cached != results.plugins) {
    results.plugins = std::move(cached);
    results.scores.assign(results.nodes.size() * plugins, 0);
    for (auto& r : results.nodes) r.scored = false;
  }

  std::vector<const framework::NodeInfo*> unscored;
  std::vector<size_t> unscoredAt;
  for (size_t j = 0; j < feasible.size(); ++j) {
    if (!results.nodes[positions[j]].scored) {
      unscored.push_back(feasible[j]);
      unscoredAt.push_back(positions[j]);
    }
  }
  framework::runtime::ScoreTable fresh;
  Status s = fw.scoreNodes(state, pod, unscored, parallelizer_, fresh, /*nodeLocal=*/true);
  if (!s.isSuccess()) return s;
  for (size_t k = 0; k < plugins; ++k) {
    for (size_t u = 0; u < unscored.size(); ++u) {
      results.scores[k * numNodes + unscoredAt[u]] = fresh.scores[k][u];
    }
  }
  for (size_t at : unscoredAt) results.nodes[at].scored = true;

  // The other plugins score every feasible node; rows are merged back into the profile's order.
  std::vector<std::string_view> active = fw.activeScorePluginNames(state);
  framework::runtime::ScoreTable others;
  if (active.size() != plugins) {
    s = fw.scoreNodes(state, pod, feasible, parallelizer_, others, /*nodeLocal=*/false);
    if (!s.isSuccess()) return s;
  }
  table.plugins = std::move(active);
  table.weights.resize(table.plugins.size());
  table.scores.resize(table.plugins.size());
  table.totals.assign(feasible.size(), 0);
  for (size_t k = 0, local = 0, other = 0; k < table.plugins.size(); ++k) {
    std::vector<int64_t>& row = table.scores[k];
    if (local < plugins && results.plugins[local] == table.plugins[k]) {
      table.weights[k] = fresh.weights[local];
      const int64_t* raw = results.scores.data() + local * numNodes;
      row.resize(feasible.size());
      for (size_t j = 0; j < feasible.size(); ++j) row[j] = raw[positions[j]];
      ++local;
    } else {
      table.weights[k] = others.weights[other];
      row = std::move(others.scores[other]);
      ++other;
    }
  }
  return fw.normalizeScores(state, pod, table);
}

size_t GenericScheduler::selectHost(const std::vector<int64_t>& totals) {
  // Ties are broken uniformly at random: count the nodes with the best total, then draw one of
  // them. (One draw per cycle: at thousands of equally empty nodes a draw per tie cost more than
  // scoring.)
  if (totals.empty()) return 0;
  const int64_t best = *std::max_element(totals.begin(), totals.end());
  const auto ties = static_cast<size_t>(std::count(totals.begin(), totals.end(), best));
  size_t pick = std::uniform_int_distribution<size_t>(0, ties - 1)(rng_);
  for (size_t i = 0;; ++i) {
    if (totals[i] == best && pick-- == 0) return i;
  }
}

}  // namespace berth::algorithm
