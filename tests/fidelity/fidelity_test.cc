// Real clients against the embedded API server: kubectl 1.35 (.tools/bin/kubectl, installed by
// scripts/install-tools.sh) and Debian's python3-kubernetes. They speak to the server in-process
// on a loopback port; a test is skipped, saying why, only when its client is not installed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "pkg/apiserver/server.h"
#include "tests/support/certs.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kKubectl = std::string(BERTH_SOURCE_DIR) + "/.tools/bin/kubectl";
const std::string kPython = "/usr/bin/python3";

struct CommandResult {
  int exitCode = -1;
  std::string out;  // stdout and stderr
};

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

CommandResult run(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    return result;
  }
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) {
    result.out.append(buf.data(), n);
  }
  int status = ::pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool pythonClientInstalled() {
  return ::access(kPython.c_str(), X_OK) == 0 &&
         run(kPython + " -c 'import kubernetes'").exitCode == 0;
}

// Explicit rather than the builders' JSON: kubectl prints these fields (the node's addresses and
// conditions, which api::Node does not carry), and the pod body is created in several namespaces.
json pod(const std::string& name, const std::string& nodeName = "") {
  json p = {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"labels", {{"app", name}}}}},
            {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  if (!nodeName.empty()) {
    p["spec"]["nodeName"] = nodeName;
  }
  return p;
}

json node(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status",
           {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}},
            {"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.1"}}}}}}};
}

class FidelityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("berth-fidelity-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    ASSERT_TRUE(store_.create(Resource::Nodes, "", node("n1")).ok());
    ASSERT_TRUE(store_.create(Resource::Nodes, "", node("n2")).ok());
    ASSERT_TRUE(store_.create(Resource::Pods, "default", pod("bound", "n1")).ok());
    ASSERT_TRUE(store_.create(Resource::Pods, "kube-system", pod("pending")).ok());
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void startServer(ServerOptions options = {}) {
    auto started = Server::start(store_, std::move(options));
    ASSERT_TRUE(started.ok()) << started.error().message;
    server_ = std::move(*started);
  }

  // kubectl against the server, with no user kubeconfig and a private discovery cache.
  CommandResult kubectl(const std::string& args) {
    return run("KUBECONFIG=" + shellQuote((dir_ / "none").string()) + " " + kKubectl +
               " --server " + server_->url() + " --cache-dir " +
               shellQuote((dir_ / "cache").string()) + " " + args);
  }

  std::string writeFile(const std::string& name, const std::string& content) {
    fs::path path = dir_ / name;
    std::ofstream(path) << content;
    return path.string();
  }

  fs::path dir_;
  Store store_;
  std::unique_ptr<Server> server_;
};

#define REQUIRE_KUBECTL()                                                   \
  if (::access(kKubectl.c_str(), X_OK) != 0) {                              \
    GTEST_SKIP() << kKubectl << " not found: run scripts/install-tools.sh"; \
  }

TEST_F(FidelityTest, KubectlGetsNodesAndPodsWide) {
  REQUIRE_KUBECTL();
  startServer();
  CommandResult r = kubectl("get nodes,pods -A -o wide");
  ASSERT_EQ(r.exitCode, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("node/n1"));
  EXPECT_THAT(r.out, HasSubstr("node/n2"));
  EXPECT_THAT(r.out, HasSubstr("pod/bound"));
  EXPECT_THAT(r.out, HasSubstr("kube-system"));
  EXPECT_THAT(r.out, HasSubstr("pod/pending"));
  // Discovery was read the legacy way, and the lists were served across namespaces.
  bool listedPods = false;
  for (const RequestRecord& rec : server_->requestLog()) {
    listedPods = listedPods || (rec.verb == "list" && rec.resource == "pods" && rec.ns.empty() &&
                                rec.code == 200);
  }
  EXPECT_TRUE(listedPods);
}

TEST_F(FidelityTest, KubectlGetsPodsAsJson) {
  REQUIRE_KUBECTL();
  startServer();
  CommandResult r = kubectl("get pods -o json");
  ASSERT_EQ(r.exitCode, 0) << r.out;
  json list = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(list.is_discarded()) << r.out;
  EXPECT_EQ(list["kind"], "List");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "bound");
  EXPECT_EQ(list["items"][0]["kind"], "Pod");

  CommandResult missing = kubectl("get pod nope");
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_THAT(missing.out, HasSubstr("Error from server (NotFound): pods \"nope\" not found"));
}

TEST_F(FidelityTest, KubectlCreatesPatchesAndDeletes) {
  REQUIRE_KUBECTL();
  startServer();
  std::string file = writeFile("web.json", pod("web").dump());
  CommandResult created = kubectl("create -f " + shellQuote(file));
  ASSERT_EQ(created.exitCode, 0) << created.out;
  EXPECT_THAT(created.out, HasSubstr("pod/web created"));

  CommandResult merge =
      kubectl("patch pod web --type merge -p '{\"metadata\":{\"labels\":{\"m\":\"1\"}}}'");
  EXPECT_EQ(merge.exitCode, 0) << merge.out;
  EXPECT_THAT(merge.out, HasSubstr("pod/web patched"));
  CommandResult jsonPatch = kubectl(
      "patch pod web --type json -p '[{\"op\":\"add\",\"path\":\"/metadata/labels/j\","
      "\"value\":\"2\"}]'");
  EXPECT_EQ(jsonPatch.exitCode, 0) << jsonPatch.out;
  CommandResult strategic = kubectl(
      "patch pod web --type strategic -p "
      "'{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox:2\"}]}}'");
  EXPECT_EQ(strategic.exitCode, 0) << strategic.out;
  auto web = store_.get(Resource::Pods, "default", "web");
  ASSERT_TRUE(web.ok());
  EXPECT_EQ((*web)["metadata"]["labels"], json({{"app", "web"}, {"m", "1"}, {"j", "2"}}));
  ASSERT_EQ((*web)["spec"]["containers"].size(), 1u);  // merged by name, not replaced
  EXPECT_EQ((*web)["spec"]["containers"][0]["image"], "busybox:2");

  CommandResult again = kubectl("create -f " + shellQuote(file));
  EXPECT_EQ(again.exitCode, 1);
  EXPECT_THAT(again.out, HasSubstr("Error from server (AlreadyExists)"));

  CommandResult deleted = kubectl("delete pod web");
  EXPECT_EQ(deleted.exitCode, 0) << deleted.out;
  EXPECT_THAT(deleted.out, HasSubstr("pod \"web\" deleted"));
  EXPECT_FALSE(store_.get(Resource::Pods, "default", "web").ok());
}

TEST_F(FidelityTest, KubectlCreatesAndGetsTheKindsPluginsRead) {
  REQUIRE_KUBECTL();
  store_.createSystemNamespaces();
  startServer();
  const json selector = {{"matchLabels", {{"app", "web"}}}};
  const json podTemplate = {
      {"metadata", {{"labels", {{"app", "web"}}}}},
      {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}}}};
  const json list = {
      {"items",
       json::array(
           {{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "prod"}}}},
            {{"apiVersion", "v1"},
             {"kind", "Service"},
             {"metadata", {{"name", "web"}, {"namespace", "prod"}}},
             {"spec", {{"selector", {{"app", "web"}}}, {"ports", json::array({{{"port", 80}}})}}}},
            {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", "web"}, {"namespace", "prod"}}},
             {"spec", {{"replicas", 2}, {"selector", selector}, {"template", podTemplate}}}},
            {{"apiVersion", "apps/v1"},
             {"kind", "StatefulSet"},
             {"metadata", {{"name", "db"}, {"namespace", "prod"}}},
             {"spec", {{"serviceName", "web"}, {"selector", selector}, {"template", podTemplate}}}},
            {{"apiVersion", "v1"},
             {"kind", "ReplicationController"},
             {"metadata", {{"name", "old"}, {"namespace", "prod"}}},
             {"spec", {{"selector", {{"app", "web"}}}, {"template", podTemplate}}}},
            {{"apiVersion", "policy/v1"},
             {"kind", "PodDisruptionBudget"},
             {"metadata", {{"name", "web"}, {"namespace", "prod"}}},
             {"spec", {{"minAvailable", 1}, {"selector", selector}}}}})}};
  // A stream of documents: validating a kind: List needs the OpenAPI v2 document, which the
  // server does not serve.
  std::string stream;
  for (const json& item : list["items"]) stream += "---\n" + item.dump() + "\n";
  std::string file = writeFile("objects.yaml", stream);
  CommandResult created = kubectl("create -f " + shellQuote(file));
  ASSERT_EQ(created.exitCode, 0) << created.out;
  EXPECT_THAT(created.out, HasSubstr("namespace/prod created"));
  EXPECT_THAT(created.out, HasSubstr("service/web created"));
  EXPECT_THAT(created.out, HasSubstr("replicaset.apps/web created"));
  EXPECT_THAT(created.out, HasSubstr("statefulset.apps/db created"));
  EXPECT_THAT(created.out, HasSubstr("replicationcontroller/old created"));
  EXPECT_THAT(created.out, HasSubstr("poddisruptionbudget.policy/web created"));

  CommandResult namespaces = kubectl("get ns");
  ASSERT_EQ(namespaces.exitCode, 0) << namespaces.out;
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease", "prod"}) {
    EXPECT_THAT(namespaces.out, HasSubstr(ns));
  }
  CommandResult replicaSets = kubectl("get replicasets -A");
  ASSERT_EQ(replicaSets.exitCode, 0) << replicaSets.out;
  EXPECT_THAT(replicaSets.out, HasSubstr("prod"));
  EXPECT_THAT(replicaSets.out, HasSubstr("web"));
  CommandResult shortNames = kubectl("get svc,sts,rc -n prod -o name");
  ASSERT_EQ(shortNames.exitCode, 0) << shortNames.out;
  EXPECT_EQ(shortNames.out, "service/web\nstatefulset.apps/db\nreplicationcontroller/old\n");
  CommandResult budgets = kubectl("get pdb -A");
  ASSERT_EQ(budgets.exitCode, 0) << budgets.out;
  EXPECT_THAT(budgets.out, HasSubstr("prod"));
  EXPECT_THAT(budgets.out, HasSubstr("web"));

  CommandResult label = kubectl("label ns prod team=blue");
  EXPECT_EQ(label.exitCode, 0) << label.out;
  EXPECT_EQ((*store_.get(Resource::Namespaces, "", "prod"))["metadata"]["labels"]["team"], "blue");
  CommandResult refused = kubectl("delete ns default");
  EXPECT_EQ(refused.exitCode, 1);
  EXPECT_THAT(refused.out, HasSubstr("Error from server (Forbidden): namespaces \"default\" is "
                                     "forbidden: this namespace may not be deleted"));
}

TEST_F(FidelityTest, KubectlCreatesAndGetsTheStorageKinds) {
  REQUIRE_KUBECTL();
  startServer();
  const json items = json::array(
      {{{"apiVersion", "storage.k8s.io/v1"},
        {"kind", "StorageClass"},
        {"metadata", {{"name", "local"}}},
        {"provisioner", "kubernetes.io/no-provisioner"},
        {"volumeBindingMode", "WaitForFirstConsumer"}},
       {{"apiVersion", "v1"},
        {"kind", "PersistentVolume"},
        {"metadata", {{"name", "pv1"}}},
        {"spec",
         {{"capacity", {{"storage", "5Gi"}}},
          {"accessModes", {"ReadWriteOnce"}},
          {"storageClassName", "local"},
          {"local", {{"path", "/mnt/disk1"}}},
          {"nodeAffinity",
           {{"required",
             {{"nodeSelectorTerms",
               {{{"matchExpressions",
                  {{{"key", "kubernetes.io/hostname"},
                    {"operator", "In"},
                    {"values", {"n1"}}}}}}}}}}}}}}},
       {{"apiVersion", "v1"},
        {"kind", "PersistentVolumeClaim"},
        {"metadata", {{"name", "data"}, {"namespace", "default"}}},
        {"spec",
         {{"accessModes", {"ReadWriteOnce"}},
          {"storageClassName", "local"},
          {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}},
       {{"apiVersion", "storage.k8s.io/v1"},
        {"kind", "CSINode"},
        {"metadata", {{"name", "n1"}}},
        {"spec", {{"drivers", {{{"name", "disk.csi.example.com"}, {"nodeID", "n1"}}}}}}}});
  std::string stream;
  for (const json& item : items) stream += "---\n" + item.dump() + "\n";
  CommandResult created = kubectl("create -f " + shellQuote(writeFile("storage.yaml", stream)));
  ASSERT_EQ(created.exitCode, 0) << created.out;
  EXPECT_THAT(created.out, HasSubstr("storageclass.storage.k8s.io/local created"));
  EXPECT_THAT(created.out, HasSubstr("persistentvolume/pv1 created"));
  EXPECT_THAT(created.out, HasSubstr("persistentvolumeclaim/data created"));
  EXPECT_THAT(created.out, HasSubstr("csinode.storage.k8s.io/n1 created"));

  // The short names resolve through discovery.
  CommandResult names = kubectl("get sc,pv,pvc,csinode -A -o name");
  ASSERT_EQ(names.exitCode, 0) << names.out;
  EXPECT_EQ(names.out,
            "storageclass.storage.k8s.io/local\npersistentvolume/pv1\n"
            "persistentvolumeclaim/data\ncsinode.storage.k8s.io/n1\n");
  CommandResult claim = kubectl("get pvc data -o json");
  ASSERT_EQ(claim.exitCode, 0) << claim.out;
  const json pvc = json::parse(claim.out);
  EXPECT_EQ(pvc["status"]["phase"], "Pending");
  EXPECT_EQ(pvc["spec"]["volumeMode"], "Filesystem");
  CommandResult volume =
      kubectl("get pv pv1 -o jsonpath={.spec.persistentVolumeReclaimPolicy},{.status.phase}");
  ASSERT_EQ(volume.exitCode, 0) << volume.out;
  EXPECT_EQ(volume.out, "Retain,Pending");

  // The PV controller's part, as a test plays it: the claim's annotation and volumeName.
  CommandResult annotated = kubectl(
      "annotate pvc data volume.kubernetes.io/selected-node=n1 pv.kubernetes.io/"
      "bind-completed=yes");
  ASSERT_EQ(annotated.exitCode, 0) << annotated.out;
  CommandResult patched =
      kubectl("patch pvc data --type merge -p " + shellQuote(R"({"spec":{"volumeName":"pv1"}})"));
  ASSERT_EQ(patched.exitCode, 0) << patched.out;
  auto stored = store_.get(Resource::PersistentVolumeClaims, "default", "data");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)["spec"]["volumeName"], "pv1");
  EXPECT_EQ((*stored)["metadata"]["annotations"]["volume.kubernetes.io/selected-node"], "n1");

  CommandResult deleted = kubectl("delete sc local");
  EXPECT_EQ(deleted.exitCode, 0) << deleted.out;
  EXPECT_THAT(deleted.out, HasSubstr("storageclass.storage.k8s.io \"local\" deleted"));
}

TEST_F(FidelityTest, KubectlOverHttpsWithTokenAndClientCertificate) {
  REQUIRE_KUBECTL();
  test::TestPki pki = test::makeTestPki();
  ServerOptions options;
  options.tls =
      TlsOptions{pki.server.certificatePem, pki.server.privateKeyPem, pki.ca.certificatePem};
  options.token = "s3cret";
  startServer(options);
  const std::string ca = writeFile("ca.crt", pki.ca.certificatePem);
  const std::string base = "--certificate-authority " + shellQuote(ca) + " ";
  CommandResult withToken = kubectl(base + "--token s3cret get nodes -o name");
  ASSERT_EQ(withToken.exitCode, 0) << withToken.out;
  EXPECT_EQ(withToken.out, "node/n1\nnode/n2\n");

  CommandResult wrong = kubectl(base + "--token nope get nodes");
  EXPECT_EQ(wrong.exitCode, 1);
  EXPECT_THAT(wrong.out, HasSubstr("Unauthorized"));

  const std::string cert = writeFile("client.crt", pki.client.certificatePem);
  const std::string key = writeFile("client.key", pki.client.privateKeyPem);
  CommandResult withCert = kubectl(base + "--client-certificate " + shellQuote(cert) +
                                   " --client-key " + shellQuote(key) + " get pods -A -o name");
  ASSERT_EQ(withCert.exitCode, 0) << withCert.out;
  EXPECT_EQ(withCert.out, "pod/bound\npod/pending\n");
}

TEST_F(FidelityTest, PythonClientListsWatchesBindsAndRenewsALease) {
  if (!pythonClientInstalled()) {
    GTEST_SKIP() << kPython << " with the kubernetes module not found: apt-get install "
                 << "python3-kubernetes";
  }
  startServer();
  const std::string script = std::string(BERTH_SOURCE_DIR) + "/tests/fidelity/python_client.py";
  CommandResult r = run(kPython + " " + shellQuote(script) + " " + server_->url());
  ASSERT_EQ(r.exitCode, 0) << r.out;
  EXPECT_EQ(r.out,
            "nodes: n1,n2\n"
            "watch: ADDED watched\n"
            "binding: 201\n"
            "nodeName: n1\n"
            "lease: created berth-1\n"
            "lease: renewed +5.123456s\n");
  auto lease = store_.get(Resource::Leases, "default", "berth");
  ASSERT_TRUE(lease.ok());
  // MicroTime on the wire: RFC 3339 with six fractional digits, in UTC.
  EXPECT_THAT((*lease)["spec"]["renewTime"].get<std::string>(),
              ::testing::MatchesRegex("[0-9-]+T[0-9:]+\\.[0-9]{6}Z"));
}

TEST_F(FidelityTest, PythonClientCreatesAndReadsTheKindsPluginsRead) {
  if (!pythonClientInstalled()) {
    GTEST_SKIP() << kPython << " with the kubernetes module not found: apt-get install "
                 << "python3-kubernetes";
  }
  startServer();
  const std::string script = std::string(BERTH_SOURCE_DIR) + "/tests/fidelity/python_objects.py";
  CommandResult r = run(kPython + " " + shellQuote(script) + " " + server_->url());
  ASSERT_EQ(r.exitCode, 0) << r.out;
  EXPECT_EQ(r.out,
            "namespace: prod Active team=blue\n"
            "services: prod/web\n"
            "replicasets: web gen=1\n"
            "statefulset: db replicas=0\n"
            "replicationcontrollers: old\n"
            "replicasets after delete: 0\n");
}

TEST_F(FidelityTest, PythonClientCreatesAndReadsTheStorageKinds) {
  if (!pythonClientInstalled()) {
    GTEST_SKIP() << kPython << " with the kubernetes module not found: apt-get install "
                 << "python3-kubernetes";
  }
  startServer();
  const std::string script = std::string(BERTH_SOURCE_DIR) + "/tests/fidelity/python_storage.py";
  CommandResult r = run(kPython + " " + shellQuote(script) + " " + server_->url());
  ASSERT_EQ(r.exitCode, 0) << r.out;
  EXPECT_EQ(r.out,
            "storageclass: fast Immediate Delete\n"
            "persistentvolume: pv1 Pending Retain Filesystem\n"
            "claims: default/data Pending\n"
            "bound: pv1 Bound\n"
            "storageclasses after delete: 0\n");
}

}  // namespace
}  // namespace berth::apiserver
