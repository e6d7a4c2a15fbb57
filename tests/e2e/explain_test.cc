// End-to-end tests of `berth explain`: the real binary reads a pod, the nodes and the bound pods
// from the embedded API server over HTTP and explains the pod's placement.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "tests/support/objects.h"

namespace berth {
namespace {

using json = nlohmann::json;
using apiserver::Resource;
using test::nodeJson;
using test::podJson;
using test::readFile;

json boundPod(const std::string& name, const std::string& cpu, const std::string& nodeName) {
  json p = podJson(name, cpu, "default-scheduler");
  p["spec"]["nodeName"] = nodeName;
  p["status"]["phase"] = "Running";
  return p;
}

struct Outcome {
  int exitCode = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// The line of `text` that starts with `prefix`; empty when there is none.
std::string lineStartingWith(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) return line;
  }
  return "";
}

// The whitespace-separated words of a table row.
std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

class Explain : public testing::Test {
 protected:
  void SetUp() override {
    auto started = apiserver::Server::start(store_, {});
    ASSERT_TRUE(started.ok()) << started.error().message;
    server_ = std::move(*started);
    const std::string id = std::to_string(getpid());
    kubeconfig_ = testing::TempDir() + "berth-explain-kubeconfig-" + id;
    stderr_path_ = testing::TempDir() + "berth-explain-stderr-" + id;
    std::ofstream(kubeconfig_) << json{
        {"apiVersion", "v1"},
        {"kind", "Config"},
        {"clusters", {{{"name", "e2e"}, {"cluster", {{"server", server_->url()}}}}}},
        {"users", {{{"name", "e2e"}, {"user", json::object()}}}},
        {"contexts", {{{"name", "e2e"}, {"context", {{"cluster", "e2e"}, {"user", "e2e"}}}}}},
        {"current-context", "e2e"}}.dump();
  }

  void TearDown() override { server_->stop(); }

  void create(Resource resource, const json& object) {
    const std::string ns = object["metadata"].value("namespace", "");
    auto r = store_.create(resource, ns, object);
    ASSERT_TRUE(r.ok()) << r.error().status.message;
    // A created pod starts Pending, as with kube-apiserver; its phase is the status writer's.
    if (resource == Resource::Pods && object.contains("status")) {
      auto s =
          store_.updateStatus(resource, ns, object["metadata"]["name"].get<std::string>(), object);
      ASSERT_TRUE(s.ok()) << s.error().status.message;
    }
    objects_.push_back(object);
  }

  // Runs `berth explain ARGS --kubeconfig K`.
  Outcome explain(const std::string& args) {
    return berth("explain " + args + " --kubeconfig " + kubeconfig_);
  }

  // Runs `berth ARGS`; `env` ("NAME=value ...") is put before it in the shell command.
  Outcome berth(const std::string& args, const std::string& env = "") {
    const std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(BERTH_BINARY) +
                            " " + args + " 2>" + stderr_path_;
    Outcome r;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = pclose(p);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = readFile(stderr_path_);
    return r;
  }

  // Every object created so far, as a cluster file for `berth simulate`, in the API server's list
  // order (by name), which is the order explain sees the nodes in.
  std::string writeClusterFile() {
    std::vector<json> items = objects_;
    std::stable_sort(items.begin(), items.end(), [](const json& a, const json& b) {
      return a["metadata"]["name"].get<std::string>() < b["metadata"]["name"].get<std::string>();
    });
    const std::string path =
        testing::TempDir() + "berth-explain-cluster-" + std::to_string(getpid());
    std::ofstream(path) << json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump();
    return path;
  }

  // small (1 cpu), big (4 cpu, 3 of them taken by a bound pod), gpu (8 cpu, tainted), cordoned.
  void createNodesThatRejectBigPods() {
    create(Resource::Nodes, nodeJson("small", "1"));
    create(Resource::Nodes, nodeJson("big", "4"));
    json gpu = nodeJson("gpu", "8");
    gpu["spec"]["taints"] = {{{"key", "gpu"}, {"value", "true"}, {"effect", "NoSchedule"}}};
    create(Resource::Nodes, gpu);
    json cordoned = nodeJson("cordoned", "64");
    cordoned["spec"]["unschedulable"] = true;
    create(Resource::Nodes, cordoned);
    create(Resource::Pods, boundPod("busy", "3", "big"));
  }

  apiserver::Store store_;
  std::unique_ptr<apiserver::Server> server_;
  std::string kubeconfig_;
  std::string stderr_path_;
  std::vector<json> objects_;
};

TEST_F(Explain, PodThatFitsNowhereNamesEachNodesRejectingPluginAndReason) {
  createNodesThatRejectBigPods();
  create(Resource::Pods, podJson("huge", "2"));

  Outcome r = explain("default/huge");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Pod default/huge is pending (profile \"berth\")"), std::string::npos)
      << r.out;
  // The message the daemon records on the pod, as kube-scheduler's FitError.
  EXPECT_NE(r.out.find("0/4 nodes are available: 1 node(s) had untolerated taint {gpu: true}, "
                       "1 node(s) were unschedulable, 2 Insufficient cpu."),
            std::string::npos)
      << r.out;
  // Then why preemption cannot help there: "busy" has the pod's own priority.
  const std::vector<std::string> noVictims = {"cannot", "help:", "no",     "lower-priority",
                                              "pods",   "to",    "preempt"};
  const std::vector<std::string> notLifted = {"cannot", "help:", "evicting", "pods",     "does",
                                              "not",    "lift",  "this",     "rejection"};
  auto row = [](std::vector<std::string> cells, const std::vector<std::string>& preemption) {
    cells.insert(cells.end(), preemption.begin(), preemption.end());
    return cells;
  };
  const std::vector<std::vector<std::string>> expected = {
      row({"small", "NodeResourcesFit", "Insufficient", "cpu"}, noVictims),
      // the bound pod "busy" counts
      row({"big", "NodeResourcesFit", "Insufficient", "cpu"}, noVictims),
      row({"gpu", "TaintToleration", "node(s)", "had", "untolerated", "taint", "{gpu:", "true}"},
          notLifted),
      row({"cordoned", "NodeUnschedulable", "node(s)", "were", "unschedulable"}, notLifted),
  };
  for (const auto& cells : expected) {
    SCOPED_TRACE(cells.front());
    EXPECT_EQ(words(lineStartingWith(r.out, cells.front() + " ")), cells) << r.out;
  }
  EXPECT_EQ(r.out.find("Feasible nodes"), std::string::npos) << r.out;
}

TEST_F(Explain, PendingHighPriorityPodSaysWhomItWouldPreemptAndWhere) {
  createNodesThatRejectBigPods();
  json urgent = podJson("urgent", "2");
  urgent["spec"]["priority"] = 1000;
  create(Resource::Pods, urgent);

  Outcome r = explain("default/urgent");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Pod default/urgent is pending and fits no node as the cluster is; berth "
                       "would preempt default/busy on node \"big\" to make room for it (profile "
                       "\"berth\"):"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(words(lineStartingWith(r.out, "big ")),
            (std::vector<std::string>{"big", "NodeResourcesFit", "Insufficient", "cpu", "would",
                                      "preempt", "default/busy", "(chosen)"}))
      << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;

  Outcome j = explain("default/urgent --output=json");
  ASSERT_EQ(j.exitCode, 0) << j.out << j.err;
  const json result = json::parse(j.out)["results"][0];
  EXPECT_EQ(result["node"], "big");
  EXPECT_EQ(result["nominatedNode"], "big");
  EXPECT_EQ(result["victims"], json::array({"default/busy"}));
  // Nothing was written: the victim is still there.
  EXPECT_TRUE(store_.get(Resource::Pods, "default", "busy").ok());
}

TEST_F(Explain, PodWithAFieldBerthDoesNotImplementIsRefusedNamingIt) {
  create(Resource::Nodes, nodeJson("small", "1"));
  create(Resource::Nodes, nodeJson("big", "4"));
  json claim = podJson("claim", "100m");
  claim["spec"]["resourceClaims"] = {{{"name", "gpu"}, {"resourceClaimName", "gpu"}}};
  create(Resource::Pods, claim);

  Outcome r = explain("default/claim");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0/2 nodes are available: berth does not implement spec.resourceClaims "
                       "(DynamicResources)."),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("Feasible nodes"), std::string::npos) << r.out;
}

TEST_F(Explain, PodThatFitsShowsChosenNodeAndPluginScores) {
  createNodesThatRejectBigPods();
  create(Resource::Nodes, nodeJson("roomy", "16"));
  create(Resource::Nodes, nodeJson("medium", "8"));
  // Finished pods hold nothing, as in the daemon's cache: medium still has room.
  json done = boundPod("done", "8", "medium");
  done["status"]["phase"] = "Succeeded";
  create(Resource::Pods, done);
  create(Resource::Pods, podJson("web", "2"));

  Outcome r = explain("default/web");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Pod default/web is pending; it fits 2 of 6 nodes and berth would bind it "
                       "to node \"roomy\" (profile \"berth\")."),
            std::string::npos)
      << r.out;
  const std::string scoresSection = r.out.substr(r.out.find("Feasible nodes"));
  const std::vector<std::string> header = words(lineStartingWith(scoresSection, "NODE "));
  ASSERT_GE(header.size(), 2u) << r.out;
  EXPECT_EQ(header[1], "TOTAL");
  ASSERT_GE(header.size(), 3u) << r.out;
  EXPECT_NE(std::find(header.begin(), header.end(), "NodeResourcesFit"), header.end()) << r.out;
  EXPECT_NE(std::find(header.begin(), header.end(), "NodeResourcesBalancedAllocation"),
            header.end())
      << r.out;
  // Best first: the emptiest node scores highest under LeastAllocated.
  const std::vector<std::string> roomy = words(lineStartingWith(r.out, "roomy "));
  const std::vector<std::string> medium = words(lineStartingWith(r.out, "medium "));
  ASSERT_EQ(roomy.size(), header.size()) << r.out;
  ASSERT_EQ(medium.size(), header.size()) << r.out;
  EXPECT_GT(std::stol(roomy[1]), std::stol(medium[1])) << r.out;
  EXPECT_LT(r.out.find("roomy "), r.out.find("medium ")) << r.out;
  EXPECT_EQ(words(lineStartingWith(r.out, "small ")),
            (std::vector<std::string>{"small", "NodeResourcesFit", "Insufficient", "cpu"}))
      << r.out;
}

TEST_F(Explain, JsonIsSimulatesExplainOutputForTheSameCluster) {
  createNodesThatRejectBigPods();
  create(Resource::Nodes, nodeJson("roomy", "16"));
  create(Resource::Nodes, nodeJson("medium", "8"));
  create(Resource::Pods, podJson("web", "2"));

  Outcome r = explain("default/web --output json");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  ASSERT_TRUE(json::accept(r.out)) << r.out;
  json explained = json::parse(r.out);
  ASSERT_EQ(explained["results"].size(), 1u) << r.out;
  const json& result = explained["results"][0];
  EXPECT_EQ(result["pod"], "default/web");
  EXPECT_EQ(result["node"], "roomy");
  EXPECT_EQ(result["profile"], "berth");
  for (const json& n : result["nodes"]) {
    SCOPED_TRACE(n.dump());
    if (n["feasible"]) {
      EXPECT_FALSE(n["scores"].empty());
      EXPECT_FALSE(n.contains("plugin"));
    } else {
      EXPECT_FALSE(n["plugin"].get<std::string>().empty());
      EXPECT_FALSE(n["reasons"].empty());
    }
  }

  // The same cluster as a file gives the same per-node explanation through `berth simulate`.
  Outcome simulated =
      berth("simulate --cluster " + writeClusterFile() + " --explain --output json");
  ASSERT_EQ(simulated.exitCode, 0) << simulated.out << simulated.err;
  json expected = json::parse(simulated.out);
  ASSERT_EQ(expected["results"].size(), 1u) << simulated.out;
  expected["results"][0]["profile"] = "berth";
  EXPECT_EQ(explained, expected);
}

TEST_F(Explain, PendingPodJsonCarriesFitErrorMessage) {
  createNodesThatRejectBigPods();
  create(Resource::Pods, podJson("huge", "2"));

  Outcome r = explain("default/huge --output=json");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  const json& result = j["results"][0];
  EXPECT_TRUE(result["node"].is_null());
  EXPECT_EQ(result["message"],
            "0/4 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 1 node(s) were "
            "unschedulable, 2 Insufficient cpu. preemption: 0/4 nodes are available: 2 No "
            "preemption victims found for incoming pod, 2 Preemption is not helpful for "
            "scheduling.");
  ASSERT_EQ(result["nodes"].size(), 4u);
  for (const json& n : result["nodes"]) {
    EXPECT_FALSE(n["feasible"]);
    if (n["name"] == "cordoned") {
      EXPECT_EQ(n["plugin"], "NodeUnschedulable");
      EXPECT_EQ(n["reasons"], json::array({"node(s) were unschedulable"}));
    }
  }
}

TEST_F(Explain, MissingPodExitsNonZeroNamingIt) {
  create(Resource::Nodes, nodeJson("small", "1"));
  Outcome r = explain("default/ghost");
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("pods \"ghost\" not found in namespace \"default\""), std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(Explain, BoundPodIsReportedAsBoundNotRescheduled) {
  create(Resource::Nodes, nodeJson("big", "4"));
  json web = podJson("web", "1");
  web["spec"]["nodeName"] = "big";
  create(Resource::Pods, web);

  Outcome r = explain("default/web");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("Pod default/web is bound to node \"big\""), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Feasible nodes"), std::string::npos) << r.out;

  Outcome j = explain("default/web --output json");
  EXPECT_EQ(j.exitCode, 0) << j.err;
  const json parsed = json::parse(j.out, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << j.out;
  EXPECT_EQ(parsed["results"][0]["node"], "big");
  EXPECT_EQ(parsed["results"][0]["bound"], true);
}

TEST_F(Explain, BarePodNameTakesTheNamespaceFromTheFlagOrTheContext) {
  create(Resource::Nodes, nodeJson("big", "4"));
  json web = podJson("web", "1");
  web["spec"]["nodeName"] = "big";
  create(Resource::Pods, web);
  json shop = podJson("web", "1");
  shop["metadata"]["namespace"] = "shop";
  shop["spec"]["nodeName"] = "big";
  create(Resource::Pods, shop);

  // No namespace anywhere: "default", as kubectl.
  Outcome r = explain("web");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("Pod default/web is bound"), std::string::npos) << r.out;
  for (const std::string_view flag : {"-n shop", "-n=shop", "-nshop", "--namespace shop"}) {
    Outcome n = explain("web " + std::string(flag));
    EXPECT_EQ(n.exitCode, 0) << flag << ": " << n.err;
    EXPECT_NE(n.out.find("Pod shop/web is bound"), std::string::npos) << flag << ": " << n.out;
  }
  Outcome conflict = explain("default/web -n shop");
  EXPECT_EQ(conflict.exitCode, 2);
  EXPECT_NE(conflict.err.find("names namespace \"default\" but --namespace is \"shop\""),
            std::string::npos)
      << conflict.err;

  // The context's namespace, found through $KUBECONFIG.
  const std::string withNamespace = kubeconfig_ + "-shop";
  std::ofstream(withNamespace) << json{
      {"clusters", {{{"name", "e2e"}, {"cluster", {{"server", server_->url()}}}}}},
      {"contexts", {{{"name", "e2e"}, {"context", {{"cluster", "e2e"}, {"namespace", "shop"}}}}}},
      {"current-context", "e2e"}}.dump();
  Outcome fromContext = berth("explain web", "KUBECONFIG=" + withNamespace);
  std::remove(withNamespace.c_str());
  EXPECT_EQ(fromContext.exitCode, 0) << fromContext.err;
  EXPECT_NE(fromContext.out.find("Pod shop/web is bound"), std::string::npos) << fromContext.out;
}

TEST_F(Explain, FindsTheClusterAsKubectlDoes) {
  create(Resource::Nodes, nodeJson("big", "4"));
  json web = podJson("web", "1");
  web["spec"]["nodeName"] = "big";
  create(Resource::Pods, web);

  // $KUBECONFIG: a missing file is skipped, the others merged.
  Outcome listed =
      berth("explain default/web", "KUBECONFIG=/nonexistent/berth-kubeconfig:" + kubeconfig_);
  EXPECT_EQ(listed.exitCode, 0) << listed.err;
  EXPECT_NE(listed.out.find("Pod default/web is bound"), std::string::npos) << listed.out;

  // Without it, ~/.kube/config.
  const std::string home = testing::TempDir() + "berth-explain-home-" + std::to_string(getpid());
  std::filesystem::create_directories(home + "/.kube");
  std::filesystem::copy_file(kubeconfig_, home + "/.kube/config",
                             std::filesystem::copy_options::overwrite_existing);
  Outcome fromHome = berth("explain default/web", "KUBECONFIG= HOME=" + home);
  EXPECT_EQ(fromHome.exitCode, 0) << fromHome.err;
  EXPECT_NE(fromHome.out.find("Pod default/web is bound"), std::string::npos) << fromHome.out;
  std::filesystem::remove_all(home);

  // Neither: the error says where berth looked and what to pass.
  Outcome none =
      berth("explain default/web", "KUBECONFIG= HOME=/nonexistent KUBERNETES_SERVICE_HOST= ");
  EXPECT_EQ(none.exitCode, 2);
  EXPECT_NE(none.err.find("no kubeconfig file exists (looked at /nonexistent/.kube/config): pass "
                          "--kubeconfig PATH or set KUBECONFIG"),
            std::string::npos)
      << none.err;

  Outcome noArgument = berth("explain --kubeconfig " + kubeconfig_);
  EXPECT_EQ(noArgument.exitCode, 2);
  EXPECT_NE(noArgument.err.find("requires one argument, POD or NAMESPACE/POD"), std::string::npos)
      << noArgument.err;
}

TEST_F(Explain, PodOfAnotherSchedulerIsFlaggedThenExplainedWithTheFirstProfile) {
  create(Resource::Nodes, nodeJson("small", "1"));
  create(Resource::Pods, podJson("theirs", "100m", "default-scheduler"));

  Outcome r = explain("default/theirs");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(
      r.out.starts_with("Note: spec.schedulerName \"default-scheduler\" matches no profile "
                        "of this configuration (\"berth\"), so berth will never schedule "
                        "this pod"))
      << r.out;
  EXPECT_NE(r.out.find("berth would bind it to node \"small\" (profile \"berth\")"),
            std::string::npos)
      << r.out;

  Outcome j = explain("default/theirs --output json");
  ASSERT_EQ(j.exitCode, 0) << j.err;
  const json parsed = json::parse(j.out, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << j.out;
  ASSERT_TRUE(parsed.contains("warnings")) << j.out;
  EXPECT_NE(parsed["warnings"][0].get<std::string>().find("matches no profile"), std::string::npos);
}

TEST_F(Explain, SchedulerNamePicksTheProfileFromConfig) {
  const std::string config =
      testing::TempDir() + "berth-explain-config-" + std::to_string(getpid());
  std::ofstream(config) << R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: berth
- schedulerName: berth-binpack
  plugins:
    multiPoint:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
)";
  create(Resource::Nodes, nodeJson("roomy", "16"));
  create(Resource::Nodes, nodeJson("medium", "8"));
  create(Resource::Pods, podJson("packed", "2", "berth-binpack"));

  Outcome r = explain("default/packed --config " + config);
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  // MostAllocated packs onto the fuller node, and balanced allocation is not scored.
  EXPECT_NE(r.out.find("would bind it to node \"medium\" (profile \"berth-binpack\")"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("NodeResourcesBalancedAllocation"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Note:"), std::string::npos) << r.out;
}

TEST_F(Explain, MalformedNodeIsSkippedWithAWarningNamingIt) {
  create(Resource::Nodes, nodeJson("small", "1"));
  json broken = nodeJson("broken", "1");
  broken["status"]["allocatable"]["cpu"] = "lots";
  create(Resource::Nodes, broken);
  create(Resource::Pods, podJson("web", "100m"));

  Outcome r = explain("default/web");
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("it fits 1 of 1 nodes and berth would bind it to node \"small\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("warning: skipped node broken: status.allocatable.cpu: invalid quantity "
                       "\"lots\""),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace berth
