#include "pkg/plugins/podtopologyspread/pod_topology_spread.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "pkg/framework/snapshot.h"
#include "pkg/plugins/names.h"
#include "pkg/plugins/podtopologyspread/constraints.h"

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
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

struct PreScoreState final : framework::StateData {
  std::vector<Constraint> constraints;
  std::vector<DomainCounts> counts;  // by constraint; empty for the hostname key (counted in Score)
  std::vector<double> weights;       // by constraint: ln(number of domains + 2)
  bool requireAllTopologies = true;
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
    for (DomainCounts& c : s->counts) c.reserve(snapshot->numNodes());
    const NodeInclusion inclusion(*pod);
    const std::string& ns = pod->metadata.namespace_;
    // One pass over every node (not only feasible ones): each counts for the domain its labels
    // name, when it carries every key and the constraint's inclusion policies admit it.
    for (const framework::NodeInfoPtr& info : snapshot->nodeInfos()) {
      if (info->node() == nullptr || !hasAllKeys(info->labels(), s->constraints)) continue;
      for (size_t i = 0; i < n; ++i) {
        const Constraint& c = s->constraints[i];
        if (!inclusion.includes(c, info->labels(), info->name(), info->taints())) continue;
        s->counts[i].add(*info->labels().find(c.topologyKey),
                         countMatchingPods(info->pods(), c.selector, ns));
      }
    }
    s->minMatch.resize(n);
    for (size_t i = 0; i < n; ++i) {
      s->counts[i].seal();
      // Fewer eligible domains than minDomains: the global minimum is taken as 0.
      s->minMatch[i] = s->counts[i].size() < static_cast<size_t>(s->constraints[i].minDomains)
                           ? 0
                           : s->counts[i].minCount();
    }
    state.write(kPreFilterStateKey, std::move(s));
    return Status::success();
  }

  Status filter(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::error("node not found");
    const auto* s = state.readAs<PreFilterState>(kPreFilterStateKey);
    if (s == nullptr) {
      return Status::error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
    }
    for (size_t i = 0; i < s->constraints.size(); ++i) {
      const Constraint& c = s->constraints[i];
      std::optional<std::string_view> value = node.labels().find(c.topologyKey);
      if (!value) return Status(Code::UnschedulableAndUnresolvable, kErrReasonNodeLabelNotMatch);
      const int64_t self = c.selector.matches(pod->metadata.labels) ? 1 : 0;
      const int64_t skew = s->counts[i].count(*value) + self - s->minMatch[i];
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
    const size_t n = s->constraints.size();
    s->counts.resize(n);
    size_t scored = 0;
    for (const framework::NodeInfo* info : nodes) {
      if (s->requireAllTopologies && !hasAllKeys(info->labels(), s->constraints)) continue;
      ++scored;
      for (size_t i = 0; i < n; ++i) {
        const Constraint& c = s->constraints[i];
        if (c.topologyKey == kHostnameKey) continue;
        s->counts[i].add(info->labels().find(c.topologyKey).value_or(""), 0);
      }
    }
    s->weights.resize(n);
    for (size_t i = 0; i < n; ++i) {
      s->counts[i].seal();
      const size_t size =
          s->constraints[i].topologyKey == kHostnameKey ? scored : s->counts[i].size();
      s->weights[i] = std::log(static_cast<double>(size) + 2);
    }
    // Domains are counted over every node, but only those the feasible nodes are in.
    const NodeInclusion inclusion(*pod);
    const std::string& ns = pod->metadata.namespace_;
    for (const framework::NodeInfoPtr& info : snapshot->nodeInfos()) {
      if (info->node() == nullptr) continue;
      if (s->requireAllTopologies && !hasAllKeys(info->labels(), s->constraints)) continue;
      for (size_t i = 0; i < n; ++i) {
        const Constraint& c = s->constraints[i];
        if (c.topologyKey == kHostnameKey) continue;
        if (!inclusion.includes(c, info->labels(), info->name(), info->taints())) continue;
        int64_t* count = s->counts[i].find(info->labels().find(c.topologyKey).value_or(""));
        if (count != nullptr) *count += countMatchingPods(info->pods(), c.selector, ns);
      }
    }
    state.write(kPreScoreStateKey, std::move(s));
    return Status::success();
  }

  Status score(const framework::CycleState& state, const framework::PodInfo& pod,
               const framework::NodeInfo& node, int64_t& out) const override {
    const auto* s = state.readAs<PreScoreState>(kPreScoreStateKey);
    if (s == nullptr) {
      return Status::error("reading \"PreScorePodTopologySpread\" from cycleState: not found");
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
};

}  // namespace

util::Result<framework::PluginPtr> newPodTopologySpread(const PodTopologySpreadArgs& args,
                                                        const framework::Handle& handle) {
  return framework::PluginPtr(std::make_unique<PodTopologySpread>(args, handle.objects));
}

}  // namespace berth::plugins::podtopologyspread
