// End-to-end tests of `berth simulate`: the real binary, real files, exact output.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/objects.h"

namespace berth {
namespace {

using test::readFile;

struct Output {
  int exitCode = -1;
  std::string out;  // stdout and stderr together
};

Output runBerth(const std::string& args) {
  std::string cmd = std::string(BERTH_BINARY) + " " + args + " 2>&1";
  Output r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string writeTemp(const std::string& name, const std::string& text) {
  std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// Golden files are regenerated with: berth simulate ... > tests/testdata/simulate/<name>
void expectGolden(const std::string& args, const std::string& golden) {
  Output r = runBerth(args);
  ASSERT_EQ(r.exitCode, 0) << r.out;
  EXPECT_EQ(r.out, readFile("tests/testdata/simulate/" + golden)) << "berth " << args;
}

TEST(Simulate, ExampleClusterPlacesPodsAsGolden) {
  expectGolden("simulate --cluster examples/cluster.yaml --output json", "example.json");
}

TEST(Simulate, ExampleClusterExplainsEveryNodeAsGolden) {
  expectGolden("simulate --cluster examples/cluster.yaml --config examples/config.yaml --explain",
               "example-explain.txt");
}

TEST(Simulate, ReportsUpstreamFitErrorMessage) {
  Output r = runBerth("simulate --cluster examples/cluster.yaml --output json");
  ASSERT_EQ(r.exitCode, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& res : j["results"]) {
    if (res["pod"] == "batch/big-batch") {
      found = true;
      EXPECT_TRUE(res["node"].is_null());
      EXPECT_EQ(res["message"],
                "0/6 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated "
                "taint {gpu: true}, 3 Insufficient cpu. preemption: 0/6 nodes are available: 3 No "
                "preemption victims found for incoming pod, 3 Preemption is not helpful for "
                "scheduling.");
    }
  }
  EXPECT_TRUE(found);
}

TEST(Simulate, IgnoresOtherSchedulersUnlessAllPending) {
  auto pods = [](const Output& r) {
    std::string names;
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& res : j["results"]) names += res["pod"].get<std::string>() + " ";
    return names;
  };
  Output mine = runBerth("simulate --cluster examples/cluster.yaml --output json");
  Output all = runBerth("simulate --cluster examples/cluster.yaml --output json --all-pending");
  ASSERT_EQ(mine.exitCode, 0) << mine.out;
  ASSERT_EQ(all.exitCode, 0) << all.out;
  EXPECT_EQ(pods(mine).find("default/other-scheduler"), std::string::npos);
  EXPECT_NE(pods(all).find("default/other-scheduler"), std::string::npos);
}

TEST(Simulate, SameSeedSameResult) {
  Output a = runBerth("simulate --cluster examples/cluster.yaml --output json --seed 7");
  Output b = runBerth("simulate --cluster examples/cluster.yaml --output json --seed 7");
  EXPECT_EQ(a.out, b.out);
}

// Two full nodes of batch pods; the one on n1 is protected by a PodDisruptionBudget, so the
// high-priority pod preempts on n2.
constexpr const char* kPreemptionCluster = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "2", memory: 16Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2}
  status: {allocatable: {cpu: "2", memory: 16Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: batch-1, namespace: jobs, labels: {app: batch}}
  spec:
    nodeName: n1
    priority: 10
    containers: [{name: c, resources: {requests: {cpu: "2"}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: report, namespace: jobs, labels: {app: report}}
  spec:
    nodeName: n2
    priority: 10
    containers: [{name: c, resources: {requests: {cpu: "2"}}}]
  status: {phase: Running}
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: batch, namespace: jobs}
  spec: {selector: {matchLabels: {app: batch}}}
  status: {disruptionsAllowed: 0}
- apiVersion: v1
  kind: Pod
  metadata: {name: api, namespace: prod}
  spec:
    schedulerName: berth
    priority: 1000
    containers: [{name: c, resources: {requests: {cpu: "1"}}}]
)";

TEST(Simulate, PreemptsLowerPriorityPodsAvoidingAPodDisruptionBudget) {
  const std::string path = writeTemp("preemption.yaml", kPreemptionCluster);
  Output r = runBerth("simulate --cluster " + path + " --output json");
  ASSERT_EQ(r.exitCode, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& api = j["results"][0];
  EXPECT_EQ(api["pod"], "prod/api");
  EXPECT_EQ(api["node"], "n2");
  EXPECT_EQ(api["nominatedNode"], "n2");
  EXPECT_EQ(api["victims"], nlohmann::json::array({"jobs/report"}));
  EXPECT_EQ(j["evicted"],
            nlohmann::json::parse(R"([{"pod": "jobs/report", "node": "n2", "by": "prod/api"}])"));

  Output table = runBerth("simulate --cluster " + path);
  ASSERT_EQ(table.exitCode, 0) << table.out;
  EXPECT_NE(table.out.find("prod/api   n2     Scheduled after preempting jobs/report\n"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("evicted jobs/report from node n2 to make room for prod/api\n"),
            std::string::npos)
      << table.out;
}

TEST(Simulate, NoPreemptionFlagLeavesThePodPending) {
  const std::string path = writeTemp("preemption.yaml", kPreemptionCluster);
  Output r = runBerth("simulate --cluster " + path + " --output json --no-preemption");
  ASSERT_EQ(r.exitCode, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["results"][0]["node"].is_null());
  EXPECT_EQ(j["results"][0]["message"], "0/2 nodes are available: 2 Insufficient cpu.");
  EXPECT_FALSE(j.contains("evicted"));
}

TEST(Simulate, BadQuantityExitsTwoNamingObjectAndField) {
  std::string path = writeTemp("bad-quantity.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default}
spec:
  schedulerName: berth
  containers: [{name: c, resources: {requests: {cpu: abc}}}]
)");
  Output r = runBerth("simulate --cluster " + path);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(
      r.out.find(
          "pod default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity \"abc\""),
      std::string::npos)
      << r.out;
}

TEST(Simulate, ReportsAPodWithAFieldBerthDoesNotImplementAsUnschedulable) {
  std::string path = writeTemp("unsupported-field.yaml", R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: db-0, namespace: default}
  spec:
    schedulerName: berth
    containers: [{name: c, resources: {requests: {cpu: 100m}}}]
    volumes:
    - {name: config, configMap: {name: db}}
    resourceClaims:
    - {name: gpu, resourceClaimName: gpu-db-0}
)");
  for (const char* extra : {"", " --explain"}) {
    Output r = runBerth("simulate --cluster " + path + extra);
    EXPECT_NE(r.out.find("0/1 nodes are available: berth does not implement "
                         "spec.resourceClaims (DynamicResources)."),
              std::string::npos)
        << extra << "\n"
        << r.out;
    EXPECT_EQ(r.out.find("n1  fits"), std::string::npos) << r.out;
  }
}

// A pod's inter-pod constraint that no API server would accept is bad input in the cluster file,
// not a pod that fits nowhere.
TEST(Simulate, BadInterPodConstraintExitsTwoNamingPodAndField) {
  const std::string node = R"(- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1, zone: a}}
  status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
)";
  const std::string skew =
      writeTemp("bad-skew.yaml", "apiVersion: v1\nkind: List\nitems:\n" + node +
                                     R"(- apiVersion: v1
  kind: Pod
  metadata: {name: web-1, namespace: default, labels: {app: web}}
  spec:
    schedulerName: berth
    containers: [{name: c}]
    topologySpreadConstraints:
    - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,
       labelSelector: {matchLabels: {app: web}}}
)");
  Output r = runBerth("simulate --cluster " + skew);
  EXPECT_EQ(r.exitCode, 2) << r.out;
  EXPECT_NE(r.out.find("pod default/web-1: spec.topologySpreadConstraints[0].maxSkew: Invalid "
                       "value: 0: must be greater than zero"),
            std::string::npos)
      << r.out;

  const std::string selector =
      writeTemp("bad-anti-affinity.yaml", "apiVersion: v1\nkind: List\nitems:\n" + node +
                                              R"(- apiVersion: v1
  kind: Pod
  metadata: {name: web-2, namespace: default, labels: {app: web}}
  spec:
    schedulerName: berth
    containers: [{name: c}]
    affinity:
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
        - labelSelector:
            matchExpressions: [{key: app, operator: Matches, values: [web]}]
          topologyKey: kubernetes.io/hostname
)");
  r = runBerth("simulate --cluster " + selector + " --explain");
  EXPECT_EQ(r.exitCode, 2) << r.out;
  EXPECT_NE(r.out.find("pod default/web-2: spec.affinity.podAntiAffinity."
                       "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: "
                       "\"Matches\" is not a valid pod selector operator"),
            std::string::npos)
      << r.out;
}

TEST(Simulate, MissingFileExitsTwo) {
  Output r = runBerth("simulate --cluster /nonexistent/cluster.yaml");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.out.find("/nonexistent/cluster.yaml"), std::string::npos) << r.out;
}

TEST(Simulate, BrokenConfigExitsTwoNamingField) {
  std::string path = writeTemp("bad-config.yaml", R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: berth
  plugins:
    score:
      enabled:
      - name: NoSuchPlugin
)");
  Output r = runBerth("simulate --cluster examples/cluster.yaml --config " + path);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.out.find("NoSuchPlugin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("profiles[0].plugins.score.enabled[0]"), std::string::npos) << r.out;
}

TEST(Simulate, DrainBlockedByABudgetAsGolden) {
  expectGolden("simulate --cluster examples/whatif/cluster.yaml --drain node-1", "drain.txt");
}

TEST(Simulate, DrainWithAddNodesFindsTheNodesTheDrainNeedsAsGolden) {
  expectGolden(
      "simulate --cluster examples/whatif/cluster.yaml --drain node-1,node-2 "
      "--add-nodes examples/whatif/node.yaml --output json",
      "drain-add-nodes.json");
}

TEST(Simulate, AddPodsCountsTheReplicasThatFitAsGolden) {
  expectGolden(
      "simulate --cluster examples/whatif/cluster.yaml --add-pods examples/whatif/pod.yaml",
      "add-pods.txt");
}

TEST(Simulate, BadWhatIfArgumentsExitTwoNamingTheFlagAndValue) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--add-nodes examples/whatif/pod.yaml",
       "--add-nodes: examples/whatif/pod.yaml holds no Node"},
      {"--add-pods examples/whatif/node.yaml",
       "--add-pods: examples/whatif/node.yaml holds no Pod"},
      {"--add-pods examples/whatif/pod.yaml:0",
       "--add-pods: COUNT in \"examples/whatif/pod.yaml:0\" must be a positive integer"},
      {"--add-nodes examples/whatif/node.yaml:many",
       "--add-nodes: COUNT in \"examples/whatif/node.yaml:many\" must be a positive integer"},
      {"--drain node-9", "--drain: node \"node-9\" is not in the cluster"},
      {"--drain-selector pool=none", "--drain-selector: no node matches it"},
      {"--add-nodes examples/whatif/node.yaml --add-pods examples/whatif/pod.yaml",
       "--add-nodes and --add-pods cannot both search"},
  };
  for (const auto& [flags, want] : cases) {
    Output r = runBerth("simulate --cluster examples/whatif/cluster.yaml " + flags);
    EXPECT_EQ(r.exitCode, 2) << flags << ": " << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << flags << ": " << r.out;
  }
}

TEST(Simulate, UnknownFlagExitsTwo) {
  Output r = runBerth("simulate --cluster examples/cluster.yaml --bogus");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.out.find("unknown flag: --bogus"), std::string::npos) << r.out;
}

TEST(Simulate, AcceptsKubectlJsonList) {
  Output r =
      runBerth("simulate --cluster tests/testdata/kubectl-list.json --all-pending --output json");
  EXPECT_EQ(r.exitCode, 0) << r.out;
  EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
}

TEST(Simulate, NamesTheKindsItIgnoresInOneLineOnStderr) {
  const std::string path =
      writeTemp("mixed.json", R"({"apiVersion": "v1", "kind": "List", "items": [
      {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
       "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}},
      {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"containers": [{"name": "c"}]}},
      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
      {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"}},
      {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"}},
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}},
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "default"}},
      {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}}]})");
  std::string cmd = std::string(BERTH_BINARY) + " simulate --cluster " + path + " 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string err;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) err.append(buf.data(), n);
  ASSERT_EQ(pclose(p), 0) << err;
  EXPECT_EQ(err,
            "berth simulate: ignored 3 items of kinds simulate does not use: ConfigMap (2), "
            "Secret (1)\n");
}

TEST(Simulate, BadServiceExitsTwoNamingObjectAndField) {
  const std::string path = writeTemp("bad-service.yaml",
                                     "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
                                     "  namespace: prod\nspec:\n  selector: [app]\n");
  Output r = runBerth("simulate --cluster " + path);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.out.find("service prod/web: spec.selector"), std::string::npos) << r.out;
}

TEST(Cli, VersionAndHelp) {
  Output v = runBerth("version");
  EXPECT_EQ(v.exitCode, 0);
  EXPECT_EQ(v.out.rfind("berth v", 0), 0u) << v.out;
  Output h = runBerth("--help");
  EXPECT_EQ(h.exitCode, 0);
  EXPECT_NE(h.out.find("simulate"), std::string::npos);
  Output sh = runBerth("simulate --help");
  EXPECT_EQ(sh.exitCode, 0);
  EXPECT_NE(sh.out.find("--cluster stringArray"), std::string::npos) << sh.out;
  Output bad = runBerth("frobnicate");
  EXPECT_EQ(bad.exitCode, 2);
}

TEST(Cli, VersionOnEveryCommandAndAsJsonOrYaml) {
  for (const char* command : {"--version", "run --version", "simulate --version",
                              "explain --version", "demo --version", "apiserver --version"}) {
    SCOPED_TRACE(command);
    Output r = runBerth(command);
    EXPECT_EQ(r.exitCode, 0) << r.out;
    EXPECT_EQ(r.out, "berth v" + std::string(BERTH_VERSION) + "\n");
  }
  Output j = runBerth("version -o json");
  ASSERT_EQ(j.exitCode, 0) << j.out;
  const auto info = nlohmann::json::parse(j.out);
  for (const char* key : {"major", "minor", "gitVersion", "gitCommit", "gitTreeState", "buildDate",
                          "compiler", "platform"}) {
    EXPECT_TRUE(info.contains(key)) << key << " in " << j.out;
  }
  EXPECT_EQ(info["gitVersion"], "v" + std::string(BERTH_VERSION));
  Output y = runBerth("version --output=yaml");
  ASSERT_EQ(y.exitCode, 0) << y.out;
  EXPECT_NE(y.out.find("gitCommit: \""), std::string::npos) << y.out;
  Output help = runBerth("version --help");
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("-o, --output string"), std::string::npos) << help.out;
  EXPECT_EQ(runBerth("version -o xml").exitCode, 2);
}

TEST(Simulate, RepeatedClusterFilesAreMerged) {
  const std::string nodes = writeTemp("merge-nodes.yaml", R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
)");
  const std::string pods = writeTemp("merge-pods.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  schedulerName: berth
  containers: [{name: c, resources: {requests: {cpu: "1"}}}]
)");
  Output r = runBerth("simulate --cluster " + nodes + " --cluster " + pods);
  ASSERT_EQ(r.exitCode, 0) << r.out;
  EXPECT_NE(r.out.find("default/web   n1     Scheduled"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1/1 pending pods placed on 1 of 1 nodes"), std::string::npos) << r.out;
  Output twice = runBerth("simulate --cluster " + nodes + " --cluster " + nodes);
  EXPECT_EQ(twice.exitCode, 2);
  EXPECT_NE(twice.out.find("node n1 is in both " + nodes + " and " + nodes), std::string::npos)
      << twice.out;
}

TEST(Simulate, AConfigWithoutTheSchedulerNameListsItsProfilesAndTheFlag) {
  const std::string path = writeTemp("ab-config.yaml", R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: a
- schedulerName: b
)");
  Output r = runBerth("simulate --cluster examples/cluster.yaml --config " + path);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.out, "Error: " + path +
                       " has no profile for scheduler name \"berth\": its profiles are \"a\", "
                       "\"b\"; pass --scheduler-name NAME to place the pods of one of them, or "
                       "--all-pending\n");
  Output named =
      runBerth("simulate --cluster examples/cluster.yaml --scheduler-name a --config " + path);
  EXPECT_EQ(named.exitCode, 0) << named.out;
}

TEST(Simulate, AllOfAConfigsFieldErrorsAtOnce) {
  const std::string path =
      writeTemp("multi-config.yaml", R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 150
enableProfiling: true
profiles:
- plugins:
    filter:
      enabled: [{name: DynamicResources}]
)");
  Output r = runBerth("simulate --cluster examples/cluster.yaml --config " + path);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.out.find(path + ": 3 errors:\n  percentageOfNodesToScore: "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  enableProfiling: not supported by berth\n"), std::string::npos);
  EXPECT_NE(r.out.find("\n  profiles[0].plugins.filter.enabled[0]: plugin \"DynamicResources\" is "
                       "not supported by berth: pods with spec.resourceClaims"),
            std::string::npos);
}

}  // namespace
}  // namespace berth
