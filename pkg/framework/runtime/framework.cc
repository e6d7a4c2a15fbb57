#include "pkg/framework/runtime/framework.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "pkg/util/quote.h"

namespace berth::framework::runtime {
namespace {

using PluginMap = std::map<std::string, Plugin*, std::less<>>;

// Fills one extension point's list from the profile, as upstream's updatePluginList followed by
// expandMultiPointPlugins: plugins enabled for this point explicitly keep their order; a plugin
// enabled both here and in multiPoint takes its place here but is listed first (an override of a
// default); then the multiPoint plugins that implement the point and are not disabled for it.
template <typename T>
util::Result<void> buildPoint(std::string_view point, const config::PluginSet& specific,
                              const config::PluginSet& multiPoint, const PluginMap& plugins,
                              std::vector<const T*>& out) {
  std::vector<std::string> enabled;
  for (const auto& ref : specific.enabled) {
    auto* p = dynamic_cast<const T*>(plugins.find(ref.name)->second);
    if (p == nullptr) {
      return util::invalidArgument(ref.field + ": plugin " + util::quoteGo(ref.name) +
                                   " does not extend " + std::string(point) + " plugin");
    }
    if (std::find(enabled.begin(), enabled.end(), ref.name) != enabled.end()) {
      return util::invalidArgument(ref.field + ": plugin " + util::quoteGo(ref.name) +
                                   " already registered as " + std::string(point) + " plugin");
    }
    enabled.push_back(ref.name);
  }

  std::set<std::string> disabled;
  for (const auto& ref : specific.disabled) disabled.insert(ref.name);

  std::vector<std::string> overrides;
  std::vector<std::string> fromMultiPoint;
  if (!disabled.contains("*")) {
    for (const auto& ref : multiPoint.enabled) {
      if (dynamic_cast<const T*>(plugins.find(ref.name)->second) == nullptr) continue;
      if (disabled.contains(ref.name)) continue;
      if (std::find(enabled.begin(), enabled.end(), ref.name) != enabled.end()) {
        overrides.push_back(ref.name);
        continue;
      }
      if (std::find(fromMultiPoint.begin(), fromMultiPoint.end(), ref.name) !=
          fromMultiPoint.end()) {
        return util::invalidArgument(ref.field + ": plugin " + util::quoteGo(ref.name) +
                                     " already registered as " + std::string(point) + " plugin");
      }
      fromMultiPoint.push_back(ref.name);
    }
  }

  std::vector<std::string> order;
  for (const auto& name : enabled) {
    if (std::find(overrides.begin(), overrides.end(), name) != overrides.end())
      order.push_back(name);
  }
  order.insert(order.end(), fromMultiPoint.begin(), fromMultiPoint.end());
  for (const auto& name : enabled) {
    if (std::find(overrides.begin(), overrides.end(), name) == overrides.end())
      order.push_back(name);
  }
  out.clear();
  for (const auto& name : order) out.push_back(dynamic_cast<const T*>(plugins.find(name)->second));
  return {};
}

template <typename T>
std::vector<std::string> namesOf(const std::vector<const T*>& plugins) {
  std::vector<std::string> names;
  names.reserve(plugins.size());
  for (const auto* p : plugins) names.emplace_back(p->name());
  return names;
}

// Upstream's wrapping of a plugin's error: `format` has %q where the plugin's quoted name goes
// ("running PreFilter plugin %q", "running %q filter plugin"). The plugin is recorded too.
Status pluginError(std::string_view format, const Plugin& plugin, const Status& s) {
  std::string message(format);
  message.replace(message.find("%q"), 2, util::quoteGo(plugin.name()));
  return Status::error(message + ": " + s.message()).withPlugin(plugin.name());
}

// Builds every plugin enabled anywhere in the profile, once, into `owned` and `byName`.
util::Result<void> instantiatePlugins(const Registry& registry, const config::Profile& profile,
                                      const Handle& handle, std::vector<PluginPtr>& owned,
                                      PluginMap& byName) {
  for (const config::ExtensionPoint& point : config::kExtensionPoints) {
    if (point.set == nullptr) continue;
    for (const auto& ref : (profile.plugins.*point.set).enabled) {
      if (byName.contains(ref.name)) continue;
      const Registry::Entry* entry = registry.find(ref.name);
      if (entry == nullptr) {
        return util::invalidArgument(ref.field + ": unknown plugin " + util::quoteGo(ref.name));
      }
      auto plugin = entry->make(profile.pluginConfigFor(ref.name), handle);
      if (!plugin.ok()) return plugin.error().wrap("plugin " + util::quoteGo(ref.name));
      byName.emplace(ref.name, plugin->get());
      owned.push_back(std::move(*plugin));
    }
  }
  return {};
}

// berth has no plugins for the points it does not implement, so nothing can be enabled there.
util::Result<void> refuseUnimplementedPoints(const config::Plugins& ps) {
  for (const config::ExtensionPoint& point : config::kExtensionPoints) {
    if (point.implemented || point.set == nullptr || point.point == Point::MultiPoint) continue;
    if (const auto& enabled = (ps.*point.set).enabled; !enabled.empty()) {
      return util::invalidArgument(enabled.front().field + ": plugin " +
                                   util::quoteGo(enabled.front().name) + " does not extend " +
                                   std::string(point.name) + " plugin");
    }
  }
  return {};
}

// A score plugin's weight: an explicit score.enabled entry wins over multiPoint; unset (0) means 1,
// as upstream.
int64_t configuredWeight(const config::Plugins& ps, std::string_view name) {
  for (const auto* list : {&ps.score.enabled, &ps.multiPoint.enabled}) {
    for (const auto& ref : *list) {
      if (ref.name == name) return ref.weight == 0 ? 1 : ref.weight;
    }
  }
  return 1;
}

}  // namespace

template <typename Self, typename Fn>
auto Framework::visitList(Self& self, Point point, Fn&& fn) -> decltype(fn(self.filter_)) {
  switch (point) {
    case Point::QueueSort:
      return fn(self.queue_sorts_);
    case Point::PreFilter:
      return fn(self.pre_filter_);
    case Point::Filter:
      return fn(self.filter_);
    case Point::PostFilter:
      return fn(self.post_filter_);
    case Point::PreScore:
      return fn(self.pre_score_);
    case Point::Score:
      return fn(self.score_);
    case Point::Reserve:
      return fn(self.reserve_);
    case Point::PreBind:
      return fn(self.pre_bind_);
    case Point::Bind:
      return fn(self.bind_);
    default:
      return {};
  }
}

util::Result<void> Registry::add(std::string name, PluginFactory factory) {
  Entry entry;
  entry.make = [factory = std::move(factory)](const config::PluginConfig*, const Handle& handle) {
    return factory(handle);
  };
  return addEntry(std::move(name), std::move(entry));
}

util::Result<void> Registry::addEntry(std::string name, Entry entry) {
  if (entries_.contains(name)) {
    return util::Error{util::ErrorCode::AlreadyExists,
                       "a plugin named " + util::quoteGo(name) + " already exists"};
  }
  entries_.emplace(std::move(name), std::move(entry));
  return {};
}

const Registry::Entry* Registry::find(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, e] : entries_) out.push_back(name);
  return out;
}

void Registry::addFeature(std::string_view plugin, std::string_view feature) {
  features_.emplace(std::string(plugin), std::string(feature));
}

bool Registry::hasFeature(std::string_view plugin, std::string_view feature) const {
  return features_.contains(std::pair{std::string(plugin), std::string(feature)});
}

bool Registry::takesArgs(std::string_view name) const {
  const Entry* e = find(name);
  return e != nullptr && e->check;
}

void Registry::checkArgs(std::string_view name, config::Decoder& d, const config::Json& args,
                         const std::string& path) const {
  if (const Entry* e = find(name); e != nullptr && e->check) e->check(d, args, path);
}

util::Result<FrameworkPtr> Framework::create(const Registry& registry,
                                             const config::Profile& profile, const Handle& handle,
                                             const util::Clock& clock) {
  FrameworkPtr fw(new Framework(clock));
  fw->profile_name_ = profile.schedulerName;
  fw->percentage_of_nodes_to_score_ = profile.percentageOfNodesToScore;
  const std::string prefix = "profile " + util::quoteGo(profile.schedulerName);
  const config::Plugins& ps = profile.plugins;

  PluginMap plugins;
  Handle own = handle;
  own.runner = fw.get();
  if (auto r = instantiatePlugins(registry, profile, own, fw->owned_, plugins); !r) {
    return r.error().wrap(prefix);
  }
  if (auto r = refuseUnimplementedPoints(ps); !r) return r.error().wrap(prefix);
  for (const config::ExtensionPoint& point : config::kExtensionPoints) {
    if (!point.implemented || point.set == nullptr) continue;
    auto r = visitList(*fw, point.point, [&](auto& list) {
      return buildPoint(point.name, ps.*point.set, ps.multiPoint, plugins, list);
    });
    if (!r) return r.error().wrap(prefix);
  }

  if (fw->queue_sorts_.size() != 1) {
    return util::invalidArgument(prefix + ": only one queue sort plugin required, but got " +
                                 std::to_string(fw->queue_sorts_.size()));
  }
  fw->queue_sort_ = fw->queue_sorts_.front();
  if (fw->bind_.empty())
    return util::invalidArgument(prefix + ": at least one bind plugin is needed");

  for (const auto* p : fw->score_) fw->score_weights_.push_back(configuredWeight(ps, p->name()));
  std::vector<std::string> names;
  for (const auto& p : fw->owned_) names.emplace_back(p->name());
  fw->durations_ = std::make_unique<PluginDurations>(names);
  fw->field_gate_ = FieldGate::fromRegistry(registry);
  fw->nominator_ = handle.nominator;
  fw->gatherPluginProperties();
  return fw;
}

void Framework::gatherPluginProperties() {
  auto registerEvents = [&](const Plugin& p) {
    if (plugin_events_.contains(p.name())) return;
    const auto* ext = dynamic_cast<const EnqueueExtensions*>(&p);
    plugin_events_.emplace(
        p.name(), ext != nullptr ? ext->eventsToRegister()
                                 : std::vector<ClusterEventWithHint>{{ClusterEvent{}, {}, {}}});
  };
  for (const auto* p : pre_filter_) {
    registerEvents(*p);
    pre_filter_extensions_.push_back(dynamic_cast<const PreFilterExtensions*>(p));
  }
  for (const auto* p : filter_) registerEvents(*p);
  // A pod the FieldGate refused waits for an update or its deletion: no cluster event helps.
  for (const GatedField* row : field_gate_.activeRows()) {
    plugin_events_.try_emplace(std::string(row->plugin));
  }
  // Nor does any help a pod refused for its size.
  plugin_events_.try_emplace(std::string(kSizeLimitRejector));
  auto noteNotLocal = [&](const Plugin& p) {
    if (p.nodeLocal()) return;
    if (std::find(not_node_local_.begin(), not_node_local_.end(), p.name()) ==
        not_node_local_.end()) {
      not_node_local_.emplace_back(p.name());
    }
  };
  for (const auto* p : filter_) noteNotLocal(*p);
  for (const auto* p : score_) noteNotLocal(*p);
}

template <typename Call>
Status Framework::timed(const CycleState& state, const Plugin& plugin, Point point,
                        Call&& call) const {
  if (!state.recordPluginMetrics()) return call();
  const util::MonotonicTime start = clock_.monotonicNow();
  Status s = call();
  durations_->observe(plugin.name(), point, s.code(), clock_.monotonicNow() - start);
  return s;
}

Status Framework::runPreFilterPlugins(CycleState& state, const PodInfo& pod,
                                      PreFilterResult& result,
                                      std::set<std::string>& rejectedBy) const {
  if (!pod.pod->sizeRefusal.empty()) {
    rejectedBy.emplace(kSizeLimitRejector);
    return Status(Code::UnschedulableAndUnresolvable, pod.pod->sizeRefusal);
  }
  if (auto refusal = field_gate_.check(*pod.pod)) {
    rejectedBy.emplace(refusal->row->plugin);
    return FieldGate::status(*refusal);
  }
  Status returned;
  std::vector<std::string> narrowedBy;
  for (const auto* p : pre_filter_) {
    PreFilterResult r;
    Status s = timed(state, *p, Point::PreFilter, [&] { return p->preFilter(state, pod, r); });
    if (s.isSkip()) {
      state.skipFilter(p->name());
      continue;
    }
    if (!s.isSuccess()) {
      s.setPlugin(p->name());
      if (!s.isRejected()) {
        return pluginError("running PreFilter plugin %q", *p, s);
      }
      rejectedBy.emplace(p->name());
      if (s.code() == Code::UnschedulableAndUnresolvable) return s;
      // Unschedulable: keep running the others so all their state exists for later points.
      if (returned.isSuccess()) returned = std::move(s);
      continue;
    }
    if (!r.nodeNames) continue;
    narrowedBy.emplace_back(p->name());
    rejectedBy.emplace(p->name());
    if (!result.nodeNames) {
      result.nodeNames = std::move(r.nodeNames);
    } else {
      std::set<std::string> both;
      std::set_intersection(result.nodeNames->begin(), result.nodeNames->end(),
                            r.nodeNames->begin(), r.nodeNames->end(),
                            std::inserter(both, both.end()));
      result.nodeNames = std::move(both);
    }
    if (result.nodeNames->empty()) {
      std::string msg;
      if (narrowedBy.size() == 1) {
        msg = "node(s) didn't satisfy plugin " + narrowedBy.front();
      } else {
        std::sort(narrowedBy.begin(), narrowedBy.end());
        msg = "node(s) didn't satisfy plugin(s) [";
        for (size_t i = 0; i < narrowedBy.size(); ++i) msg += (i ? " " : "") + narrowedBy[i];
        msg += "] simultaneously";
      }
      return Status(Code::UnschedulableAndUnresolvable, msg);
    }
  }
  return returned;
}

Framework::FilterList Framework::filtersToRun(const CycleState& state) const {
  FilterList out;
  for (const auto* p : filter_) {
    if (!state.filterSkipped(p->name())) out.push_back(p);
  }
  return out;
}

Status Framework::runFilterPlugins(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node) const {
  return runFilterPlugins(filtersToRun(state), state, pod, node);
}

Status Framework::runFilterPlugins(const FilterList& filters, const CycleState& state,
                                   const PodInfo& pod, const NodeInfo& node) const {
  for (const auto* p : filters) {
    Status s = timed(state, *p, Point::Filter, [&] { return p->filter(state, pod, node); });
    if (s.isSuccess()) continue;
    if (!s.isRejected()) {
      return pluginError("running %q filter plugin", *p, s);
    }
    s.setPlugin(p->name());
    return s;
  }
  return Status::success();
}

Status Framework::runPreFilterExtensionAddPod(CycleState& state, const PodInfo& podToSchedule,
                                              const PodInfo& podToAdd, const NodeInfo& node) const {
  for (const auto* ext : pre_filter_extensions_) {
    if (ext == nullptr || state.filterSkipped(ext->name())) continue;
    Status s = ext->addPod(state, podToSchedule, podToAdd, node);
    if (!s.isSuccess()) return pluginError("running AddPod on PreFilter plugin %q", *ext, s);
  }
  return Status::success();
}

Status Framework::runPreFilterExtensionRemovePod(CycleState& state, const PodInfo& podToSchedule,
                                                 const PodInfo& podToRemove,
                                                 const NodeInfo& node) const {
  for (const auto* ext : pre_filter_extensions_) {
    if (ext == nullptr || state.filterSkipped(ext->name())) continue;
    Status s = ext->removePod(state, podToSchedule, podToRemove, node);
    if (!s.isSuccess()) return pluginError("running RemovePod on PreFilter plugin %q", *ext, s);
  }
  return Status::success();
}

Status Framework::runFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                    const NodeInfo& node) const {
  std::vector<PodInfoPtr> nominated;
  if (nominator_ != nullptr) {
    const int32_t priority = pod->spec.priority.value_or(0);
    for (auto& p : nominator_->nominatedPodsForNode(node.name())) {
      if (p->pod->spec.priority.value_or(0) >= priority &&
          p->pod->metadata.uid != pod->metadata.uid) {
        nominated.push_back(std::move(p));
      }
    }
  }
  if (nominated.empty()) return runFilterPlugins(state, pod, node);
  // Pass 1: as if the nominated pods were placed (they would take room first).
  CycleState withNominated = state.clone();
  NodeInfo nodeWithNominated = node;
  for (const auto& p : nominated) {
    nodeWithNominated.addPod(p);
    Status s = runPreFilterExtensionAddPod(withNominated, pod, *p, nodeWithNominated);
    if (!s.isSuccess()) return s;
  }
  Status s = runFilterPlugins(withNominated, pod, nodeWithNominated);
  if (!s.isSuccess()) return s;
  // Pass 2: without them, for filters such as inter-pod affinity that a nominated pod could
  // satisfy while it is not yet there.
  return runFilterPlugins(state, pod, node);
}

Status Framework::runPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                       const Diagnosis& diagnosis, PostFilterResult& result) const {
  std::string messages;
  std::string_view rejector;
  for (const auto* p : post_filter_) {
    PostFilterResult r;
    Status s = p->postFilter(state, pod, diagnosis, r);
    if (s.isSuccess()) {
      result = std::move(r);
      return s;
    }
    if (!s.isRejected()) {
      return pluginError("running PostFilter plugin %q", *p, s);
    }
    // Upstream keeps the last rejecting plugin's nomination change for the failure handler.
    if (r.clearNomination) result = std::move(r);
    if (s.code() == Code::UnschedulableAndUnresolvable) return std::move(s).withPlugin(p->name());
    if (!messages.empty()) messages += ", ";
    messages += s.message();
    if (rejector.empty()) rejector = p->name();
  }
  return Status(Code::Unschedulable, messages).withPlugin(rejector);
}

Status Framework::runPreScorePlugins(CycleState& state, const PodInfo& pod,
                                     const std::vector<const NodeInfo*>& nodes) const {
  for (const auto* p : pre_score_) {
    Status s = timed(state, *p, Point::PreScore, [&] { return p->preScore(state, pod, nodes); });
    if (s.isSkip()) {
      state.skipScore(p->name());
      continue;
    }
    if (!s.isSuccess()) {
      return pluginError("running PreScore plugin %q", *p, s);
    }
  }
  return Status::success();
}

Status Framework::runScorePlugins(const CycleState& state, const PodInfo& pod,
                                  const std::vector<const NodeInfo*>& nodes,
                                  util::Parallelizer& parallelizer, ScoreTable& table) const {
  Status s = scoreNodes(state, pod, nodes, parallelizer, table);
  if (!s.isSuccess()) return s;
  return normalizeScores(state, pod, table);
}

Status Framework::scoreNodes(const CycleState& state, const PodInfo& pod,
                             const std::vector<const NodeInfo*>& nodes,
                             util::Parallelizer& parallelizer, ScoreTable& table,
                             std::optional<bool> nodeLocal) const {
  const std::vector<size_t> active = activeScorePlugins(state, nodeLocal);
  table.plugins.clear();
  table.weights.clear();
  table.scores.assign(active.size(), std::vector<int64_t>(nodes.size(), 0));
  // Sized here so that a cycle whose PreScore skipped every plugin still has a (zero) total per
  // node.
  table.totals.assign(nodes.size(), 0);
  for (size_t i : active) {
    table.plugins.push_back(score_[i]->name());
    table.weights.push_back(score_weights_[i]);
  }

  std::mutex mu;
  Status failed;
  parallelizer.forEachChunk(nodes.size(), [&](size_t begin, size_t end) {
    for (size_t k = 0; k < active.size(); ++k) {
      const ScorePlugin* p = score_[active[k]];
      auto& row = table.scores[k];
      for (size_t n = begin; n < end; ++n) {
        Status s =
            timed(state, *p, Point::Score, [&] { return p->score(state, pod, *nodes[n], row[n]); });
        if (!s.isSuccess()) {
          std::lock_guard lock(mu);
          if (failed.isSuccess()) {
            failed = pluginError("running Score plugin %q", *p, s);
          }
          return;
        }
      }
    }
  });
  return failed;
}

Status Framework::normalizeScores(const CycleState& state, const PodInfo& pod,
                                  ScoreTable& table) const {
  std::fill(table.totals.begin(), table.totals.end(), 0);
  for (size_t k = 0; k < table.scores.size(); ++k) {
    const ScorePlugin* p = scorePlugin(table.plugins[k]);
    auto& row = table.scores[k];
    Status s = timed(state, *p, Point::NormalizeScore,
                     [&] { return p->normalizeScores(state, pod, row); });
    if (!s.isSuccess()) {
      return pluginError("running Normalize on Score plugin %q", *p, s);
    }
    for (size_t n = 0; n < row.size(); ++n) {
      if (row[n] < kMinNodeScore || row[n] > kMaxNodeScore) {
        return Status::error("plugin \"" + std::string(p->name()) + "\" returns an invalid score " +
                             std::to_string(row[n]) + ", it should in the range of [0, 100] " +
                             "after normalizing")
            .withPlugin(p->name());
      }
      table.totals[n] += row[n] * table.weights[k];
    }
  }
  return Status::success();
}

std::vector<size_t> Framework::activeScorePlugins(const CycleState& state,
                                                  std::optional<bool> nodeLocal) const {
  std::vector<size_t> active;
  for (size_t i = 0; i < score_.size(); ++i) {
    if (nodeLocal && score_[i]->nodeLocal() != *nodeLocal) continue;
    if (!state.scoreSkipped(score_[i]->name())) active.push_back(i);
  }
  return active;
}

std::vector<std::string_view> Framework::activeScorePluginNames(
    const CycleState& state, std::optional<bool> nodeLocal) const {
  std::vector<std::string_view> names;
  for (size_t i : activeScorePlugins(state, nodeLocal)) names.push_back(score_[i]->name());
  return names;
}

const ScorePlugin* Framework::scorePlugin(std::string_view name) const {
  for (const auto* p : score_) {
    if (p->name() == name) return p;
  }
  return nullptr;
}

Status Framework::runReservePluginsReserve(CycleState& state, const PodInfo& pod,
                                           const std::string& node) const {
  for (const auto* p : reserve_) {
    Status s = timed(state, *p, Point::Reserve, [&] { return p->reserve(state, pod, node); });
    if (!s.isSuccess()) {
      return pluginError("running Reserve plugin %q", *p, s);
    }
  }
  return Status::success();
}

void Framework::runReservePluginsUnreserve(CycleState& state, const PodInfo& pod,
                                           const std::string& node) const {
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it) (*it)->unreserve(state, pod, node);
}

bool Framework::hasPreBindWork(const CycleState& state, const PodInfo& pod,
                               const std::string& node) const {
  return std::any_of(pre_bind_.begin(), pre_bind_.end(), [&](const PreBindPlugin* p) {
    return !p->preBindPreFlight(state, pod, node).isSkip();
  });
}

Status Framework::runPreBindPlugins(CycleState& state, const PodInfo& pod,
                                    const std::string& node) const {
  for (const auto* p : pre_bind_) {
    Status s = timed(state, *p, Point::PreBind, [&] { return p->preBind(state, pod, node); });
    if (s.isSuccess()) continue;
    if (s.isRejected()) return std::move(s).withPlugin(p->name());
    return pluginError("running PreBind plugin %q", *p, s);
  }
  return Status::success();
}

Status Framework::runBindPlugins(CycleState& state, const PodInfo& pod,
                                 const std::string& node) const {
  for (const auto* p : bind_) {
    Status s = timed(state, *p, Point::Bind, [&] { return p->bind(state, pod, node); });
    if (s.isSkip()) continue;
    if (s.isSuccess() || s.isRejected()) return std::move(s).withPlugin(p->name());
    return pluginError("running Bind plugin %q", *p, s);
  }
  return Status::error("every bind plugin skipped the pod");
}

std::map<std::string, std::vector<std::string>> Framework::pluginsByExtensionPoint() const {
  std::map<std::string, std::vector<std::string>> out;
  for (const config::ExtensionPoint& point : config::kExtensionPoints) {
    if (!point.implemented || point.set == nullptr) continue;
    out.emplace(point.name,
                visitList(*this, point.point, [](const auto& list) { return namesOf(list); }));
  }
  return out;
}

int64_t Framework::scoreWeight(std::string_view plugin) const {
  for (size_t i = 0; i < score_.size(); ++i) {
    if (score_[i]->name() == plugin) return score_weights_[i];
  }
  return 0;
}

}  // namespace berth::framework::runtime
