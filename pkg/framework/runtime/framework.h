#pragma once
// Framework: one profile's plugins, built from the registry and the configuration, sorted into
// per-extension-point lists, and the runners for each point. The runtime attributes every status to
// its plugin, applies score weights and checks that normalized scores are in range.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/framework/handle.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/runtime/field_gate.h"
#include "pkg/framework/runtime/plugin_durations.h"
#include "pkg/util/clock.h"
#include "pkg/util/parallel.h"
#include "pkg/util/result.h"

namespace berth::framework::runtime {

// Builds a plugin that takes no args.
using PluginFactory = std::function<util::Result<PluginPtr>(const Handle& handle)>;
// Builds a plugin from its args, as its ArgsDecoder decoded, defaulted and validated them.
template <typename Args>
using PluginFactoryWithArgs =
    std::function<util::Result<PluginPtr>(const Args& args, const Handle& handle)>;
// Decodes a plugin's pluginConfig args over the defaults in `out` and validates them, reporting
// the first problem on the decoder.
template <typename Args>
using ArgsDecoder = void (*)(config::Decoder& d, const config::Json& args, const std::string& path,
                             Args& out);

// Plugin name -> how to build it and, for a plugin with args, how to decode them. Names are
// unique. The configuration checks pluginConfig through it.
class Registry final : public config::PluginCatalog {
 public:
  struct Entry {
    // Builds the plugin from its pluginConfig entry (nullptr: its default args).
    std::function<util::Result<PluginPtr>(const config::PluginConfig* config, const Handle&)> make;
    // Checks args given in pluginConfig; empty for a plugin that takes none.
    std::function<void(config::Decoder&, const config::Json&, const std::string&)> check;
  };

  util::Result<void> add(std::string name, PluginFactory factory);
  template <typename Args>
  util::Result<void> add(std::string name,
                         std::type_identity_t<PluginFactoryWithArgs<Args>> factory,
                         ArgsDecoder<Args> decode);
  const Entry* find(std::string_view name) const;
  std::vector<std::string> names() const;
  // Declares that plugin `plugin` implements `feature` (e.g. NodeResourcesFit's
  // PodLevelResources): the FieldGate refuses a field that needs a feature no plugin declared.
  void addFeature(std::string_view plugin, std::string_view feature);
  bool hasFeature(std::string_view plugin, std::string_view feature) const;

  // config::PluginCatalog
  bool hasPlugin(std::string_view name) const override { return find(name) != nullptr; }
  bool takesArgs(std::string_view name) const override;
  void checkArgs(std::string_view name, config::Decoder& d, const config::Json& args,
                 const std::string& path) const override;

 private:
  util::Result<void> addEntry(std::string name, Entry entry);

  std::map<std::string, Entry, std::less<>> entries_;
  std::set<std::pair<std::string, std::string>, std::less<>> features_;  // (plugin, feature)
};

template <typename Args>
util::Result<void> Registry::add(std::string name,
                                 std::type_identity_t<PluginFactoryWithArgs<Args>> factory,
                                 ArgsDecoder<Args> decode) {
  Entry entry;
  entry.make = [factory = std::move(factory), decode](
                   const config::PluginConfig* config,
                   const Handle& handle) -> util::Result<PluginPtr> {
    Args args;
    if (config != nullptr) {
      config::Decoder d;
      decode(d, config->args, config->field, args);
      if (d.failed()) return util::invalidArgument(d.error());
    }
    return factory(args, handle);
  };
  entry.check = [decode](config::Decoder& d, const config::Json& json, const std::string& path) {
    Args args;
    decode(d, json, path, args);
  };
  return addEntry(std::move(name), std::move(entry));
}

// Normalized (unweighted) scores of the feasible nodes, per score plugin, and the weighted totals.
struct ScoreTable {
  std::vector<std::string_view> plugins;
  std::vector<int64_t> weights;
  std::vector<std::vector<int64_t>> scores;  // [plugin][node], in [0, kMaxNodeScore]
  std::vector<int64_t> totals;               // [node], sum of score * weight
};

class Framework final : public PluginRunner {
 public:
  // Builds and validates the profile: every plugin exists and implements the points it is enabled
  // at, exactly one QueueSort, at least one Bind. Errors name the profile and the configuration
  // field.
  // `clock` times the plugins and extension points; it must outlive the framework.
  static util::Result<std::unique_ptr<Framework>> create(
      const Registry& registry, const config::Profile& profile, const Handle& handle,
      const util::Clock& clock = util::realClock());

  const std::string& profileName() const { return profile_name_; }
  int32_t percentageOfNodesToScore(int32_t global) const {
    return percentage_of_nodes_to_score_.value_or(global);
  }

  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
    return queue_sort_->less(a, b);
  }

  // The rejector recorded for a pod decodePod found larger than kube-apiserver can store.
  static constexpr std::string_view kSizeLimitRejector = "PodSizeLimit";

  // PreFilter: first a pod too large to have been stored (api::Pod::sizeRefusal) and the FieldGate
  // (a pod using a field berth does not enforce) are refused at once, then every plugin; an
  // UnschedulableAndUnresolvable rejection stops at once. Narrowing results are intersected; an
  // empty intersection rejects the pod. `rejectedBy` collects the plugins that rejected or
  // narrowed.
  Status runPreFilterPlugins(CycleState& state, const PodInfo& pod, PreFilterResult& result,
                             std::set<std::string>& rejectedBy) const;
  // Every PreFilter plugin that is a PreFilterExtensions and was not skipped this cycle updates its
  // state for a pod added to / removed from `node` (the NodeInfo already reflects the change).
  Status runPreFilterExtensionAddPod(CycleState& state, const PodInfo& podToSchedule,
                                     const PodInfo& podToAdd, const NodeInfo& node) const override;
  Status runPreFilterExtensionRemovePod(CycleState& state, const PodInfo& podToSchedule,
                                        const PodInfo& podToRemove,
                                        const NodeInfo& node) const override;
  // Filter on one node: plugins in order, the first rejection wins.
  Status runFilterPlugins(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const;
  // The same over a list from filtersToRun(), resolved once per cycle instead of once per node.
  using FilterList = std::vector<const FilterPlugin*>;
  FilterList filtersToRun(const CycleState& state) const;
  Status runFilterPlugins(const FilterList& filters, const CycleState& state, const PodInfo& pod,
                          const NodeInfo& node) const;
  // Filter on one node as upstream's RunFilterPluginsWithNominatedPods: first with the pods of
  // equal or higher priority nominated to the node added (on copies of the node and state, through
  // the PreFilterExtensions), then, if any were added and that passed, without them. Both must
  // pass.
  Status runFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                           const NodeInfo& node) const override;
  // PostFilter plugins in order until one succeeds or answers UnschedulableAndUnresolvable; the
  // Unschedulable messages of the others are joined with ", " (upstream's PostFilterMsg).
  Status runPostFilterPlugins(CycleState& state, const PodInfo& pod, const Diagnosis& diagnosis,
                              PostFilterResult& result) const;
  Status runPreScorePlugins(CycleState& state, const PodInfo& pod,
                            const std::vector<const NodeInfo*>& nodes) const;
  Status runScorePlugins(const CycleState& state, const PodInfo& pod,
                         const std::vector<const NodeInfo*>& nodes,
                         util::Parallelizer& parallelizer, ScoreTable& table) const;
  // runScorePlugins in two steps, for callers that keep raw scores across cycles: the raw scores of
  // `nodes` (table.totals sized, zero), then normalization, range checks and weighted totals.
  // With `nodeLocal` set, only the plugins whose nodeLocal() equals it score (and are in `table`).
  Status scoreNodes(const CycleState& state, const PodInfo& pod,
                    const std::vector<const NodeInfo*>& nodes, util::Parallelizer& parallelizer,
                    ScoreTable& table, std::optional<bool> nodeLocal = std::nullopt) const;
  Status normalizeScores(const CycleState& state, const PodInfo& pod, ScoreTable& table) const;
  Status runReservePluginsReserve(CycleState& state, const PodInfo& pod,
                                  const std::string& node) const;
  void runReservePluginsUnreserve(CycleState& state, const PodInfo& pod,
                                  const std::string& node) const;
  // Whether some PreBind plugin has work for the pod (its preBindPreFlight did not Skip).
  bool hasPreBindWork(const CycleState& state, const PodInfo& pod, const std::string& node) const;
  // PreBind plugins in order; the first failure stops (a rejection as it is, anything else as an
  // error "running PreBind plugin %q: ..."). May block as long as the plugins wait.
  Status runPreBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) const;
  Status runBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) const;

  bool hasScorePlugins() const { return !score_.empty(); }
  // The Score plugins this cycle runs (PreScore may skip some), in order: scoreNodes'
  // table.plugins.
  // With `nodeLocal` set, only those whose nodeLocal() equals it.
  std::vector<std::string_view> activeScorePluginNames(
      const CycleState& state, std::optional<bool> nodeLocal = std::nullopt) const;
  bool hasPostFilterPlugins() const { return !post_filter_.empty(); }
  // The Handle's nominator (null when none): Filter counts its pods.
  const PodNominator* nominator() const { return nominator_; }

  // Plugin names per extension point, in run order (for logs, explain and tests).
  std::map<std::string, std::vector<std::string>> pluginsByExtensionPoint() const;
  int64_t scoreWeight(std::string_view plugin) const;
  // The events each PreFilter and Filter plugin (the ones that reject pods) registered, gathered
  // when the profile is built. A rejecting plugin that is no EnqueueExtensions is registered for
  // the wildcard event: it may be waiting for anything.
  const PluginEvents& pluginEvents() const { return plugin_events_; }
  // The Filter and Score plugins that are not nodeLocal(), in run order (Filter's, then Score's).
  const std::vector<std::string>& notNodeLocalPlugins() const { return not_node_local_; }
  // The fields this framework refuses, decided from the registry it was built from.
  const FieldGate& fieldGate() const { return field_gate_; }
  // scheduler_plugin_execution_duration_seconds of this profile's plugins (sampled cycles only).
  const PluginDurations& pluginDurations() const { return *durations_; }
  const util::Clock& clock() const { return clock_; }

 private:
  explicit Framework(const util::Clock& clock) : clock_(clock) {}
  // Calls fn with the typed plugin list of an implemented, configurable point (const or not, as
  // `self`); its result, or a default value for any other point.
  template <typename Self, typename Fn>
  static auto visitList(Self& self, Point point, Fn&& fn) -> decltype(fn(self.filter_));
  const ScorePlugin* scorePlugin(std::string_view name) const;
  // Indexes into score_; with `nodeLocal` set, only those whose nodeLocal() equals it.
  std::vector<size_t> activeScorePlugins(const CycleState& state,
                                         std::optional<bool> nodeLocal = std::nullopt) const;
  // Fills plugin_events_ and not_node_local_ from the built lists.
  void gatherPluginProperties();
  // Runs `call` (returning a Status), timed into durations_ when the cycle is sampled.
  template <typename Call>
  Status timed(const CycleState& state, const Plugin& plugin, Point point, Call&& call) const;

  std::string profile_name_;
  const PodNominator* nominator_ = nullptr;  // from the Handle; not owned
  std::optional<int32_t> percentage_of_nodes_to_score_;
  std::vector<PluginPtr> owned_;
  const util::Clock& clock_;
  std::vector<const QueueSortPlugin*> queue_sorts_;  // exactly one once created
  const QueueSortPlugin* queue_sort_ = nullptr;      // queue_sorts_.front(), for less()
  std::vector<const PreFilterPlugin*> pre_filter_;
  std::vector<const PreFilterExtensions*> pre_filter_extensions_;  // parallel to pre_filter_
  std::vector<const FilterPlugin*> filter_;
  std::vector<const PostFilterPlugin*> post_filter_;
  std::vector<const PreScorePlugin*> pre_score_;
  std::vector<const ScorePlugin*> score_;
  std::vector<int64_t> score_weights_;  // parallel to score_
  std::vector<const ReservePlugin*> reserve_;
  std::vector<const PreBindPlugin*> pre_bind_;
  std::vector<const BindPlugin*> bind_;
  std::unique_ptr<PluginDurations> durations_;
  PluginEvents plugin_events_;
  std::vector<std::string> not_node_local_;
  FieldGate field_gate_;
};

using FrameworkPtr = std::unique_ptr<Framework>;

}  // namespace berth::framework::runtime
