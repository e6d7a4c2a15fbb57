#include "pkg/framework/cluster_objects.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace berth::framework {
namespace {

template <typename T>
std::shared_ptr<const T> object(const std::string& ns, const std::string& name,
                                api::StringMap labels = {}) {
  T obj;
  obj.metadata.namespace_ = ns;
  obj.metadata.name = name;
  obj.metadata.labels = std::move(labels);
  return std::make_shared<const T>(std::move(obj));
}

std::vector<std::string> namesOf(const auto& objects) {
  std::vector<std::string> out;
  for (const auto& o : objects) {
    out.push_back(o->metadata.namespace_ + "/" + o->metadata.name);
  }
  return out;
}

TEST(ClusterObjectStore, UpsertReplacesTheObjectWithTheSameNamespaceAndName) {
  ClusterObjectStore store;
  store.upsert(object<api::Namespace>("", "team", {{"v", "1"}}));
  store.upsert(object<api::Namespace>("", "team", {{"v", "2"}}));
  ASSERT_EQ(store.listNamespaces().size(), 1u);
  EXPECT_EQ(store.getNamespace("team")->metadata.labels.at("v"), "2");
  EXPECT_EQ(store.getNamespace("other"), nullptr);
}

TEST(ClusterObjectStore, ServicesListPerNamespaceInNameOrder) {
  ClusterObjectStore store;
  store.upsert(object<api::Service>("b", "z"));
  store.upsert(object<api::Service>("a", "y"));
  store.upsert(object<api::Service>("b", "x"));
  store.upsert(object<api::Service>("bb", "w"));  // a namespace that only starts the same
  EXPECT_EQ(namesOf(store.listServices("b")), (std::vector<std::string>{"b/x", "b/z"}));
  EXPECT_EQ(namesOf(store.listServices("a")), (std::vector<std::string>{"a/y"}));
  EXPECT_TRUE(store.listServices("c").empty());
}

TEST(ClusterObjectStore, PodDisruptionBudgetsListPerNamespaceAndRemove) {
  ClusterObjectStore store;
  store.upsert(object<api::PodDisruptionBudget>("prod", "web"));
  store.upsert(object<api::PodDisruptionBudget>("prod", "db"));
  store.upsert(object<api::PodDisruptionBudget>("batch", "jobs"));
  EXPECT_EQ(namesOf(store.listPodDisruptionBudgets("prod")),
            (std::vector<std::string>{"prod/db", "prod/web"}));
  EXPECT_TRUE(store.removePodDisruptionBudget("prod", "db"));
  EXPECT_FALSE(store.removePodDisruptionBudget("prod", "db"));
  EXPECT_EQ(namesOf(store.listPodDisruptionBudgets("prod")),
            (std::vector<std::string>{"prod/web"}));
}

TEST(ClusterObjectStore, ControllersAreFoundByNamespaceAndName) {
  ClusterObjectStore store;
  store.upsert(object<api::ReplicaSet>("a", "web"));
  store.upsert(object<api::StatefulSet>("a", "db"));
  store.upsert(object<api::ReplicationController>("a", "old"));
  struct Case {
    std::string what;
    bool found;
  };
  const Case cases[] = {
      {"rs a/web", store.getReplicaSet("a", "web") != nullptr},
      {"rs b/web (other namespace)", store.getReplicaSet("b", "web") == nullptr},
      {"sts a/db", store.getStatefulSet("a", "db") != nullptr},
      {"sts a/web (other kind)", store.getStatefulSet("a", "web") == nullptr},
      {"rc a/old", store.getReplicationController("a", "old") != nullptr},
      {"rc a/db (other kind)", store.getReplicationController("a", "db") == nullptr},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(c.found) << c.what;
  }
}

TEST(ClusterObjectStore, RemoveTakesOnlyThatKindAndSaysWhetherItWasThere) {
  ClusterObjectStore store;
  store.upsert(object<api::ReplicaSet>("a", "web"));
  store.upsert(object<api::StatefulSet>("a", "web"));
  store.upsert(object<api::Namespace>("", "a"));
  EXPECT_TRUE(store.removeReplicaSet("a", "web"));
  EXPECT_FALSE(store.removeReplicaSet("a", "web"));
  EXPECT_EQ(store.getReplicaSet("a", "web"), nullptr);
  EXPECT_NE(store.getStatefulSet("a", "web"), nullptr);
  EXPECT_FALSE(store.removeService("a", "web"));
  EXPECT_FALSE(store.removeReplicationController("a", "web"));
  EXPECT_TRUE(store.removeStatefulSet("a", "web"));
  EXPECT_TRUE(store.removeNamespace("a"));
  EXPECT_TRUE(store.listNamespaces().empty());
}

TEST(ClusterObjectStore, ReadersAndAWriterMayRunAtOnce) {
  ClusterObjectStore store;
  std::jthread writer([&] {
    for (int i = 0; i < 2000; ++i) {
      store.upsert(object<api::Service>("a", "s" + std::to_string(i % 50)));
      store.removeService("a", "s" + std::to_string((i + 25) % 50));
    }
  });
  size_t most = 0;
  for (int i = 0; i < 2000; ++i) {
    most = std::max(most, store.listServices("a").size());
  }
  writer.join();
  EXPECT_LE(most, 50u);
}

}  // namespace
}  // namespace berth::framework
