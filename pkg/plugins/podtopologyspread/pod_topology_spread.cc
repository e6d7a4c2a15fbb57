#include "pkg/plugins/podtopologyspread/pod_topology_spread.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "pkg/framework/snapshot.h"
#include "pkg/plugins/names.h"
#include "pkg/plugins/podtopologyspread/constraints.h"
#include "pkg/plugins/podtopologyspread/spread_memo.h"

namespace berth::plugins::podtopologyspread {
namespace {

using framework::Code;
using framework::Status;

const framework::StateKey kPreFilterStateKey =
    framework::makeStateKey("PreFilterPodTopologySpread");
const framework::StateKey kPreScoreStateKey = framework::makeStateKey("PreScorePodTopologySpread");

// A raw score that marks a node missing a required topology key; NormalizeScores gives it 0.
constexpr int64_t kIgnoredNode = -1;

// Matching pods per topology value of one constraint, sorted by value. The values view the
// snapshot's node labels, which outlive the cycle state.
class DomainCounts {
 public:
  void reserve(size_t n) { domains_.reserve(n); }
  void add(std::string_view value, int64_t count) { domains_.push_back({value, count}); }
  // Sorts and merges the values added; call once, before any lookup.
  void seal() {
    std::sort(domains_.begin(), domains_.end(),
              [](const Domain& a, const Domain& b) { return a.value < b.value; });
    size_t out = 0;
    for (size_t i = 0; i < domains_.size(); ++i) {
      if (out > 0 && domains_[out - 1].value == domains_[i].value) {
        domains_[out - 1].count += domains_[i].count;
      } else {
        domains_[out++] = domains_[i];
      }
    }
    domains_.resize(out);
  }
  // The domain's counter, or null when no node of the cycle has that value.
  int64_t* find(std::string_view value) {
    auto it = std::lower_bound(domains_.begin(), domains_.end(), value, valueLess);
    return it != domains_.end() && it->value == value ? &it->count : nullptr;
  }
  int64_t count(std::string_view value) const {
    auto it = std::lower_bound(domains_.begin(), domains_.end(), value, valueLess);
    return it != domains_.end() && it->value == value ? it->count : 0;
  }
  size_t size() const { return domains_.size(); }
  int64_t minCount() const {
    int64_t m = std::numeric_limits<int64_t>::max();
    for (const Domain& d : domains_) m = std::min(m, d.count);
    return m;
  }

 private:
  struct Domain {
    std::string_view value;
    int64_t count;
  };
  static bool valueLess(const Domain& d, std::string_view v) { return d.value < v; }
  std::vector<Domain> domains_;
};

struct PreFilterState final : framework::StateData {
  std::vector<Constraint> constraints;
  std::vector<DomainCounts> counts;  // by constraint
  std::vector<int64_t> minMatch;     // by constraint: the global minimum, 0 below minDomains
  std::vector<int64_t> self;         // by constraint: 1 when the pod matches its own selector
  // Until AddPod or RemovePod changes the counts, Filter reads them by snapshot position, not by
  // value: by constraint, each node's domain id (-1: the node lacks the key) and each id's count.
  // Shared by the clones preemption and nominated pods make; null once the counts changed.
  struct ByPosition {
    std::vector<std::vector<int32_t>> domainAt;
    std::vector<std::vector<int64_t>> countById;
  };
  std::shared_ptr<const ByPosition> byPosition;
  void computeMinima() {
    minMatch.resize(constraints.size());
    for (size_t i = 0; i < constraints.size(); ++i) {
      // Fewer eligible domains than minDomains: the global minimum is taken as 0.
      minMatch[i] = counts[i].size() < static_cast<size_t>(constraints[i].minDomains)
                        ? 0
                        : counts[i].minCount();
    }
  }
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

// Raw scores by NodeInfo, computed in PreScore for the nodes it was given, in their order. Score
// visits nodes in that order, one chunk per thread, so a per-thread cursor finds nearly every node
// at the next slot; a small open-addressing table of slot numbers finds the rest (a probe per node
// into a table the size of the cluster missed the cache and cost as much as the rest of the cycle).
class RawScores {
 public:
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    table_.assign(cap, 0);
    nodes_.clear();
    scores_.clear();
    nodes_.reserve(n);
    scores_.reserve(n);
  }
  void put(const framework::NodeInfo* node, int64_t score) {
    size_t i = slotOf(node);
    while (table_[i] != 0) {
      if (nodes_[table_[i] - 1] == node) {
        scores_[table_[i] - 1] = score;
        return;
      }
      i = (i + 1) & (table_.size() - 1);
    }
    nodes_.push_back(node);
    scores_.push_back(score);
    table_[i] = static_cast<uint32_t>(nodes_.size());
  }
  const int64_t* find(const framework::NodeInfo* node) const {
    // Shared by every RawScores on the thread: a stale cursor only misses, it never answers wrong.
    thread_local size_t next = 0;
    if (next < nodes_.size() && nodes_[next] == node) return &scores_[next++];
    if (table_.empty()) return nullptr;
    for (size_t i = slotOf(node);; i = (i + 1) & (table_.size() - 1)) {
      if (table_[i] == 0) return nullptr;
      const size_t at = table_[i] - 1;
      if (nodes_[at] == node) {
        next = at + 1;
        return &scores_[at];
      }
    }
  }

 private:
  size_t slotOf(const framework::NodeInfo* node) const {
    const auto bits = reinterpret_cast<uintptr_t>(node);
    return static_cast<size_t>((bits >> 4) * 0x9E3779B97F4A7C15ULL >> 20) & (table_.size() - 1);
  }
  std::vector<uint32_t> table_;  // 1 + index into nodes_/scores_; 0: empty
  std::vector<const framework::NodeInfo*> nodes_;
  std::vector<int64_t> scores_;
};

struct PreScoreState final : framework::StateData {
  std::vector<Constraint> constraints;
  std::vector<DomainCounts> counts;  // by constraint; empty for the hostname key (counted in Score)
  std::vector<double> weights;       // by constraint: ln(number of domains + 2)
  bool requireAllTopologies = true;
  RawScores raw;  // Score's answer for PreScore's nodes; others are computed from `counts`
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

bool sameTaints(const api::Node& a, const api::Node& b) {
  return std::equal(a.spec.taints.begin(), a.spec.taints.end(), b.spec.taints.begin(),
                    b.spec.taints.end(), [](const api::Taint& x, const api::Taint& y) {
                      return x.key == y.key && x.value == y.value && x.effect == y.effect;
                    });
}

std::string_view labelOr(const api::StringMap& labels, const std::string& key) {
  auto it = labels.find(key);
  return it != labels.end() ? std::string_view(it->second) : std::string_view();
}

class PodTopologySpread final : public framework::PreFilterPlugin,
                                public framework::PreFilterExtensions,
                                public framework::FilterPlugin,
                                public framework::PreScorePlugin,
                                public framework::ScorePlugin,
                                public framework::EnqueueExtensions {
 public:
  PodTopologySpread(const PodTopologySpreadArgs& args, const framework::ClusterObjects* objects)
      : objects_(objects) {
    if (args.defaultingType == kSystemDefaulting) {
      defaults_.system = true;
      defaults_.constraints = {systemConstraint(kHostnameKey, 3), systemConstraint(kZoneKey, 5)};
    } else {
      defaults_.constraints = args.defaultConstraints;
    }
  }

  std::string_view name() const override { return names::kPodTopologySpread; }

  // Assigned pods that start or stop matching a constraint in the pod's namespace, and nodes that
  // gain or lose the topology keys (or change their values or taints).
  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    using framework::ClusterEvent;
    using framework::EventResource;
    framework::ClusterEventWithHint pods{
        ClusterEvent{EventResource::AssignedPod,
                     ActionType::Add | ActionType::UpdatePodLabel | ActionType::Delete}};
    pods.podHint = [this](const api::Pod& pod, const api::Pod* before, const api::Pod* after) {
      return afterPodChange(pod, before, after);
    };
    framework::ClusterEventWithHint nodes{ClusterEvent{
        EventResource::Node, ActionType::Add | ActionType::Delete | ActionType::UpdateNodeLabel |
                                 ActionType::UpdateNodeTaint}};
    nodes.nodeHint = [this](const api::Pod& pod, const api::Node* before, const api::Node* after) {
      return afterNodeChange(pod, before, after);
    };
    return {std::move(pods), std::move(nodes)};
  }

  Status preFilter(framework::CycleState& state, const framework::PodInfo& pod,
                   framework::PreFilterResult&) const override {
    if (auto valid = validatePodConstraints(*pod); !valid.ok()) {
      return Status::error(valid.error().message);
    }
    auto constraints = constraintsFor(*pod, kDoNotSchedule, defaults_, objects_);
    if (!constraints.ok()) return Status::error(constraints.error().message);
    if (constraints->empty()) return Status::skip();
    const framework::Snapshot* snapshot = state.snapshot();
    if (snapshot == nullptr) return Status::error("PodTopologySpread: no snapshot in this cycle");

    auto s = std::make_unique<PreFilterState>();
    s->constraints = std::move(*constraints);
    const size_t n = s->constraints.size();
    s->counts.resize(n);
    const NodeInclusion inclusion(*pod);
    const std::string& ns = pod->metadata.namespace_;
    {
      SpreadMemo::Session memo(memo_, *snapshot);
      const MemoColumns cols = memoColumns(memo, s->constraints, ns);
      const std::vector<framework::NodeInfoPtr>& infos = snapshot->nodeInfos();
      // Matching pods by domain id, and where each domain was first seen (-1: not a domain).
      std::vector<std::vector<int64_t>> totals(n);
      std::vector<std::vector<int64_t>> firstAt(n);
      for (size_t i = 0; i < n; ++i) {
        totals[i].assign(cols.topology[i]->numIds, 0);
        firstAt[i].assign(cols.topology[i]->numIds, -1);
      }
      auto byPosition = std::make_shared<PreFilterState::ByPosition>();
      // One pass over every node (not only feasible ones): each counts for the domain its labels
      // name, when it carries every key and the constraint's inclusion policies admit it.
      for (size_t p = 0; p < infos.size(); ++p) {
        if (!cols.hasAllKeys(p)) continue;
        for (size_t i = 0; i < n; ++i) {
          const Constraint& c = s->constraints[i];
          if (!inclusion.includesAll(c) &&
              !inclusion.includes(c, infos[p]->labels(), infos[p]->name(), infos[p]->taints())) {
            continue;
          }
          const int32_t id = cols.topology[i]->ids[p];
          if (firstAt[i][id] < 0) firstAt[i][id] = static_cast<int64_t>(p);
          totals[i][id] += cols.count(i, p);
        }
      }
      for (size_t i = 0; i < n; ++i) {
        const std::string& key = s->constraints[i].topologyKey;
        for (size_t id = 0; id < firstAt[i].size(); ++id) {
          if (firstAt[i][id] < 0) continue;
          s->counts[i].add(*infos[static_cast<size_t>(firstAt[i][id])]->labels().find(key),
                           totals[i][id]);
        }
        // The memo's columns live only as long as its session: Filter gets copies.
        const TopologyColumn& column = *cols.topology[i];
        std::vector<int32_t>& at = byPosition->domainAt.emplace_back(column.ids);
        for (size_t p = 0; p < at.size(); ++p) {
          if (column.presence[p] != TopologyColumn::kHasKey) at[p] = -1;
        }
      }
      byPosition->countById = std::move(totals);
      s->byPosition = std::move(byPosition);
    }
    for (const Constraint& c : s->constraints) {
      s->self.push_back(c.selector.matches(pod->metadata.labels) ? 1 : 0);
    }
    for (size_t i = 0; i < n; ++i) s->counts[i].seal();
    s->computeMinima();
    state.write(kPreFilterStateKey, std::move(s));
    return Status::success();
  }

  Status addPod(framework::CycleState& state, const framework::PodInfo& pod,
                const framework::PodInfo& podToAdd,
                const framework::NodeInfo& node) const override {
    return updateWithPod(state, pod, podToAdd, node, 1);
  }

  Status removePod(framework::CycleState& state, const framework::PodInfo& pod,
                   const framework::PodInfo& podToRemove,
                   const framework::NodeInfo& node) const override {
    return updateWithPod(state, pod, podToRemove, node, -1);
  }

  Status filter(const framework::CycleState& state, const framework::PodInfo&,
                const framework::NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::error("node not found");
    const auto* s = state.readAs<PreFilterState>(kPreFilterStateKey);
    if (s == nullptr) {
      return Status::error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
    }
    const framework::Snapshot* snapshot = state.snapshot();
    const int64_t position =
        s->byPosition != nullptr && snapshot != nullptr ? snapshot->findPosition(node) : -1;
    for (size_t i = 0; i < s->constraints.size(); ++i) {
      const Constraint& c = s->constraints[i];
      int64_t count = 0;
      if (position >= 0) {
        const int32_t id = s->byPosition->domainAt[i][static_cast<size_t>(position)];
        if (id < 0) return Status(Code::UnschedulableAndUnresolvable, kErrReasonNodeLabelNotMatch);
        count = s->byPosition->countById[i][static_cast<size_t>(id)];
      } else {
        std::optional<std::string_view> value = node.labels().find(c.topologyKey);
        if (!value) return Status(Code::UnschedulableAndUnresolvable, kErrReasonNodeLabelNotMatch);
        count = s->counts[i].count(*value);
      }
      const int64_t skew = count + s->self[i] - s->minMatch[i];
      if (skew > c.maxSkew) return Status(Code::Unschedulable, kErrReasonConstraintsNotMatch);
    }
    return Status::success();
  }

  Status preScore(framework::CycleState& state, const framework::PodInfo& pod,
                  const std::vector<const framework::NodeInfo*>& nodes) const override {
    const framework::Snapshot* snapshot = state.snapshot();
    if (snapshot == nullptr || snapshot->numNodes() == 0) return Status::skip();
    if (auto valid = validatePodConstraints(*pod); !valid.ok()) {
      return Status::error(valid.error().message);
    }
    auto constraints = constraintsFor(*pod, kScheduleAnyway, defaults_, objects_);
    if (!constraints.ok()) return Status::error(constraints.error().message);
    if (constraints->empty()) return Status::skip();

    auto s = std::make_unique<PreScoreState>();
    s->constraints = std::move(*constraints);
    // With the system defaults a node without a zone label still gets hostname spreading.
    s->requireAllTopologies = !pod->spec.topologySpreadConstraints.empty() || !defaults_.system;
    if (!preScoreFromMemo(*s, *pod, *snapshot, nodes)) preScoreFromPods(*s, *pod, *snapshot, nodes);
    state.write(kPreScoreStateKey, std::move(s));
    return Status::success();
  }

  Status score(const framework::CycleState& state, const framework::PodInfo& pod,
               const framework::NodeInfo& node, int64_t& out) const override {
    const auto* s = state.readAs<PreScoreState>(kPreScoreStateKey);
    if (s == nullptr) {
      return Status::error("reading \"PreScorePodTopologySpread\" from cycleState: not found");
    }
    if (const int64_t* raw = s->raw.find(&node)) {
      out = *raw;
      return Status::success();
    }
    if (s->requireAllTopologies && !hasAllKeys(node.labels(), s->constraints)) {
      out = kIgnoredNode;
      return Status::success();
    }
    double sum = 0;
    for (size_t i = 0; i < s->constraints.size(); ++i) {
      const Constraint& c = s->constraints[i];
      std::optional<std::string_view> value = node.labels().find(c.topologyKey);
      if (!value) continue;
      const int64_t count =
          c.topologyKey == kHostnameKey
              ? countMatchingPods(node.pods(), c.selector, pod->metadata.namespace_)
              : s->counts[i].count(*value);
      // maxSkew - 1 waters down the differences between domains: the larger the tolerated skew,
      // the less a few pods matter.
      sum += static_cast<double>(count) * s->weights[i] + static_cast<double>(c.maxSkew - 1);
    }
    out = std::llround(sum);
    return Status::success();
  }

  // Fewer matching pods score higher: 100 * (max + min - score) / max; ignored nodes score 0.
  Status normalizeScores(const framework::CycleState&, const framework::PodInfo&,
                         std::vector<int64_t>& scores) const override {
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = 0;
    for (int64_t v : scores) {
      if (v == kIgnoredNode) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    for (int64_t& v : scores) {
      if (v == kIgnoredNode) {
        v = 0;
      } else if (hi == 0) {
        v = framework::kMaxNodeScore;
      } else {
        v = framework::kMaxNodeScore * (hi + lo - v) / hi;
      }
    }
    return Status::success();
  }

 private:
  // The memo's columns for each constraint: its key's values, and (when its selector counts pods)
  // the matching pods, by snapshot position.
  struct MemoColumns {
    std::vector<const TopologyColumn*> topology;        // by constraint
    std::vector<const std::vector<int64_t>*> matching;  // by constraint; null: counts no pod
    bool hasAllKeys(size_t p) const {
      return std::all_of(topology.begin(), topology.end(), [p](const TopologyColumn* t) {
        return t->presence[p] == TopologyColumn::kHasKey;
      });
    }
    int64_t count(size_t i, size_t p) const {
      return matching[i] != nullptr ? (*matching[i])[p] : 0;
    }
  };
  static MemoColumns memoColumns(SpreadMemo::Session& memo,
                                 const std::vector<Constraint>& constraints,
                                 const std::string& ns) {
    MemoColumns out;
    for (const Constraint& c : constraints) {
      out.topology.push_back(&memo.topology(c.topologyKey));
      out.matching.push_back(c.selector.countsPods() ? &memo.podCounts(ns, c.selector) : nullptr);
    }
    return out;
  }

  // PreScore from the memo: domain counts summed by id over every node, and every given node's
  // raw score computed here so that Score only looks it up. False (having done nothing) when a
  // node is not one of the snapshot's.
  bool preScoreFromMemo(PreScoreState& s, const api::Pod& pod, const framework::Snapshot& snapshot,
                        const std::vector<const framework::NodeInfo*>& nodes) const {
    SpreadMemo::Session memo(memo_, snapshot);
    std::vector<int64_t> positions(nodes.size());
    const std::vector<framework::NodeInfoPtr>& infos = snapshot.nodeInfos();
    int64_t next = 0;  // feasible nodes usually come in snapshot order, from some start
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (next >= static_cast<int64_t>(infos.size())) next = 0;
      positions[k] = infos.empty() || infos[static_cast<size_t>(next)].get() != nodes[k]
                         ? memo.positionOf(nodes[k])
                         : next;
      if (positions[k] < 0) return false;
      next = positions[k] + 1;
    }
    const size_t n = s.constraints.size();
    const MemoColumns cols = memoColumns(memo, s.constraints, pod.metadata.namespace_);
    s.counts.resize(n);
    std::vector<std::vector<int64_t>> totals(n);
    std::vector<std::vector<int64_t>> firstAt(n);  // where a feasible node had the domain; -1
    std::vector<size_t> domains(n, 0);
    std::vector<bool> hostname(n);
    for (size_t i = 0; i < n; ++i) {
      hostname[i] = s.constraints[i].topologyKey == kHostnameKey;
      if (hostname[i]) continue;
      totals[i].assign(cols.topology[i]->numIds, 0);
      firstAt[i].assign(cols.topology[i]->numIds, -1);
    }
    size_t scored = 0;
    for (const int64_t pos : positions) {
      const auto p = static_cast<size_t>(pos);
      if (s.requireAllTopologies && !cols.hasAllKeys(p)) continue;
      ++scored;
      for (size_t i = 0; i < n; ++i) {
        if (hostname[i]) continue;
        const int32_t id = cols.topology[i]->ids[p];
        if (firstAt[i][id] < 0) {
          firstAt[i][id] = pos;
          ++domains[i];
        }
      }
    }
    s.weights.resize(n);
    for (size_t i = 0; i < n; ++i) {
      s.weights[i] = std::log(static_cast<double>(hostname[i] ? scored : domains[i]) + 2);
    }
    // Domains are counted over every node, but only those the feasible nodes are in.
    const NodeInclusion inclusion(pod);
    for (size_t p = 0; p < infos.size(); ++p) {
      if (cols.topology[0]->presence[p] == TopologyColumn::kNoNode) continue;
      if (s.requireAllTopologies && !cols.hasAllKeys(p)) continue;
      for (size_t i = 0; i < n; ++i) {
        if (hostname[i]) continue;
        const int32_t id = cols.topology[i]->ids[p];
        if (firstAt[i][id] < 0) continue;
        const Constraint& c = s.constraints[i];
        if (!inclusion.includesAll(c) &&
            !inclusion.includes(c, infos[p]->labels(), infos[p]->name(), infos[p]->taints())) {
          continue;
        }
        totals[i][id] += cols.count(i, p);
      }
    }
    // What Score computes, for every node given.
    s.raw.reserve(nodes.size());
    for (size_t k = 0; k < nodes.size(); ++k) {
      const auto p = static_cast<size_t>(positions[k]);
      if (s.requireAllTopologies && !cols.hasAllKeys(p)) {
        s.raw.put(nodes[k], kIgnoredNode);
        continue;
      }
      double sum = 0;
      for (size_t i = 0; i < n; ++i) {
        if (cols.topology[i]->presence[p] != TopologyColumn::kHasKey) continue;
        const int64_t count = hostname[i] ? cols.count(i, p) : totals[i][cols.topology[i]->ids[p]];
        sum += static_cast<double>(count) * s.weights[i] +
               static_cast<double>(s.constraints[i].maxSkew - 1);
      }
      s.raw.put(nodes[k], std::llround(sum));
    }
    // For a node Score gets that PreScore did not (none, from the framework).
    for (size_t i = 0; i < n; ++i) {
      if (hostname[i]) continue;
      const std::string& key = s.constraints[i].topologyKey;
      for (size_t id = 0; id < firstAt[i].size(); ++id) {
        if (firstAt[i][id] < 0) continue;
        const auto& labels = infos[static_cast<size_t>(firstAt[i][id])]->labels();
        s.counts[i].add(labels.find(key).value_or(""), totals[i][id]);
      }
      s.counts[i].seal();
    }
    return true;
  }

  // PreScore by walking every pod of every node, for nodes the memo cannot place.
  void preScoreFromPods(PreScoreState& s, const api::Pod& pod, const framework::Snapshot& snapshot,
                        const std::vector<const framework::NodeInfo*>& nodes) const {
    const size_t n = s.constraints.size();
    s.counts.resize(n);
    size_t scored = 0;
    for (const framework::NodeInfo* info : nodes) {
      if (s.requireAllTopologies && !hasAllKeys(info->labels(), s.constraints)) continue;
      ++scored;
      for (size_t i = 0; i < n; ++i) {
        const Constraint& c = s.constraints[i];
        if (c.topologyKey == kHostnameKey) continue;
        s.counts[i].add(info->labels().find(c.topologyKey).value_or(""), 0);
      }
    }
    s.weights.resize(n);
    for (size_t i = 0; i < n; ++i) {
      s.counts[i].seal();
      const size_t size =
          s.constraints[i].topologyKey == kHostnameKey ? scored : s.counts[i].size();
      s.weights[i] = std::log(static_cast<double>(size) + 2);
    }
    // Domains are counted over every node, but only those the feasible nodes are in.
    const NodeInclusion inclusion(pod);
    const std::string& ns = pod.metadata.namespace_;
    for (const framework::NodeInfoPtr& info : snapshot.nodeInfos()) {
      if (info->node() == nullptr) continue;
      if (s.requireAllTopologies && !hasAllKeys(info->labels(), s.constraints)) continue;
      for (size_t i = 0; i < n; ++i) {
        const Constraint& c = s.constraints[i];
        if (c.topologyKey == kHostnameKey) continue;
        if (!inclusion.includes(c, info->labels(), info->name(), info->taints())) continue;
        int64_t* count = s.counts[i].find(info->labels().find(c.topologyKey).value_or(""));
        if (count != nullptr) *count += countMatchingPods(info->pods(), c.selector, ns);
      }
    }
  }

  // AddPod (+1) and RemovePod (-1): the counts as PreFilter would have found them with `other` on
  // `node`, or without it (upstream's updateWithPod), the global minima recomputed.
  static Status updateWithPod(framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::PodInfo& other, const framework::NodeInfo& node,
                              int64_t delta) {
    const auto* current = state.readAs<PreFilterState>(kPreFilterStateKey);
    if (current == nullptr) {
      return Status::error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
    }
    const std::string& ns = pod->metadata.namespace_;
    if (node.node() == nullptr || other->metadata.namespace_ != ns ||
        !hasAllKeys(node.labels(), current->constraints)) {
      return Status::success();
    }
    auto s = std::make_unique<PreFilterState>(*current);
    const NodeInclusion inclusion(*pod);
    bool changed = false;
    for (size_t i = 0; i < s->constraints.size(); ++i) {
      const Constraint& c = s->constraints[i];
      if (!countsPod(*other, c.selector, ns)) continue;
      if (!inclusion.includesAll(c) &&
          !inclusion.includes(c, node.labels(), node.name(), node.taints())) {
        continue;
      }
      int64_t* count = s->counts[i].find(*node.labels().find(c.topologyKey));
      if (count == nullptr) continue;
      *count += delta;
      changed = true;
    }
    if (!changed) return Status::success();
    s->byPosition.reset();  // the counts by id are PreFilter's
    s->computeMinima();
    state.write(kPreFilterStateKey, std::move(s));
    return Status::success();
  }

  static api::TopologySpreadConstraint systemConstraint(std::string_view key, int32_t maxSkew) {
    api::TopologySpreadConstraint c;
    c.topologyKey = std::string(key);
    c.whenUnsatisfiable = std::string(kScheduleAnyway);
    c.maxSkew = maxSkew;
    return c;
  }

  // The pod's DoNotSchedule constraints (what Filter rejected it for); nullopt when they do not
  // compile.
  std::optional<std::vector<Constraint>> hardConstraints(const api::Pod& pod) const {
    auto c = constraintsFor(pod, kDoNotSchedule, defaults_, objects_);
    if (!c.ok()) return std::nullopt;
    return std::move(*c);
  }

  framework::QueueingHint afterPodChange(const api::Pod& pod, const api::Pod* before,
                                         const api::Pod* after) const {
    using framework::QueueingHint;
    // Only the pod itself, or assigned pods of its namespace, take part in its spreading.
    auto involved = [&pod](const api::Pod* other) {
      return other->metadata.uid == pod.metadata.uid ||
             (!other->spec.nodeName.empty() &&
              other->metadata.namespace_ == pod.metadata.namespace_);
    };
    if ((after != nullptr && !involved(after)) || (before != nullptr && !involved(before))) {
      return QueueingHint::Skip;
    }
    auto constraints = hardConstraints(pod);
    if (!constraints) return QueueingHint::Queue;
    auto anyMatches = [&](const api::Pod& other) {
      return std::any_of(constraints->begin(), constraints->end(), [&](const Constraint& c) {
        return c.selector.matches(other.metadata.labels);
      });
    };
    if (before != nullptr && after != nullptr) {
      if (before->metadata.labels == after->metadata.labels) return QueueingHint::Skip;
      for (const Constraint& c : *constraints) {
        if (c.selector.matches(before->metadata.labels) !=
            c.selector.matches(after->metadata.labels)) {
          return QueueingHint::Queue;
        }
      }
      return QueueingHint::Skip;
    }
    const api::Pod* changed = after != nullptr ? after : before;
    return changed != nullptr && anyMatches(*changed) ? QueueingHint::Queue : QueueingHint::Skip;
  }

  framework::QueueingHint afterNodeChange(const api::Pod& pod, const api::Node* before,
                                          const api::Node* after) const {
    using framework::QueueingHint;
    auto constraints = hardConstraints(pod);
    if (!constraints) return QueueingHint::Queue;
    auto carriesKeys = [&](const api::Node* node) {
      return node != nullptr && hasAllKeys(labels::LabelSet(node->metadata.labels), *constraints);
    };
    const bool was = carriesKeys(before);
    const bool is = carriesKeys(after);
    if (before != nullptr && after != nullptr) {
      if (was != is) return QueueingHint::Queue;
      if (!is) return QueueingHint::Skip;
      const bool valuesChanged =
          std::any_of(constraints->begin(), constraints->end(), [&](const Constraint& c) {
            return labelOr(before->metadata.labels, c.topologyKey) !=
                   labelOr(after->metadata.labels, c.topologyKey);
          });
      return valuesChanged || !sameTaints(*before, *after) ? QueueingHint::Queue
                                                           : QueueingHint::Skip;
    }
    return (after != nullptr ? is : was) ? QueueingHint::Queue : QueueingHint::Skip;
  }

  const framework::ClusterObjects* objects_;  // not owned; may be null
  Defaults defaults_;
  // Per-node counts and topology values carried from cycle to cycle (PreFilter and PreScore are
  // const, and simulate may share the plugin between threads: the memo locks).
  mutable SpreadMemo memo_;
};

}  // namespace

util::Result<framework::PluginPtr> newPodTopologySpread(const PodTopologySpreadArgs& args,
                                                        const framework::Handle& handle) {
  return framework::PluginPtr(std::make_unique<PodTopologySpread>(args, handle.objects));
}

}  // namespace berth::plugins::podtopologyspread
