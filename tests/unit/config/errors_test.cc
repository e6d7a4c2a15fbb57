// Invalid configurations: every one is refused with a message naming the file and the field.

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "pkg/config/config.h"
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

struct ErrorCase {
  std::string_view name;
  std::string_view body;  // appended to kHeader
  std::string_view error;
};

void expectErrors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = parseConfiguration(std::string(kHeader) + std::string(c.body), "config.yaml");
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.error().code, util::ErrorCode::InvalidArgument);
    EXPECT_EQ(cfg.error().message, c.error);
  }
}

TEST(ConfigErrors, TypeMetaMustBeV1KubeSchedulerConfiguration) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::string_view error;
  };
  const Case cases[] = {
      {"empty file", "",
       "config.yaml: apiVersion: required, must be "
       "\"kubescheduler.config.k8s.io/v1\""},
      {"v1beta3",
       "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: "
       "KubeSchedulerConfiguration\n",
       "config.yaml: apiVersion: unsupported version \"kubescheduler.config.k8s.io/v1beta3\", "
       "must be \"kubescheduler.config.k8s.io/v1\" (v1beta* configurations are not supported: "
       "convert to v1)"},
      {"another group", "apiVersion: v1\nkind: KubeSchedulerConfiguration\n",
       "config.yaml: apiVersion: unsupported version \"v1\", must be "
       "\"kubescheduler.config.k8s.io/v1\""},
      {"missing kind", "apiVersion: kubescheduler.config.k8s.io/v1\n",
       "config.yaml: kind: required, must be \"KubeSchedulerConfiguration\""},
      {"wrong kind", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n",
       "config.yaml: kind: must be \"KubeSchedulerConfiguration\", got \"Pod\""},
      {"not a mapping", "- a\n- b\n",
       "config.yaml: must be a KubeSchedulerConfiguration mapping, got a list"},
      {"invalid YAML", "apiVersion: [a\n",
       "config.yaml: invalid YAML at line 2, column 1: end of sequence flow not found"},
      {"invalid JSON", "{\"apiVersion\": }",
       "config.yaml: invalid JSON: parse error at line 1, column 16: syntax error while parsing "
       "value - unexpected '}'; expected '[', '{', or a literal"},
      {"two documents", "a: 1\n---\nb: 2\n",
       "config.yaml: expected one YAML document, found several"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = parseConfiguration(c.text, "config.yaml");
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.error().message, c.error);
  }
}

TEST(ConfigErrors, UnknownAndUnsupportedFieldsAreErrors) {
  expectErrors({
      {"unknown top-level field", "percentageOfNodesToScor: 50\n",
       "config.yaml: percentageOfNodesToScor: unknown field"},
      {"extenders", "extenders:\n- urlPrefix: http://x\n",
       "config.yaml: extenders: not supported by berth"},
      {"enableProfiling", "enableProfiling: false\n",
       "config.yaml: enableProfiling: not supported by berth"},
      {"delayCacheUntilActive", "delayCacheUntilActive: true\n",
       "config.yaml: delayCacheUntilActive: not supported by berth"},
      {"featureGates is not a config field", "featureGates: {}\n",
       "config.yaml: featureGates: unknown field"},
      {"misspelt extension point", "profiles:\n- plugins:\n    scroe: {}\n",
       "config.yaml: profiles[0].plugins.scroe: unknown field"},
      {"placement extension point", "profiles:\n- plugins:\n    placementScore: {}\n",
       "config.yaml: profiles[0].plugins.placementScore: not supported by berth"},
      {"unknown plugin set field", "profiles:\n- plugins:\n    score:\n      enable: []\n",
       "config.yaml: profiles[0].plugins.score.enable: unknown field"},
      {"unknown plugin field",
       "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeAffinity\n"
       "        wieght: 2\n",
       "config.yaml: profiles[0].plugins.score.enabled[0].wieght: unknown field"},
      {"profile percentageOfPlacementsToScore", "profiles:\n- percentageOfPlacementsToScore: 5\n",
       "config.yaml: profiles[0].percentageOfPlacementsToScore: not supported by berth"},
      {"unknown leaderElection field", "leaderElection:\n  leaderElection: true\n",
       "config.yaml: leaderElection.leaderElection: unknown field"},
      {"unknown args field",
       "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
       "      scoringStrategy:\n        type: LeastAllocated\n        shape: []\n",
       "config.yaml: profiles[0].pluginConfig[0].args.scoringStrategy.shape: unknown field"},
      {"unknown affinity field",
       "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
       "        requiredDuringSchedulingRequiredDuringExecution: {}\n",
       "config.yaml: profiles[0].pluginConfig[0].args.addedAffinity."
       "requiredDuringSchedulingRequiredDuringExecution: unknown field"},
      {"duplicate YAML key", "parallelism: 2\nparallelism: 3\n",
       "config.yaml: parallelism: duplicate field"},
  });
}

TEST(ConfigErrors, EveryFieldErrorIsReportedAtOnce) {
  // The walkthrough's multi-problem file: four independent mistakes, one run.
  expectErrors({
      {"four problems",
       "percentageOfNodesToScore: 150\n"
       "enableProfiling: true\n"
       "extenders: [{urlPrefix: http://x}]\n"
       "profiles:\n"
       "- schedulerName: a\n"
       "  plugins:\n"
       "    filter:\n"
       "      enabled:\n"
       "      - name: DynamicResources\n"
       "      - name: Magic\n"
       "- schedulerName: b\n"
       "  percentageOfNodesToScore: -1\n",
       "config.yaml: 6 errors:\n"
       "  percentageOfNodesToScore: not in valid range [0-100], got 150\n"
       "  enableProfiling: not supported by berth\n"
       "  extenders: not supported by berth\n"
       "  profiles[0].plugins.filter.enabled[0]: plugin \"DynamicResources\" is not supported "
       "by berth: pods with spec.resourceClaims are refused (left Pending with a "
       "FailedScheduling event)\n"
       "  profiles[0].plugins.filter.enabled[1]: unknown plugin \"Magic\"\n"
       "  profiles[1].percentageOfNodesToScore: not in valid range [0-100], got -1"},
      {"two fields of one block", "leaderElection: {leaseDuration: x, renewDeadline: 1z}\n",
       "config.yaml: 2 errors:\n"
       "  leaderElection.leaseDuration: invalid duration \"x\", want a Go duration like "
       "\"15s\", \"1m30s\" or \"500ms\"\n"
       "  leaderElection.renewDeadline: invalid duration \"1z\", want a Go duration like "
       "\"15s\", \"1m30s\" or \"500ms\""},
  });
}

TEST(ConfigErrors, DuplicateJsonKeysAreErrors) {
  auto cfg = parseConfiguration(
      R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "a"},
                       {"schedulerName": "b", "plugins": {"score": {}, "score": {}}}]})",
      "config.json");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().message, "config.json: profiles[1].plugins.score: duplicate field");
}

TEST(ConfigErrors, PluginsBerthLacksAreErrors) {
  expectErrors({
      {"upstream plugin enabled",
       "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: DynamicResources\n",
       "config.yaml: profiles[0].plugins.multiPoint.enabled[0]: plugin \"DynamicResources\" is "
       "not supported by berth: pods with spec.resourceClaims are refused (left Pending with a "
       "FailedScheduling event)"},
      {"unknown plugin enabled",
       "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: Magic\n",
       "config.yaml: profiles[0].plugins.score.enabled[0]: unknown plugin \"Magic\""},
      {"unknown plugin disabled",
       "profiles:\n- plugins:\n    filter:\n      disabled:\n      - name: NodePort\n",
       "config.yaml: profiles[0].plugins.filter.disabled[0]: unknown plugin \"NodePort\""},
      {"* cannot be enabled",
       "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: '*'\n",
       "config.yaml: profiles[0].plugins.filter.enabled[0]: unknown plugin \"*\""},
      {"plugin without name", "profiles:\n- plugins:\n    filter:\n      enabled:\n      - {}\n",
       "config.yaml: profiles[0].plugins.filter.enabled[0].name: required"},
      {"plugin listed twice",
       "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeAffinity\n"
       "      - name: NodeAffinity\n",
       "config.yaml: profiles[0].plugins.score.enabled[1]: plugin \"NodeAffinity\" is listed "
       "twice (also profiles[0].plugins.score.enabled[0])"},
      {"zero weight",
       "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeAffinity\n"
       "        weight: 0\n",
       "config.yaml: profiles[0].plugins.score.enabled[0].weight: must be positive, got 0"},
      {"negative weight",
       "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: TaintToleration\n"
       "        weight: -1\n",
       "config.yaml: profiles[0].plugins.multiPoint.enabled[0].weight: must be positive, got -1"},
      {"weight on a disabled plugin",
       "profiles:\n- plugins:\n    score:\n      disabled:\n      - name: NodeAffinity\n"
       "        weight: 2\n",
       "config.yaml: profiles[0].plugins.score.disabled[0].weight: has no effect on a disabled "
       "plugin"},
      {"weight that is not an integer",
       "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeAffinity\n"
       "        weight: 1.5\n",
       "config.yaml: profiles[0].plugins.score.enabled[0].weight: must be an integer, got 1.5"},
      {"weight beyond int32",
       "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeAffinity\n"
       "        weight: 3000000000\n",
       "config.yaml: profiles[0].plugins.score.enabled[0].weight: 3000000000 does not fit in "
       "int32"},
      {"plugins is a list", "profiles:\n- plugins: []\n",
       "config.yaml: profiles[0].plugins: must be a mapping, got a list"},
      {"enabled is a mapping", "profiles:\n- plugins:\n    score:\n      enabled: {}\n",
       "config.yaml: profiles[0].plugins.score.enabled: must be a list, got a mapping"},
  });
}

TEST(ConfigErrors, PluginConfigErrorsNameTheEntry) {
  expectErrors({
      {"args for an upstream plugin",
       "profiles:\n- pluginConfig:\n  - name: DynamicResources\n    args: {}\n",
       "config.yaml: profiles[0].pluginConfig[0].name: plugin \"DynamicResources\" is not "
       "supported by berth: pods with spec.resourceClaims are refused (left Pending with a "
       "FailedScheduling event)"},
      {"args for an unknown plugin", "profiles:\n- pluginConfig:\n  - name: Foo\n",
       "config.yaml: profiles[0].pluginConfig[0].name: unknown plugin \"Foo\""},
      {"args for a plugin without arguments",
       "profiles:\n- pluginConfig:\n  - name: TaintToleration\n    args: {}\n",
       "config.yaml: profiles[0].pluginConfig[0].name: plugin \"TaintToleration\" takes no "
       "arguments"},
      {"entry without name", "profiles:\n- pluginConfig:\n  - args: {}\n",
       "config.yaml: profiles[0].pluginConfig[0].name: required"},
      {"duplicate entry",
       "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity\n",
       "config.yaml: profiles[0].pluginConfig[1].name: duplicate entry for plugin "
       "\"NodeAffinity\" (also profiles[0].pluginConfig[0])"},
      {"args of another kind",
       "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
       "      kind: NodeAffinityArgs\n",
       "config.yaml: profiles[0].pluginConfig[0].args.kind: must be \"NodeResourcesFitArgs\", got "
       "\"NodeAffinityArgs\""},
      {"args of another version",
       "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n"
       "      apiVersion: kubescheduler.config.k8s.io/v1beta3\n",
       "config.yaml: profiles[0].pluginConfig[0].args.apiVersion: must be "
       "\"kubescheduler.config.k8s.io/v1\", got \"kubescheduler.config.k8s.io/v1beta3\""},
  });
}

TEST(ConfigErrors, PluginArgsAreValidatedAsUpstream) {
  const std::string fit = "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n";
  const std::string balanced =
      "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n";
  const std::string p = "config.yaml: profiles[0].pluginConfig[0].args.";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {fit + "      scoringStrategy: {type: Fancy}\n",
       p + "scoringStrategy.type: unsupported value \"Fancy\", supported values: "
           "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
      {fit + "      scoringStrategy: {resources: [{name: cpu}]}\n",
       p + "scoringStrategy.type: required, one of \"LeastAllocated\", \"MostAllocated\", "
           "\"RequestedToCapacityRatio\""},
      {fit + "      scoringStrategy:\n        type: MostAllocated\n"
             "        resources: [{name: cpu, weight: 101}]\n",
       p + "scoringStrategy.resources[0].weight: resource weight of cpu not in valid range "
           "(0, 100], got 101"},
      {fit + "      scoringStrategy:\n        type: MostAllocated\n"
             "        resources: [{name: cpu, weight: -2}]\n",
       p + "scoringStrategy.resources[0].weight: resource weight of cpu not in valid range "
           "(0, 100], got -2"},
      {fit + "      scoringStrategy:\n        type: MostAllocated\n"
             "        resources: [{weight: 2}]\n",
       p + "scoringStrategy.resources[0].name: required"},
      {fit + "      scoringStrategy:\n        type: MostAllocated\n"
             "        resources: [{name: cpu}, {name: cpu}]\n",
       p + "scoringStrategy.resources[1].name: duplicate resource \"cpu\""},
      {fit + "      scoringStrategy: {type: RequestedToCapacityRatio}\n",
       p + "scoringStrategy.requestedToCapacityRatio: required when type is "
           "RequestedToCapacityRatio"},
      {fit + "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
             "        requestedToCapacityRatio: {shape: []}\n",
       p + "scoringStrategy.requestedToCapacityRatio.shape: at least one point must be "
           "specified"},
      {fit + "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
             "        requestedToCapacityRatio:\n          shape:\n"
             "          - {utilization: 50, score: 1}\n          - {utilization: 50, score: 2}\n",
       p + "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: values must be "
           "sorted in increasing order"},
      {fit + "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
             "        requestedToCapacityRatio:\n          shape:\n"
             "          - {utilization: 0, score: 0}\n          - {utilization: 101, score: 2}\n",
       p + "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: not in valid range "
           "[0, 100], got 101"},
      {fit + "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
             "        requestedToCapacityRatio:\n          shape:\n"
             "          - {utilization: 0, score: 11}\n",
       p + "scoringStrategy.requestedToCapacityRatio.shape[0].score: not in valid range "
           "[0, 10], got 11"},
      {fit + "      scoringStrategy:\n        type: LeastAllocated\n"
             "        requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}]}\n",
       p + "scoringStrategy.requestedToCapacityRatio: must not be set when type is not "
           "RequestedToCapacityRatio"},
      {fit + "      ignoredResources: [\"bad name\"]\n",
       p + "ignoredResources[0]: invalid resource name \"bad name\": name part must consist of "
           "alphanumeric characters, '-', '_' or '.', and must start and end with an "
           "alphanumeric character"},
      {fit + "      ignoredResourceGroups: [example.com/gpu]\n",
       p + "ignoredResourceGroups[0]: resource group name can't contain '/', got "
           "\"example.com/gpu\""},
      {fit + "      ignoredResources: cpu\n", p + "ignoredResources: must be a list, got \"cpu\""},
      {balanced + "      resources: [{name: cpu, weight: 2}]\n",
       p + "resources[0].weight: must be 1, got 2"},
      {balanced + "      resources: [{name: cpu}, {name: cpu}]\n",
       p + "resources[1].name: duplicate resource \"cpu\""},
  };
  for (const auto& [body, error] : cases) {
    SCOPED_TRACE(body);
    auto cfg = parseConfiguration(std::string(kHeader) + body, "config.yaml");
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.error().message, error);
  }
}

TEST(ConfigErrors, NodeAffinityArgsAreValidated) {
  const std::string head =
      "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n";
  const std::string required = head +
                               "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                               "          nodeSelectorTerms:\n";
  const std::string p = "config.yaml: profiles[0].pluginConfig[0].args.addedAffinity.";
  const std::string r = p + "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {required + "          - matchExpressions: [{key: a, operator: Near, values: [x]}]\n",
       r + "[0].matchExpressions[0].operator: unsupported value \"Near\", supported values: "
           "\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\""},
      {required + "          - matchExpressions: [{key: a, operator: In}]\n",
       r + "[0].matchExpressions[0].values: for 'in', 'notin' operators, values set can't be "
           "empty"},
      {required + "          - matchExpressions: [{key: a, operator: Exists, values: [x]}]\n",
       r + "[0].matchExpressions[0].values: values set must be empty for exists and does not "
           "exist"},
      {required + "          - matchExpressions: [{key: a, operator: Gt, values: [x]}]\n",
       r + "[0].matchExpressions[0].values[0]: for 'Gt', 'Lt' operators, the value must be an "
           "integer"},
      {required + "          - matchExpressions: [{key: a, operator: Lt, values: [\"1\", "
                  "\"2\"]}]\n",
       r + "[0].matchExpressions[0].values: for 'Gt', 'Lt' operators, exactly one value is "
           "required"},
      {required + "          - matchExpressions: [{key: \"a b\", operator: Exists}]\n",
       r + "[0].matchExpressions[0].key: invalid label key \"a b\": name part must consist of "
           "alphanumeric characters, '-', '_' or '.', and must start and end with an "
           "alphanumeric character"},
      {required + "          - matchExpressions: [{key: a, operator: In, values: [\"-x\"]}]\n",
       r + "[0].matchExpressions[0].values[0]: invalid label value \"-x\": a valid label "
           "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
           "must start and end with an alphanumeric character"},
      {required + "          - matchFields: [{key: metadata.name, operator: Exists}]\n",
       r + "[0].matchFields[0].operator: unsupported value \"Exists\", supported values: "
           "\"In\", \"NotIn\""},
      {required + "          - matchFields: [{key: metadata.labels, operator: In, values: "
                  "[x]}]\n",
       r + "[0].matchFields[0].key: unsupported value \"metadata.labels\", supported values: "
           "\"metadata.name\""},
      {required + "          - matchFields: [{key: metadata.name, operator: In, values: [a, "
                  "b]}]\n",
       r + "[0].matchFields[0].values: must have one element"},
      {required + "          []\n", r + ": must have at least one node selector term"},
      {head + "        requiredDuringSchedulingIgnoredDuringExecution: {}\n", r + ": required"},
      {head + "        preferredDuringSchedulingIgnoredDuringExecution:\n"
              "        - preference: {matchExpressions: [{key: a, operator: Exists}]}\n",
       p + "preferredDuringSchedulingIgnoredDuringExecution[0].weight: required, in the range "
           "[1, 100]"},
      {head + "        preferredDuringSchedulingIgnoredDuringExecution:\n"
              "        - weight: 101\n"
              "          preference: {matchExpressions: [{key: a, operator: Exists}]}\n",
       p + "preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be in the range "
           "[1, 100], got 101"},
  };
  for (const auto& [body, error] : cases) {
    SCOPED_TRACE(body);
    auto cfg = parseConfiguration(std::string(kHeader) + body, "config.yaml");
    ASSERT_FALSE(cfg.ok());
    EXPECT_EQ(cfg.error().message, error);
  }
}

TEST(ConfigErrors, GlobalSettingsAreValidatedAsUpstream) {
  expectErrors({
      {"percentage above 100", "percentageOfNodesToScore: 101\n",
       "config.yaml: percentageOfNodesToScore: not in valid range [0-100], got 101"},
      {"negative profile percentage", "profiles:\n- percentageOfNodesToScore: -1\n",
       "config.yaml: profiles[0].percentageOfNodesToScore: not in valid range [0-100], got -1"},
      {"zero parallelism", "parallelism: 0\n",
       "config.yaml: parallelism: must be greater than zero, got 0"},
      {"zero initial backoff", "podInitialBackoffSeconds: 0\n",
       "config.yaml: podInitialBackoffSeconds: must be greater than 0, got 0"},
      {"max backoff below initial", "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
       "config.yaml: podMaxBackoffSeconds: must be greater than or equal to "
       "podInitialBackoffSeconds (5), got 2"},
      {"max backoff below the default initial", "podMaxBackoffSeconds: 0\n",
       "config.yaml: podMaxBackoffSeconds: must be greater than or equal to "
       "podInitialBackoffSeconds (1), got 0"},
      {"duplicate scheduler name", "profiles:\n- schedulerName: a\n- schedulerName: a\n",
       "config.yaml: profiles[1].schedulerName: duplicate scheduler name \"a\" (also "
       "profiles[0])"},
      {"duplicate of the default name", "profiles:\n- schedulerName: berth\n- {}\n",
       "config.yaml: profiles[1].schedulerName: required when there are several profiles"},
      {"empty scheduler name", "profiles:\n- schedulerName: \"\"\n",
       "config.yaml: profiles[0].schedulerName: must not be empty"},
      {"different queue sort",
       "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
       "      disabled: [{name: PrioritySort}]\n",
       "config.yaml: profiles[1].plugins.queueSort: must be the same for all profiles (none "
       "here, \"PrioritySort\" in profiles[0])"},
      {"queue sort dropped by multiPoint in one profile",
       "profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n"
       "      disabled: [{name: '*'}]\n- schedulerName: b\n",
       "config.yaml: profiles[1].plugins.queueSort: must be the same for all profiles "
       "(\"PrioritySort\" here, none in profiles[0])"},
      {"two queue sort plugins",
       "profiles:\n- plugins:\n    queueSort:\n"
       "      enabled: [{name: PrioritySort}, {name: NodeName}]\n",
       "config.yaml: profiles[0].plugins.queueSort.enabled: only one queue sort plugin can be "
       "enabled"},
      {"lease not longer than renew deadline",
       "leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n",
       "config.yaml: leaderElection.leaseDuration: must be greater than renewDeadline (10s), got "
       "10s"},
      {"renew deadline within jittered retry",
       "leaderElection:\n  renewDeadline: 2400ms\n  retryPeriod: 2s\n",
       "config.yaml: leaderElection.renewDeadline: must be greater than 1.2 × retryPeriod (2s), "
       "got 2.4s"},
      {"zero retry period", "leaderElection:\n  retryPeriod: 0s\n",
       "config.yaml: leaderElection.retryPeriod: must be greater than zero, got 0s"},
      {"bad duration", "leaderElection:\n  leaseDuration: 15\n",
       "config.yaml: leaderElection.leaseDuration: invalid duration 15, want a Go duration like "
       "\"15s\", \"1m30s\" or \"500ms\""},
      {"duration without unit", "leaderElection:\n  leaseDuration: \"1m30\"\n",
       "config.yaml: leaderElection.leaseDuration: invalid duration \"1m30\", want a Go duration "
       "like \"15s\", \"1m30s\" or \"500ms\""},
      {"endpoints lock", "leaderElection:\n  resourceLock: endpoints\n",
       "config.yaml: leaderElection.resourceLock: must be \"leases\", got \"endpoints\""},
      {"protobuf", "clientConnection:\n  contentType: application/vnd.kubernetes.protobuf\n",
       "config.yaml: clientConnection.contentType: \"application/vnd.kubernetes.protobuf\" is not "
       "supported by berth (berth speaks JSON only: use \"application/json\")"},
      {"negative qps", "clientConnection:\n  qps: -1\n",
       "config.yaml: clientConnection.qps: must be non-negative, got -1"},
      // sigs.k8s.io/yaml refuses infinity when it converts YAML to JSON, before any field is read.
      {"infinite qps", "clientConnection:\n  qps: .inf\n",
       "config.yaml: invalid YAML at line 4, column 8: unsupported value: .inf (JSON has no NaN or "
       "infinity)"},
      {"negative burst", "clientConnection:\n  burst: -5\n",
       "config.yaml: clientConnection.burst: must be non-negative, got -5"},
      {"string instead of bool", "leaderElection:\n  leaderElect: \"true\"\n",
       "config.yaml: leaderElection.leaderElect: must be true or false, got \"true\""},
      {"profiles is a mapping", "profiles: {schedulerName: a}\n",
       "config.yaml: profiles: must be a list, got a mapping"},
  });
}

TEST(ConfigErrors, LeaderElectionIsNotValidatedWhenDisabled) {
  auto cfg = parseConfiguration(std::string(kHeader) +
                                    "leaderElection:\n  leaderElect: false\n"
                                    "  leaseDuration: 1s\n  renewDeadline: 5s\n"
                                    "  resourceLock: endpoints\n",
                                "config.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->leaderElection.resourceLock, "endpoints");
}

// --- Robustness ----------------------------------------------------------------------------------

TEST(ConfigErrors, GarbageNeverCrashes) {
  const std::string valid =
      std::string(kHeader) +
      "profiles:\n- schedulerName: a\n  plugins:\n    multiPoint:\n      enabled:\n"
      "      - {name: TaintToleration, weight: 4}\n  pluginConfig:\n"
      "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
      "        type: RequestedToCapacityRatio\n        requestedToCapacityRatio:\n"
      "          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]\n"
      "  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
      "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
      "          - matchExpressions: [{key: a, operator: In, values: [b]}]\n"
      "leaderElection: {leaseDuration: 20s}\n";
  ASSERT_TRUE(parseConfiguration(valid, "fuzz").ok());
  // Every prefix: truncated files.
  for (size_t n = 0; n < valid.size(); ++n) {
    auto cfg = parseConfiguration(valid.substr(0, n), "fuzz");
    if (!cfg.ok()) {
      EXPECT_EQ(cfg.error().message.rfind("fuzz: ", 0), 0u) << cfg.error().message;
    }
  }
  // Random byte flips, deletions and insertions of YAML and JSON punctuation, in both syntaxes.
  const std::string json =
      R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",)"
      R"( "profiles": [{"schedulerName": "a", "plugins": {"score": {"enabled": [{"name":)"
      R"( "NodeAffinity", "weight": 2}]}}, "pluginConfig": [{"name": "NodeResourcesFit",)"
      R"( "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]})";
  ASSERT_TRUE(parseConfiguration(json, "fuzz").ok());
  std::mt19937 rng(42);
  const std::string punctuation = "{}[]:,-'\"&*!|>#%@`\t\n ?0123456789";
  for (const std::string& source : {valid, json}) {
    int accepted = 0;
    for (int i = 0; i < 2000; ++i) {
      std::string text = source;
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !text.empty(); ++e) {
        size_t pos = rng() % text.size();
        switch (rng() % 3) {
          case 0:
            text[pos] = punctuation[rng() % punctuation.size()];
            break;
          case 1:
            text.erase(pos, 1 + rng() % 8);
            break;
          default:
            text.insert(pos, 1, static_cast<char>(rng() % 256));
            break;
        }
      }
      auto cfg = parseConfiguration(text, "fuzz");
      if (cfg.ok()) {
        ++accepted;
      } else {
        EXPECT_EQ(cfg.error().code, util::ErrorCode::InvalidArgument) << cfg.error().message;
        EXPECT_EQ(cfg.error().message.rfind("fuzz: ", 0), 0u) << cfg.error().message;
      }
    }
    EXPECT_GT(accepted, 0);  // some edits are harmless (e.g. inside a value)
  }
}

TEST(ConfigErrors, HostileStructuresFailCleanly) {
  std::string deep = std::string(kHeader) + "profiles: ";
  for (int i = 0; i < 5000; ++i) {
    deep += "[";
  }
  EXPECT_FALSE(parseConfiguration(deep, "deep").ok());
  std::string deepJson = "{\"apiVersion\": \"kubescheduler.config.k8s.io/v1\", \"x\": ";
  for (int i = 0; i < 100000; ++i) {
    deepJson += "[";
  }
  EXPECT_FALSE(parseConfiguration(deepJson, "deep").ok());
  // Exponential alias expansion.
  std::string laughs = std::string(kHeader) + "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 0; k < 9; ++k) {
      laughs += ", " + prev;
    }
    laughs += "]\n";
  }
  auto cfg = parseConfiguration(laughs, "laughs");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().message.rfind("laughs: ", 0), 0u);
}

}  // namespace
}  // namespace berth::config
