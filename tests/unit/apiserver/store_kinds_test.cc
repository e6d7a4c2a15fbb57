// The kinds plugins read besides pods and nodes (namespaces, services, replication controllers,
// replica sets, stateful sets): what each kind's strategy does to it in the store.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/apiserver/store.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

json named(const std::string& name, json spec = json::object()) {
  return {{"metadata", {{"name", name}}}, {"spec", std::move(spec)}};
}

json workloadSpec(const std::string& image) {
  const json container = {{"name", "c"}, {"image", image}};
  const json podTemplate = {{"metadata", {{"labels", {{"app", "web"}}}}},
                            {"spec", {{"containers", json::array({container})}}}};
  return {{"replicas", 2},
          {"selector", {{"matchLabels", {{"app", "web"}}}}},
          {"template", podTemplate}};
}

struct KindCase {
  Resource resource;
  std::string ns;  // empty for namespaces
  json spec;
  std::string apiVersion;
  std::string kind;
  json status;      // the status a create starts with
  json generation;  // null: none set
};

std::vector<KindCase> kindCases() {
  return {
      {Resource::Namespaces, "", json::object(), "v1", "Namespace", {{"phase", "Active"}}, nullptr},
      {Resource::Services,
       "default",
       {{"selector", {{"app", "web"}}}},
       "v1",
       "Service",
       {{"loadBalancer", json::object()}},
       nullptr},
      {Resource::ReplicationControllers,
       "default",
       {{"replicas", 1}, {"selector", {{"app", "web"}}}},
       "v1",
       "ReplicationController",
       {{"replicas", 0}},
       1},
      {Resource::ReplicaSets,
       "default",
       workloadSpec("nginx:1"),
       "apps/v1",
       "ReplicaSet",
       {{"replicas", 0}},
       1},
      {Resource::StatefulSets,
       "default",
       workloadSpec("nginx:1"),
       "apps/v1",
       "StatefulSet",
       {{"replicas", 0}, {"availableReplicas", 0}},
       1},
  };
}

TEST(StoreKinds, CreateStartsEachKindWithItsStrategysStatusAndGeneration) {
  Store store;
  for (const KindCase& c : kindCases()) {
    json object = named("x", c.spec);
    object["status"] = {{"phase", "Terminating"}, {"replicas", 9}};  // a client's status is reset
    auto created = store.create(c.resource, c.ns, object);
    ASSERT_TRUE(created.ok()) << c.kind << ": " << created.error().status.message;
    EXPECT_EQ((*created)["apiVersion"], c.apiVersion) << c.kind;
    EXPECT_EQ((*created)["kind"], c.kind) << c.kind;
    EXPECT_EQ((*created)["status"], c.status) << c.kind;
    EXPECT_EQ((*created)["metadata"].value("generation", json()), c.generation) << c.kind;
    EXPECT_EQ((*created)["metadata"].contains("namespace"), !c.ns.empty()) << c.kind;
    auto got = store.get(c.resource, c.ns, "x");
    ASSERT_TRUE(got.ok()) << c.kind;
    EXPECT_EQ(*got, *created) << c.kind;
  }
}

TEST(StoreKinds, MainUpdateKeepsTheStatusAndStatusUpdateChangesOnlyIt) {
  Store store;
  for (const KindCase& c : kindCases()) {
    ASSERT_TRUE(store.create(c.resource, c.ns, named("x", c.spec)).ok()) << c.kind;
    json changed = named("x", c.spec);
    changed["metadata"]["annotations"] = {{"a", "b"}};
    changed["status"] = {{"observedGeneration", 5}};
    auto updated = store.update(c.resource, c.ns, "x", changed);
    ASSERT_TRUE(updated.ok()) << c.kind;
    EXPECT_EQ((*updated)["status"], c.status) << c.kind;
    EXPECT_EQ((*updated)["metadata"]["annotations"]["a"], "b") << c.kind;

    json statusOnly = named("x", {{"ignored", true}});
    statusOnly["status"] = {{"observedGeneration", 5}};
    auto status = store.updateStatus(c.resource, c.ns, "x", statusOnly);
    ASSERT_TRUE(status.ok()) << c.kind;
    EXPECT_EQ((*status)["status"], statusOnly["status"]) << c.kind;
    EXPECT_FALSE((*status)["spec"].contains("ignored")) << c.kind;
  }
}

TEST(StoreKinds, NamespaceCarriesItsNameLabelAndKeepsItsFinalizers) {
  Store store;
  json ns = named("team-a");
  ns["metadata"]["labels"] = {{"team", "a"}};
  auto created = store.create(Resource::Namespaces, "", ns);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ((*created)["metadata"]["labels"],
            json({{"team", "a"}, {"kubernetes.io/metadata.name", "team-a"}}));
  EXPECT_EQ((*created)["spec"]["finalizers"], json::array({"kubernetes"}));

  // An update can neither drop the label nor change the finalizers.
  json update = named("team-a", {{"finalizers", json::array()}});
  update["metadata"]["labels"] = {{"team", "b"}};
  auto updated = store.update(Resource::Namespaces, "", "team-a", update);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ((*updated)["metadata"]["labels"],
            json({{"team", "b"}, {"kubernetes.io/metadata.name", "team-a"}}));
  EXPECT_EQ((*updated)["spec"]["finalizers"], json::array({"kubernetes"}));
}

TEST(StoreKinds, WorkloadGenerationMovesOnlyWhenItsSpecChanges) {
  Store store;
  ASSERT_TRUE(
      store.create(Resource::ReplicaSets, "default", named("web", workloadSpec("nginx:1"))).ok());
  json labelled = named("web", workloadSpec("nginx:1"));
  labelled["metadata"]["labels"] = {{"tier", "front"}};
  auto same = store.update(Resource::ReplicaSets, "default", "web", labelled);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)["metadata"]["generation"], 1);
  labelled["spec"] = workloadSpec("nginx:2");
  labelled["metadata"]["generation"] = 40;  // a client's generation is ignored
  auto moved = store.update(Resource::ReplicaSets, "default", "web", labelled);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ((*moved)["metadata"]["generation"], 2);
}

TEST(StoreKinds, AdmissionRefusesToDeleteTheImmortalNamespaces) {
  Store store;
  store.createSystemNamespaces();
  store.createSystemNamespaces();  // again: nothing more
  auto listed = store.list(Resource::Namespaces, "");
  ASSERT_TRUE(listed.ok());
  std::vector<std::string> names;
  for (const json& item : listed->items) {
    names.push_back(item["metadata"]["name"]);
  }
  EXPECT_THAT(names,
              ::testing::ElementsAre("default", "kube-node-lease", "kube-public", "kube-system"));
  for (const char* name : {"default", "kube-system", "kube-public"}) {
    auto removed = store.remove(Resource::Namespaces, "", name);
    ASSERT_FALSE(removed.ok()) << name;
    EXPECT_EQ(removed.error().toStatus(),
              json({{"kind", "Status"},
                    {"apiVersion", "v1"},
                    {"metadata", json::object()},
                    {"status", "Failure"},
                    {"message", "namespaces \"" + std::string(name) +
                                    "\" is forbidden: this namespace may not be deleted"},
                    {"reason", "Forbidden"},
                    {"details", {{"name", name}, {"kind", "namespaces"}}},
                    {"code", 403}}))
        << name;
  }
  EXPECT_TRUE(store.remove(Resource::Namespaces, "", "kube-node-lease").ok());
}

TEST(StoreKinds, FieldSelectorsFollowEachKindsFieldLabels) {
  Store store;
  ASSERT_TRUE(store.create(Resource::Namespaces, "", named("a")).ok());
  json nodePort = named("np", {{"type", "NodePort"}});
  ASSERT_TRUE(store.create(Resource::Services, "default", nodePort).ok());
  ASSERT_TRUE(store.create(Resource::Services, "default", named("plain")).ok());
  ASSERT_TRUE(store.create(Resource::ReplicationControllers, "default", named("rc")).ok());
  struct Case {
    Resource resource;
    std::string selector;
    std::vector<std::string> want;  // names; empty with `error` set
    std::string error{};
  };
  const std::vector<Case> cases = {
      {Resource::Namespaces, "status.phase=Active", {"a"}},
      {Resource::Namespaces, "status.phase=Terminating", {}},
      {Resource::Services, "spec.type=NodePort", {"np"}},
      {Resource::Services, "spec.type!=NodePort", {"plain"}},
      {Resource::ReplicationControllers, "status.replicas=0", {"rc"}},
      {Resource::ReplicationControllers, "status.replicas=1", {}},
      {Resource::Services, "status.phase=x", {}, "field label not supported: status.phase"},
      {Resource::ReplicaSets,
       "status.replicas=0",
       {},
       "\"status.replicas\" is not a known field selector: only \"metadata.name\", "
       "\"metadata.namespace\""},
  };
  for (const Case& c : cases) {
    auto listed = store.list(c.resource, "", ListOptions{.fieldSelector = c.selector});
    if (!c.error.empty()) {
      ASSERT_FALSE(listed.ok()) << c.selector;
      EXPECT_EQ(listed.error().status.code, 400) << c.selector;
      EXPECT_EQ(listed.error().status.message, c.error) << c.selector;
      continue;
    }
    ASSERT_TRUE(listed.ok()) << c.selector << ": " << listed.error().status.message;
    std::vector<std::string> names;
    for (const json& item : listed->items) {
      names.push_back(item["metadata"]["name"]);
    }
    EXPECT_EQ(names, c.want) << c.selector;
  }
}

TEST(StoreKinds, StrategicMergeOfAPodTemplateMergesContainersByName) {
  Store store;
  json spec = workloadSpec("nginx:1");
  spec["template"]["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "envoy"}});
  ASSERT_TRUE(store.create(Resource::StatefulSets, "default", named("db", spec)).ok());
  const json c2 = {{"name", "c"}, {"image", "nginx:2"}};
  const json patch = {{"spec", {{"template", {{"spec", {{"containers", json::array({c2})}}}}}}}};
  auto patched =
      store.patch(Resource::StatefulSets, "default", "db", PatchType::StrategicMerge, patch);
  ASSERT_TRUE(patched.ok()) << patched.error().status.message;
  const json& containers = (*patched)["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(containers.size(), 2u) << containers;
  EXPECT_EQ(containers[0]["image"], "nginx:2");
  EXPECT_EQ(containers[1]["name"], "sidecar");
  EXPECT_EQ((*patched)["metadata"]["generation"], 2);
}

TEST(StoreKinds, APatchWhoseResultNoLongerDecodesIsInvalid) {
  Store store;
  ASSERT_TRUE(store.create(Resource::Services, "default", named("web")).ok());
  auto patched = store.patch(Resource::Services, "default", "web", PatchType::Merge,
                             json{{"spec", {{"selector", "app=web"}}}});
  ASSERT_FALSE(patched.ok());
  EXPECT_EQ(patched.error().status.code, 422);
  EXPECT_EQ(store.get(Resource::Services, "default", "web")->value("spec", json()), json::object());
}

TEST(StoreKinds, WatchOfNamespacesSeesALabelChange) {
  Store store;
  ASSERT_TRUE(store.create(Resource::Namespaces, "", named("a")).ok());
  auto watch = store.watch(Resource::Namespaces, "",
                           WatchOptions{.resourceVersion = store.resourceVersion()});
  ASSERT_TRUE(watch.ok());
  json relabelled = named("a");
  relabelled["metadata"]["labels"] = {{"team", "x"}};
  ASSERT_TRUE(store.update(Resource::Namespaces, "", "a", relabelled).ok());
  ASSERT_TRUE(store.remove(Resource::Namespaces, "", "a").ok());
  std::vector<WatchEvent> events = (*watch)->drain();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, WatchEvent::Type::Modified);
  EXPECT_EQ(events[0].object["metadata"]["labels"]["team"], "x");
  EXPECT_EQ(events[1].type, WatchEvent::Type::Deleted);
}

}  // namespace
}  // namespace berth::apiserver
