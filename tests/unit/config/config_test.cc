#include "pkg/config/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pkg/plugins/nodeaffinity/args.h"
#include "pkg/plugins/noderesources/args.h"
#include "pkg/plugins/registry.h"

namespace berth::config {
namespace {

constexpr std::string_view kHeader =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n";

// The configuration as berth reads it: plugin args checked by the in-tree plugins' decoders.
util::Result<Configuration> parseConfiguration(std::string_view text, std::string_view source) {
  static const framework::runtime::Registry registry = plugins::makeInTreeRegistry();
  return config::parseConfiguration(text, source, registry);
}

// A plugin's args as its factory gets them: its pluginConfig entry decoded, or its defaults.
template <typename Args>
Args argsOf(const Profile& profile, std::string_view plugin,
            void (*decode)(Decoder&, const Json&, const std::string&, Args&)) {
  Args args;
  if (const PluginConfig* c = profile.pluginConfigFor(plugin)) {
    Decoder d;
    decode(d, c->args, c->field, args);
    EXPECT_FALSE(d.failed()) << d.error();
  }
  return args;
}
plugins::noderesources::NodeResourcesFitArgs fitArgs(const Profile& p) {
  return argsOf(p, "NodeResourcesFit", plugins::noderesources::decodeNodeResourcesFitArgs);
}
plugins::noderesources::NodeResourcesBalancedAllocationArgs balancedArgs(const Profile& p) {
  return argsOf(p, "NodeResourcesBalancedAllocation",
                plugins::noderesources::decodeNodeResourcesBalancedAllocationArgs);
}
plugins::nodeaffinity::NodeAffinityArgs affinityArgs(const Profile& p) {
  return argsOf(p, "NodeAffinity", plugins::nodeaffinity::decodeNodeAffinityArgs);
}

using plugins::noderesources::NodeResourcesFitArgs;
using plugins::noderesources::ResourceSpec;
using plugins::noderesources::ScoringStrategy;

util::Result<Configuration> parse(std::string_view body) {
  return parseConfiguration(std::string(kHeader) + std::string(body), "config.yaml");
}

// "PrioritySort, TaintToleration:3@default": name, weight when set, and where it came from.
std::string render(const std::vector<PluginRef>& plugins) {
  std::string out;
  for (const PluginRef& p : plugins) {
    if (!out.empty()) {
      out += ", ";
    }
    out += p.name;
    if (p.weight != 0) {
      out += ":" + std::to_string(p.weight);
    }
    if (p.field != "default") {
      out += "@" + p.field;
    }
  }
  return out;
}

constexpr std::string_view kDefaults =
    "PrioritySort, NodeUnschedulable, NodeName, TaintToleration:3, NodeAffinity:2, NodePorts, "
    "NodeResourcesFit:1, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
    "PodTopologySpread:2, "
    "InterPodAffinity:2, DefaultPreemption, "
    "NodeResourcesBalancedAllocation:1, ImageLocality:1, DefaultBinder";

std::string resources(const std::vector<ResourceSpec>& specs) {
  std::string out;
  for (const ResourceSpec& r : specs) {
    out += (out.empty() ? "" : ", ") + r.name + ":" + std::to_string(r.weight);
  }
  return out;
}

TEST(Config, DefaultPluginsFollowUpstreamOrderAndWeights) {
  EXPECT_EQ(render(defaultMultiPointPlugins()), kDefaults);
}

TEST(Config, DefaultConfigurationHasOneBerthProfile) {
  Configuration cfg = defaultConfiguration();
  ASSERT_EQ(cfg.profiles.size(), 1u);
  const Profile& p = cfg.profiles[0];
  EXPECT_EQ(p.schedulerName, "berth");
  EXPECT_EQ(p.field, "profiles[0]");
  EXPECT_FALSE(p.percentageOfNodesToScore.has_value());
  EXPECT_EQ(render(p.plugins.multiPoint.enabled), kDefaults);
  EXPECT_TRUE(p.plugins.score.enabled.empty());
  EXPECT_EQ(fitArgs(p).scoringStrategy.type, ScoringStrategy::Type::LeastAllocated);
  EXPECT_EQ(resources(fitArgs(p).scoringStrategy.resources), "cpu:1, memory:1");
  EXPECT_EQ(resources(balancedArgs(p).resources), "cpu:1, memory:1");
  EXPECT_FALSE(affinityArgs(p).addedAffinity.has_value());
  EXPECT_EQ(cfg.percentageOfNodesToScore, 100);
  EXPECT_EQ(cfg.parallelism, 16);
  EXPECT_EQ(cfg.podInitialBackoffSeconds, 1);
  EXPECT_EQ(cfg.podMaxBackoffSeconds, 10);
  EXPECT_TRUE(cfg.leaderElection.leaderElect);
  EXPECT_EQ(cfg.leaderElection.leaseDurationMillis, 15000);
  EXPECT_EQ(cfg.leaderElection.renewDeadlineMillis, 10000);
  EXPECT_EQ(cfg.leaderElection.retryPeriodMillis, 2000);
  EXPECT_EQ(cfg.leaderElection.resourceLock, "leases");
  EXPECT_EQ(cfg.leaderElection.resourceName, "berth");
  EXPECT_EQ(cfg.leaderElection.resourceNamespace, "kube-system");
  EXPECT_FLOAT_EQ(cfg.clientConnection.qps, 50);
  EXPECT_EQ(cfg.clientConnection.burst, 100);
}

TEST(Config, MinimalFileEqualsDefaultConfiguration) {
  for (std::string_view body : {"", "profiles: []\n", "profiles:\n- {}\n", "profiles: null\n"}) {
    SCOPED_TRACE(body);
    auto cfg = parse(body);
    ASSERT_TRUE(cfg.ok()) << cfg.error().message;
    Configuration def = defaultConfiguration();
    ASSERT_EQ(cfg->profiles.size(), 1u);
    EXPECT_EQ(cfg->profiles[0].schedulerName, "berth");
    EXPECT_EQ(cfg->profiles[0].field, "profiles[0]");
    EXPECT_EQ(render(cfg->profiles[0].plugins.multiPoint.enabled), kDefaults);
    EXPECT_EQ(cfg->percentageOfNodesToScore, def.percentageOfNodesToScore);
    EXPECT_EQ(cfg->leaderElection.resourceName, "berth");
  }
}

TEST(Config, TopLevelFieldsAreRead) {
  auto cfg = parse(R"(
percentageOfNodesToScore: 0
parallelism: 4
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 60
leaderElection:
  leaderElect: false
  leaseDuration: 1m30s
  renewDeadline: 1m
  retryPeriod: 500ms
  resourceName: my-lock
  resourceNamespace: sched
clientConnection:
  kubeconfig: /etc/berth/kubeconfig
  acceptContentTypes: application/json
  contentType: application/json
  qps: 12.5
  burst: 30
profiles:
- schedulerName: custom
  percentageOfNodesToScore: 40
)");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->percentageOfNodesToScore, 0);  // kept: the runtime applies the adaptive formula
  EXPECT_EQ(cfg->parallelism, 4);
  EXPECT_EQ(cfg->podInitialBackoffSeconds, 2);
  EXPECT_EQ(cfg->podMaxBackoffSeconds, 60);
  EXPECT_FALSE(cfg->leaderElection.leaderElect);
  EXPECT_EQ(cfg->leaderElection.leaseDurationMillis, 90000);
  EXPECT_EQ(cfg->leaderElection.renewDeadlineMillis, 60000);
  EXPECT_EQ(cfg->leaderElection.retryPeriodMillis, 500);
  EXPECT_EQ(cfg->leaderElection.resourceName, "my-lock");
  EXPECT_EQ(cfg->leaderElection.resourceNamespace, "sched");
  EXPECT_EQ(cfg->clientConnection.kubeconfig, "/etc/berth/kubeconfig");
  EXPECT_FLOAT_EQ(cfg->clientConnection.qps, 12.5);
  EXPECT_EQ(cfg->clientConnection.burst, 30);
  ASSERT_EQ(cfg->profiles.size(), 1u);
  EXPECT_EQ(cfg->profiles[0].schedulerName, "custom");
  EXPECT_EQ(cfg->profiles[0].percentageOfNodesToScore, 40);
}

TEST(Config, LeaderElectionDefaultsFollowTheFirstProfile) {
  auto cfg = parse("profiles:\n- schedulerName: a\n- schedulerName: b\n");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->leaderElection.resourceName, "a");
  EXPECT_EQ(cfg->leaderElection.resourceNamespace, "kube-system");
}

TEST(Config, DurationsUseGoSyntax) {
  struct Case {
    std::string_view text;
    int64_t millis;
  };
  const Case cases[] = {
      {"15s", 15000},  {"1m30s", 90000},    {"500ms", 500},           {"1.5s", 1500},
      {"1h", 3600000}, {"2000000us", 2000}, {"90000000000ns", 90000}, {"\"20s\"", 20000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    auto cfg = parse("leaderElection:\n  leaseDuration: " + std::string(c.text) +
                     "\n  renewDeadline: 300ms\n  retryPeriod: 100ms\n");
    ASSERT_TRUE(cfg.ok()) << cfg.error().message;
    EXPECT_EQ(cfg->leaderElection.leaseDurationMillis, c.millis);
  }
}

// --- Plugin merging (upstream's mergePlugins) ----------------------------------------------------

struct MergeCase {
  std::string_view name;
  std::string_view plugins;  // the profile's `plugins:` block
  std::string_view multiPoint;
  std::string_view multiPointDisabled;
  std::string_view other;  // "point: enabled / disabled" for each other point that is set
};

std::string otherPoints(const Plugins& p) {
  struct Point {
    std::string_view name;
    const PluginSet* set;
  };
  const Point points[] = {{"preEnqueue", &p.preEnqueue},
                          {"queueSort", &p.queueSort},
                          {"preFilter", &p.preFilter},
                          {"filter", &p.filter},
                          {"postFilter", &p.postFilter},
                          {"preScore", &p.preScore},
                          {"score", &p.score},
                          {"reserve", &p.reserve},
                          {"permit", &p.permit},
                          {"preBind", &p.preBind},
                          {"bind", &p.bind},
                          {"postBind", &p.postBind}};
  std::string out;
  for (const Point& point : points) {
    if (!point.set->enabled.empty() || !point.set->disabled.empty()) {
      out += (out.empty() ? "" : "; ") + std::string(point.name) + ": " +
             render(point.set->enabled) + " / " + render(point.set->disabled);
    }
  }
  return out;
}

TEST(Config, UserPluginsMergeWithDefaultsAsUpstream) {
  const std::string p = "profiles[0].plugins.";
  const MergeCase cases[] = {
      {"no plugins block keeps the defaults", "{}", kDefaults, "", ""},
      {"disabling a default score plugin removes it from multiPoint",
       "multiPoint:\n  disabled:\n  - name: NodeResourcesBalancedAllocation\n",
       "PrioritySort, NodeUnschedulable, NodeName, TaintToleration:3, NodeAffinity:2, NodePorts, "
       "NodeResourcesFit:1, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
       "PodTopologySpread:2, "
       "InterPodAffinity:2, DefaultPreemption, "
       "ImageLocality:1, "
       "DefaultBinder",
       "NodeResourcesBalancedAllocation@profiles[0].plugins.multiPoint.disabled[0]", ""},
      {"disabling * drops every default and keeps the user's enabled ones",
       "multiPoint:\n  enabled:\n  - name: PrioritySort\n  - name: NodeName\n"
       "  - name: DefaultBinder\n  disabled:\n  - name: '*'\n",
       "PrioritySort@profiles[0].plugins.multiPoint.enabled[0], "
       "NodeName@profiles[0].plugins.multiPoint.enabled[1], "
       "DefaultBinder@profiles[0].plugins.multiPoint.enabled[2]",
       "*@profiles[0].plugins.multiPoint.disabled[0]", ""},
      {"re-weighting through multiPoint replaces the default in place",
       "multiPoint:\n  enabled:\n  - name: TaintToleration\n    weight: 10\n",
       "PrioritySort, NodeUnschedulable, NodeName, "
       "TaintToleration:10@profiles[0].plugins.multiPoint.enabled[0], NodeAffinity:2, NodePorts, "
       "NodeResourcesFit:1, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
       "PodTopologySpread:2, "
       "InterPodAffinity:2, DefaultPreemption, "
       "NodeResourcesBalancedAllocation:1, ImageLocality:1, DefaultBinder",
       "", ""},
      {"a multiPoint entry without weight replaces the default weight too (upstream)",
       "multiPoint:\n  enabled:\n  - name: TaintToleration\n",
       "PrioritySort, NodeUnschedulable, NodeName, "
       "TaintToleration@profiles[0].plugins.multiPoint.enabled[0], NodeAffinity:2, NodePorts, "
       "NodeResourcesFit:1, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
       "PodTopologySpread:2, "
       "InterPodAffinity:2, DefaultPreemption, "
       "NodeResourcesBalancedAllocation:1, ImageLocality:1, DefaultBinder",
       "", ""},
      {"re-weighting through score.enabled keeps multiPoint and adds the score entry",
       "score:\n  enabled:\n  - name: TaintToleration\n    weight: 7\n", kDefaults, "",
       "score: TaintToleration:7@profiles[0].plugins.score.enabled[0] / "},
      {"disabling at one point leaves multiPoint alone",
       "score:\n  disabled:\n  - name: NodeAffinity\n", kDefaults, "",
       "score:  / NodeAffinity@profiles[0].plugins.score.disabled[0]"},
      {"disabling and re-enabling moves a default to the end",
       "multiPoint:\n  enabled:\n  - name: NodePorts\n  disabled:\n  - name: NodePorts\n",
       "PrioritySort, NodeUnschedulable, NodeName, TaintToleration:3, NodeAffinity:2, "
       "NodeResourcesFit:1, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
       "PodTopologySpread:2, "
       "InterPodAffinity:2, DefaultPreemption, "
       "NodeResourcesBalancedAllocation:1, ImageLocality:1, DefaultBinder, "
       "NodePorts@profiles[0].plugins.multiPoint.enabled[0]",
       "NodePorts@profiles[0].plugins.multiPoint.disabled[0]", ""},
      {"disabling an upstream plugin berth lacks is accepted",
       "multiPoint:\n  disabled:\n  - name: DynamicResources\n  - name: GCEPDLimits\n", kDefaults,
       "DynamicResources@profiles[0].plugins.multiPoint.disabled[0], "
       "GCEPDLimits@profiles[0].plugins.multiPoint.disabled[1]",
       ""},
      {"specific points are kept as written",
       "queueSort:\n  enabled:\n  - name: PrioritySort\n  disabled:\n  - name: '*'\n"
       "bind:\n  enabled:\n  - name: DefaultBinder\n",
       kDefaults, "",
       "queueSort: PrioritySort@profiles[0].plugins.queueSort.enabled[0] / "
       "*@profiles[0].plugins.queueSort.disabled[0]; "
       "bind: DefaultBinder@profiles[0].plugins.bind.enabled[0] / "},
  };
  for (const MergeCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::string body = "profiles:\n- plugins:\n";
    std::istringstream lines{std::string(c.plugins)};
    for (std::string line; std::getline(lines, line);) {
      body += "    " + line + "\n";
    }
    auto cfg = parse(body);
    ASSERT_TRUE(cfg.ok()) << cfg.error().message;
    const Plugins& plugins = cfg->profiles[0].plugins;
    EXPECT_EQ(render(plugins.multiPoint.enabled), c.multiPoint);
    EXPECT_EQ(render(plugins.multiPoint.disabled), c.multiPointDisabled);
    EXPECT_EQ(otherPoints(plugins), c.other);
  }
}

TEST(Config, TwoProfilesAreIndependent) {
  auto cfg = parse(R"(
profiles:
- schedulerName: spread
- schedulerName: pack
  plugins:
    multiPoint:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
)");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  ASSERT_EQ(cfg->profiles.size(), 2u);
  const Profile& spread = cfg->profiles[0];
  const Profile& pack = cfg->profiles[1];
  EXPECT_EQ(spread.schedulerName, "spread");
  EXPECT_EQ(spread.field, "profiles[0]");
  EXPECT_EQ(render(spread.plugins.multiPoint.enabled), kDefaults);
  EXPECT_EQ(fitArgs(spread).scoringStrategy.type, ScoringStrategy::Type::LeastAllocated);
  EXPECT_EQ(pack.schedulerName, "pack");
  EXPECT_EQ(pack.field, "profiles[1]");
  EXPECT_EQ(render(pack.plugins.multiPoint.enabled),
            "PrioritySort, NodeUnschedulable, NodeName, TaintToleration:3, NodeAffinity:2, "
            "NodePorts, NodeResourcesFit:1, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, "
            "VolumeZone, "
            "PodTopologySpread:2, InterPodAffinity:2, DefaultPreemption, "
            "ImageLocality:1, DefaultBinder");
  EXPECT_EQ(fitArgs(pack).scoringStrategy.type, ScoringStrategy::Type::MostAllocated);
  EXPECT_EQ(resources(fitArgs(pack).scoringStrategy.resources), "cpu:1, memory:1");
}

// --- Plugin arguments ----------------------------------------------------------------------------

TEST(Config, NodeResourcesFitArgsAreDefaultedAsUpstream) {
  auto cfg = parse(R"(
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      ignoredResources: [example.com/foo]
      ignoredResourceGroups: [example.org]
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - name: cpu
          weight: 3
        - name: nvidia.com/gpu
        - name: memory
          weight: 0
        requestedToCapacityRatio:
          shape:
          - utilization: 0
            score: 0
          - utilization: 100
            score: 10
)");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  const NodeResourcesFitArgs& args = fitArgs(cfg->profiles[0]);
  EXPECT_EQ(args.ignoredResources, std::vector<std::string>{"example.com/foo"});
  EXPECT_EQ(args.ignoredResourceGroups, std::vector<std::string>{"example.org"});
  EXPECT_EQ(args.scoringStrategy.type, ScoringStrategy::Type::RequestedToCapacityRatio);
  // A weight of 0 or none means 1.
  EXPECT_EQ(resources(args.scoringStrategy.resources), "cpu:3, nvidia.com/gpu:1, memory:1");
  ASSERT_EQ(args.scoringStrategy.shape.size(), 2u);
  EXPECT_EQ(args.scoringStrategy.shape[1].utilization, 100);
  EXPECT_EQ(args.scoringStrategy.shape[1].score, 10);
}

TEST(Config, ScoringStrategyWithoutResourcesUsesCpuAndMemory) {
  auto cfg = parse(
      "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
      "      scoringStrategy: {type: MostAllocated}\n"
      "  - name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu}]}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  const Profile& p = cfg->profiles[0];
  EXPECT_EQ(fitArgs(p).scoringStrategy.type, ScoringStrategy::Type::MostAllocated);
  EXPECT_EQ(resources(fitArgs(p).scoringStrategy.resources), "cpu:1, memory:1");
  EXPECT_EQ(resources(balancedArgs(p).resources), "cpu:1");
}

TEST(Config, NodeAffinityArgsAddedAffinityIsDecoded) {
  auto cfg = parse(R"(
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      kind: NodeAffinityArgs
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - key: node-role.kubernetes.io/batch
              operator: Exists
            - key: cores
              operator: Gt
              values: ["8"]
          - matchFields:
            - key: metadata.name
              operator: In
              values: [node-1]
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 20
          preference:
            matchExpressions:
            - key: topology.kubernetes.io/zone
              operator: In
              values: [a, b]
)");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  const auto added = affinityArgs(cfg->profiles[0]).addedAffinity;
  ASSERT_TRUE(added.has_value());
  ASSERT_TRUE(added->requiredDuringSchedulingIgnoredDuringExecution.has_value());
  const auto& terms = added->requiredDuringSchedulingIgnoredDuringExecution->nodeSelectorTerms;
  ASSERT_EQ(terms.size(), 2u);
  ASSERT_EQ(terms[0].matchExpressions.size(), 2u);
  EXPECT_EQ(terms[0].matchExpressions[0].key, "node-role.kubernetes.io/batch");
  EXPECT_EQ(terms[0].matchExpressions[0].op, api::NodeSelectorOperator::Exists);
  EXPECT_EQ(terms[0].matchExpressions[1].op, api::NodeSelectorOperator::Gt);
  EXPECT_EQ(terms[0].matchExpressions[1].values, std::vector<std::string>{"8"});
  ASSERT_EQ(terms[1].matchFields.size(), 1u);
  EXPECT_EQ(terms[1].matchFields[0].key, "metadata.name");
  EXPECT_EQ(terms[1].matchFields[0].values, std::vector<std::string>{"node-1"});
  ASSERT_EQ(added->preferredDuringSchedulingIgnoredDuringExecution.size(), 1u);
  const auto& preferred = added->preferredDuringSchedulingIgnoredDuringExecution[0];
  EXPECT_EQ(preferred.weight, 20);
  ASSERT_EQ(preferred.preference.matchExpressions.size(), 1u);
  EXPECT_EQ(preferred.preference.matchExpressions[0].op, api::NodeSelectorOperator::In);
  EXPECT_EQ(preferred.preference.matchExpressions[0].values, (std::vector<std::string>{"a", "b"}));
}

// --- Inputs --------------------------------------------------------------------------------------

TEST(Config, ExampleConfigParses) {
  std::ifstream in("examples/config.yaml");
  ASSERT_TRUE(in.good()) << "run the test from the repository root";
  std::stringstream text;
  text << in.rdbuf();
  auto cfg = parseConfiguration(text.str(), "examples/config.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  ASSERT_EQ(cfg->profiles.size(), 2u);
  const Profile& berth = cfg->profiles[0];
  EXPECT_EQ(berth.schedulerName, "berth");
  EXPECT_EQ(berth.percentageOfNodesToScore, 100);
  EXPECT_EQ(render(berth.plugins.multiPoint.enabled), kDefaults);
  EXPECT_EQ(fitArgs(berth).scoringStrategy.type, ScoringStrategy::Type::LeastAllocated);
  EXPECT_EQ(resources(fitArgs(berth).scoringStrategy.resources), "cpu:1, memory:1");
  const Profile& binpack = cfg->profiles[1];
  EXPECT_EQ(binpack.schedulerName, "berth-binpack");
  EXPECT_EQ(render(binpack.plugins.multiPoint.enabled),
            "PrioritySort, NodeUnschedulable, NodeName, TaintToleration:3, NodeAffinity:2, "
            "NodePorts, NodeResourcesFit:5@profiles[1].plugins.multiPoint.enabled[0], "
            "VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, PodTopologySpread:2, "
            "InterPodAffinity:2, DefaultPreemption, ImageLocality:1, DefaultBinder");
  EXPECT_EQ(fitArgs(binpack).scoringStrategy.type, ScoringStrategy::Type::MostAllocated);
  EXPECT_EQ(resources(fitArgs(binpack).scoringStrategy.resources), "cpu:2, memory:1");
  EXPECT_EQ(cfg->leaderElection.resourceName, "berth");
  EXPECT_EQ(cfg->percentageOfNodesToScore, 100);
}

TEST(Config, JsonInputIsAccepted) {
  auto cfg = parseConfiguration(R"(  {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "parallelism": 8,
    "leaderElection": {"leaderElect": false},
    "profiles": [{
      "schedulerName": "json",
      "plugins": {"score": {"enabled": [{"name": "NodeAffinity", "weight": 4}]}},
      "pluginConfig": [{"name": "NodeResourcesFit",
                        "args": {"scoringStrategy": {"type": "MostAllocated",
                                 "resources": [{"name": "cpu", "weight": 2}]}}}]
    }]
  })",
                                "config.json");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->parallelism, 8);
  EXPECT_FALSE(cfg->leaderElection.leaderElect);
  ASSERT_EQ(cfg->profiles.size(), 1u);
  EXPECT_EQ(cfg->profiles[0].schedulerName, "json");
  EXPECT_EQ(render(cfg->profiles[0].plugins.score.enabled),
            "NodeAffinity:4@profiles[0].plugins.score.enabled[0]");
  EXPECT_EQ(resources(fitArgs(cfg->profiles[0]).scoringStrategy.resources), "cpu:2");
}

TEST(Config, YamlScalarsAreTypedAsUpstream) {
  // yes/on are booleans and 0x10 is an integer in sigs.k8s.io/yaml; quoting makes a string.
  auto cfg = parse("parallelism: 0x10\nleaderElection:\n  leaderElect: off\n");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->parallelism, 16);
  EXPECT_FALSE(cfg->leaderElection.leaderElect);
  auto quoted = parse("parallelism: \"16\"\n");
  ASSERT_FALSE(quoted.ok());
  EXPECT_EQ(quoted.error().message, "config.yaml: parallelism: must be an integer, got \"16\"");
}

}  // namespace
}  // namespace berth::config

namespace berth::config {
namespace {

// The plugins as config sees them: NodePorts, NodeResourcesFit and Tidy (not in the default
// profile) exist; NodePorts takes args, which must be a mapping with "ok: true".
class FakeCatalog final : public PluginCatalog {
 public:
  bool hasPlugin(std::string_view name) const override {
    return name == "NodePorts" || name == "NodeResourcesFit" || name == "Tidy";
  }
  bool takesArgs(std::string_view name) const override { return name == "NodePorts"; }
  void checkArgs(std::string_view name, Decoder& d, const Json& args,
                 const std::string& path) const override {
    checked.push_back(std::string(name) + "@" + path);
    if (!args.is_object() || args.value("ok", false) != true) d.fail(path, "fake says no");
  }
  mutable std::vector<std::string> checked;
};

TEST(Config, PluginArgsAreDispatchedByNameToTheGivenDecoder) {
  FakeCatalog fake;
  const std::string header(kHeader);
  auto cfg = config::parseConfiguration(header + R"(profiles:
- pluginConfig:
  - name: NodePorts
    args: {ok: true}
)",
                                        "config.yaml", fake);
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(fake.checked, std::vector<std::string>{"NodePorts@profiles[0].pluginConfig[0].args"});
  const PluginConfig* raw = cfg->profiles[0].pluginConfigFor("NodePorts");
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(raw->field, "profiles[0].pluginConfig[0].args");
  EXPECT_EQ(raw->args, Json::parse(R"({"ok": true})"));
  EXPECT_EQ(cfg->profiles[0].pluginConfigFor("NodeAffinity"), nullptr);

  auto refused = config::parseConfiguration(header + R"(profiles:
- pluginConfig:
  - name: NodePorts
    args: {ok: false}
)",
                                            "config.yaml", fake);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "config.yaml: profiles[0].pluginConfig[0].args: fake says no");

  auto noArgs = config::parseConfiguration(header + R"(profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {}
)",
                                           "config.yaml", fake);
  ASSERT_FALSE(noArgs.ok());
  EXPECT_EQ(noArgs.error().message,
            "config.yaml: profiles[0].pluginConfig[0].name: plugin \"NodeResourcesFit\" takes no "
            "arguments");
}

TEST(Config, PluginsAreThoseOfTheGivenCatalog) {
  FakeCatalog fake;
  const std::string header(kHeader);
  auto cfg = config::parseConfiguration(header + R"(profiles:
- plugins:
    filter:
      enabled:
      - name: Tidy
)",
                                        "config.yaml", fake);
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->profiles[0].plugins.filter.enabled.at(0).name, "Tidy");

  const struct {
    std::string plugin;
    std::string want;
  } refused[] = {
      {"InterPodAffinity", "plugin \"InterPodAffinity\" is not supported by berth"},
      {"TaintToleration", "plugin \"TaintToleration\" is not supported by berth"},
      {"Untidy", "unknown plugin \"Untidy\""},
  };
  for (const auto& c : refused) {
    SCOPED_TRACE(c.plugin);
    auto r = config::parseConfiguration(
        header + "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: " + c.plugin +
            "\n",
        "config.yaml", fake);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "config.yaml: profiles[0].plugins.filter.enabled[0]: " + c.want);
  }
}

}  // namespace
}  // namespace berth::config

namespace berth::config {
namespace {

// --write-config-to's document reads back as the configuration it was written from.
TEST(Config, EncodedConfigurationReadsBackTheSame) {
  auto original = parse(
      "parallelism: 8\n"
      "percentageOfNodesToScore: 50\n"
      "podInitialBackoffSeconds: 2\n"
      "podMaxBackoffSeconds: 20\n"
      "leaderElection: {leaseDuration: 30s, renewDeadline: 20s, retryPeriod: 500ms}\n"
      "clientConnection: {kubeconfig: /k, qps: 7, burst: 9}\n"
      "profiles:\n"
      "- schedulerName: berth\n"
      "- schedulerName: berth-binpack\n"
      "  percentageOfNodesToScore: 30\n"
      "  plugins:\n"
      "    score:\n"
      "      disabled: [{name: NodeResourcesBalancedAllocation}]\n"
      "      enabled: [{name: NodeResourcesFit, weight: 5}]\n"
      "  pluginConfig:\n"
      "  - name: NodeResourcesFit\n"
      "    args: {scoringStrategy: {type: MostAllocated}}\n");
  ASSERT_TRUE(original.ok()) << original.error().message;
  const Json written = encodeConfiguration(*original);
  EXPECT_EQ(written["apiVersion"], "kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(written["leaderElection"]["retryPeriod"], "500ms");
  auto read = parseConfiguration(written.dump(2), "written.yaml");
  ASSERT_TRUE(read.ok()) << read.error().message << "\n" << written.dump(2);
  // Encoding is a function of the configuration: equal documents, equal configurations.
  EXPECT_EQ(encodeConfiguration(*read), written);
  EXPECT_EQ(read->parallelism, 8);
  EXPECT_EQ(read->leaderElection.leaseDurationMillis, 30000);
  EXPECT_EQ(read->clientConnection.kubeconfig, "/k");
  ASSERT_EQ(read->profiles.size(), 2U);
  // Names and weights as merged (where each came from differs: the written file's lists).
  EXPECT_EQ(written["profiles"][1]["plugins"]["score"],
            Json::parse(R"({"enabled": [{"name": "NodeResourcesFit", "weight": 5}],
                            "disabled": [{"name": "NodeResourcesBalancedAllocation"}]})"));
  ASSERT_EQ(read->profiles[1].pluginConfig.size(), 1U);
  EXPECT_EQ(read->profiles[1].pluginConfig[0].args, original->profiles[1].pluginConfig[0].args);

  auto defaults = parseConfiguration(encodeConfiguration(defaultConfiguration()).dump(), "d");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_EQ(encodeConfiguration(*defaults), encodeConfiguration(defaultConfiguration()));
}

}  // namespace
}  // namespace berth::config
