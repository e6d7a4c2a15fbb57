#include "pkg/apiserver/store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pkg/util/clock.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;

// 2026-11-30T08:00:00Z
constexpr int64_t kNow = 1796025600LL * 1000000;

// A store with a fixed clock and UIDs uid-1, uid-2, ...
std::unique_ptr<Store> makeStore(size_t historySize = 1000) {
  StoreOptions options;
  options.historySize = historySize;
  static util::FakeClock clock{util::SystemTime(std::chrono::microseconds(kNow))};
  options.clock = &clock;
  auto counter = std::make_shared<int>(0);
  options.newUid = [counter] { return "uid-" + std::to_string(++*counter); };
  return std::make_unique<Store>(std::move(options));
}

// Minimal objects rather than test::MakePod().json(): what the store fills in (kind and apiVersion
// of a node, namespace, schedulerName, status) is what these tests check.
json pod(std::string name, json spec = json::object(), json labels = json::object()) {
  json meta = {{"name", std::move(name)}};
  if (!labels.empty()) {
    meta["labels"] = std::move(labels);
  }
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", std::move(spec)}};
}

json node(std::string name) { return {{"metadata", {{"name", std::move(name)}}}}; }

json lease(std::string name) {
  return {{"metadata", {{"name", std::move(name)}}}, {"spec", {{"holderIdentity", "a"}}}};
}

std::string rvOf(const json& object) { return object["metadata"]["resourceVersion"]; }

std::vector<std::string> names(const std::vector<json>& items) {
  std::vector<std::string> out;
  for (const json& i : items) {
    out.push_back(i["metadata"]["name"]);
  }
  return out;
}

// "TYPE name rv" for each queued event.
std::vector<std::string> describe(Watch& watch) {
  std::vector<std::string> out;
  for (const WatchEvent& e : watch.drain()) {
    std::string line(e.typeName());
    if (e.object["metadata"].contains("name")) {
      line += " " + e.object["metadata"]["name"].get<std::string>();
    }
    out.push_back(line + " " + rvOf(e.object));
  }
  return out;
}

const std::string kModified =
    "the object has been modified; please apply your changes to the latest version and try again";

json withMessage(json status, std::string message) {
  status["message"] = std::move(message);
  return status;
}

TEST(Store, ErrorsRenderAsKubeApiserverStatus) {
  auto store = makeStore();
  ASSERT_TRUE(store->create(Resource::Pods, "default", pod("web")).ok());
  ASSERT_TRUE(store->create(Resource::Leases, "kube-system", lease("berth")).ok());
  struct Case {
    std::string name;
    std::function<ApiError()> call;
    json want;
  };
  const std::vector<Case> cases = {
      {"get of a missing pod", [&] { return store->get(Resource::Pods, "default", "x").error(); },
       json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
         "message":"pods \"x\" not found","reason":"NotFound",
         "details":{"name":"x","kind":"pods"},"code":404})")},
      {"a missing lease names its group",
       [&] { return store->get(Resource::Leases, "kube-system", "x").error(); },
       json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
         "message":"leases.coordination.k8s.io \"x\" not found","reason":"NotFound",
         "details":{"name":"x","group":"coordination.k8s.io","kind":"leases"},"code":404})")},
      {"create of an existing pod",
       [&] { return store->create(Resource::Pods, "default", pod("web")).error(); },
       json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
         "message":"pods \"web\" already exists","reason":"AlreadyExists",
         "details":{"name":"web","kind":"pods"},"code":409})")},
      {"update with a stale resourceVersion",
       [&] {
         json p = pod("web");
         p["metadata"]["resourceVersion"] = "7";
         return store->update(Resource::Pods, "default", "web", p).error();
       },
       withMessage(json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
         "status":"Failure","reason":"Conflict","details":{"name":"web","kind":"pods"},
         "code":409})"),
                   "Operation cannot be fulfilled on pods \"web\": " + kModified)},
      {"stale lease update names the group",
       [&] {
         json l = lease("berth");
         l["metadata"]["resourceVersion"] = "1";
         return store->update(Resource::Leases, "kube-system", "berth", l).error();
       },
       withMessage(
           json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
         "status":"Failure","reason":"Conflict","details":{"name":"berth",
         "group":"coordination.k8s.io","kind":"leases"},"code":409})"),
           "Operation cannot be fulfilled on leases.coordination.k8s.io \"berth\": " + kModified)},
      {"delete of a missing node", [&] { return store->remove(Resource::Nodes, "", "n1").error(); },
       json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
         "message":"nodes \"n1\" not found","reason":"NotFound",
         "details":{"name":"n1","kind":"nodes"},"code":404})")},
      {"bad request has no details",
       [&] {
         json p = pod("web");
         p["metadata"]["namespace"] = "default";
         return store->create(Resource::Pods, "other", p).error();
       },
       json{{"kind", "Status"},
            {"apiVersion", "v1"},
            {"metadata", json::object()},
            {"status", "Failure"},
            {"message",
             "the namespace of the provided object does not match the namespace sent on the "
             "request"},
            {"reason", "BadRequest"},
            {"code", 400}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.call().toStatus(), c.want);
  }
  EXPECT_EQ(successStatus(201), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
      "status":"Success","code":201})"));
}

TEST(Store, CreateAssignsIdentityAndDefaults) {
  auto store = makeStore();
  EXPECT_EQ(store->resourceVersion(), "0");
  json in = pod("web", {{"containers", json::array()}});
  in["metadata"]["namespace"] = "default";
  in["status"] = {{"phase", "Running"}};
  auto created = store->create(Resource::Pods, "default", in);
  ASSERT_TRUE(created.ok()) << created.error().status.message;
  const json& meta = (*created)["metadata"];
  EXPECT_EQ(meta["uid"], "uid-1");
  EXPECT_EQ(meta["creationTimestamp"], "2026-11-30T08:00:00Z");
  EXPECT_EQ(meta["resourceVersion"], "1");
  EXPECT_EQ(meta["namespace"], "default");
  EXPECT_EQ((*created)["status"], json({{"phase", "Pending"}})) << "the pod strategy resets status";
  EXPECT_EQ((*created)["spec"]["schedulerName"], "default-scheduler");
  EXPECT_EQ(*store->get(Resource::Pods, "default", "web"), *created);

  auto n = store->create(Resource::Nodes, "ignored", node("n1"));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ((*n)["apiVersion"], "v1");
  EXPECT_EQ((*n)["kind"], "Node");
  EXPECT_FALSE((*n)["metadata"].contains("namespace")) << "nodes are cluster-scoped";
  EXPECT_EQ(rvOf(*n), "2");
  EXPECT_TRUE(store->get(Resource::Nodes, "", "n1").ok());

  auto l = store->create(Resource::Leases, "kube-system", lease("berth"));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(store->resourceVersion(), "3");

  json generated = {{"metadata", {{"generateName", "web-"}}}};
  auto g = store->create(Resource::Pods, "default", generated);
  ASSERT_TRUE(g.ok());
  std::string name = (*g)["metadata"]["name"];
  EXPECT_EQ(name.size(), 9u);
  EXPECT_EQ(name.substr(0, 4), "web-");

  auto unnamed = store->create(Resource::Pods, "default", json{{"metadata", json::object()}});
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(unnamed.error().status.code, 422);
  EXPECT_EQ(unnamed.error().status.message,
            "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required");
  EXPECT_EQ(store->resourceVersion(), "4") << "failed writes do not bump the resourceVersion";
}

TEST(Store, UpdateIsOptimisticallyConcurrent) {
  struct Case {
    std::string name;
    std::string resourceVersion;  // what the PUT carries; "current" is the stored one
    std::string urlName = "web";
    int wantCode = 200;
  };
  const std::vector<Case> cases = {
      {"no resourceVersion updates unconditionally", ""},
      {"the current resourceVersion", "current"},
      {"resourceVersion 0 updates unconditionally", "0"},
      {"a stale resourceVersion", "1", "web", 409},
      {"a future resourceVersion", "99", "web", 409},
      {"a malformed resourceVersion", "abc", "web", 400},
      {"name differs from the URL", "", "other", 400},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto store = makeStore();
    ASSERT_TRUE(store->create(Resource::Pods, "default", pod("web")).ok());
    ASSERT_TRUE(store->create(Resource::Nodes, "", node("n1")).ok());  // rv 2: "web" is stale at 1
    json p = *store->get(Resource::Pods, "default", "web");
    auto put = store->update(Resource::Pods, "default", "web", p);  // no-op: still rv 1
    ASSERT_TRUE(put.ok());
    p["metadata"]["labels"] = {{"app", "x"}};
    p["metadata"]["resourceVersion"] = c.resourceVersion == "current" ? "1" : c.resourceVersion;
    if (c.resourceVersion == "1") {  // make 1 stale
      json bump = *store->get(Resource::Pods, "default", "web");
      bump["metadata"]["labels"] = {{"app", "y"}};
      ASSERT_TRUE(store->update(Resource::Pods, "default", "web", bump).ok());
    }
    p["metadata"]["name"] = c.urlName;
    auto got = store->update(Resource::Pods, "default", "web", p);
    if (c.wantCode == 200) {
      ASSERT_TRUE(got.ok()) << got.error().status.message;
      EXPECT_EQ((*got)["metadata"]["labels"]["app"], "x");
      EXPECT_EQ((*got)["metadata"]["uid"], "uid-1");
      EXPECT_EQ(rvOf(*got), "3");
    } else {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.error().status.code, c.wantCode);
    }
  }
}

TEST(Store, UpdateKeepsIdentityStatusAndSkipsNoOps) {
  auto store = makeStore();
  ASSERT_TRUE(store->create(Resource::Pods, "default", pod("web")).ok());
  json p = *store->get(Resource::Pods, "default", "web");

  auto same = store->update(Resource::Pods, "default", "web", p);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(rvOf(*same), "1") << "a no-op update keeps the resourceVersion";
  EXPECT_EQ(store->resourceVersion(), "1");

  p["metadata"]["uid"] = "forged";
  p["metadata"]["creationTimestamp"] = "2000-01-01T00:00:00Z";
  p["status"] = {{"phase", "Running"}};
  p["spec"]["activeDeadlineSeconds"] = 5;  // one of the few fields a pod update may change
  auto updated = store->update(Resource::Pods, "default", "web", p);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ((*updated)["metadata"]["uid"], "uid-1");
  EXPECT_EQ((*updated)["metadata"]["creationTimestamp"], "2026-11-30T08:00:00Z");
  EXPECT_EQ((*updated)["status"]["phase"], "Pending") << "PUT pods cannot change the status";
  EXPECT_EQ((*updated)["spec"]["activeDeadlineSeconds"], 5);

  json s = *updated;
  s["status"] = {{"phase", "Running"}};
  s["spec"]["activeDeadlineSeconds"] = 7;
  auto status = store->updateStatus(Resource::Pods, "default", "web", s);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["status"]["phase"], "Running");
  EXPECT_EQ((*status)["spec"]["activeDeadlineSeconds"], 5) << "pods/status changes only the status";
  EXPECT_EQ(rvOf(*status), "3");

  auto stale = store->updateStatus(Resource::Pods, "default", "web", s);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().status.code, 409);

  auto missing = store->update(Resource::Pods, "default", "nope", pod("nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().status.code, 404);

  json event = {{"metadata", {{"name", "e1"}}}, {"reason", "Scheduled"}};
  auto upserted = store->update(Resource::Events, "default", "e1", event);
  ASSERT_TRUE(upserted.ok()) << "events allow create on update";
  EXPECT_EQ((*upserted)["metadata"]["uid"], "uid-2");
}

TEST(Store, DeleteHonoursPreconditions) {
  struct Case {
    std::string name;
    Preconditions pre;
    int wantCode;  // 0: success
    std::string wantMessage;
  };
  const std::vector<Case> cases = {
      {"no preconditions", {}, 0, ""},
      {"matching uid and resourceVersion", {"uid-1", "1"}, 0, ""},
      {"uid mismatch",
       {"other", ""},
       409,
       "Operation cannot be fulfilled on pods \"web\": StorageError: invalid object, Code: 4, Key: "
       "/registry/pods/default/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
       "UID in precondition: other, UID in object meta: uid-1"},
      {"resourceVersion mismatch",
       {"", "7"},
       409,
       "Operation cannot be fulfilled on pods \"web\": StorageError: invalid object, Code: 4, Key: "
       "/registry/pods/default/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
       "ResourceVersion in precondition: 7, ResourceVersion in object meta: 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto store = makeStore();
    ASSERT_TRUE(store->create(Resource::Pods, "default", pod("web")).ok());
    auto got = store->remove(Resource::Pods, "default", "web", c.pre);
    if (c.wantCode == 0) {
      ASSERT_TRUE(got.ok()) << got.error().status.message;
      EXPECT_EQ(rvOf(*got), "1") << "the object as it was";
      EXPECT_EQ(store->get(Resource::Pods, "default", "web").error().status.code, 404);
      EXPECT_EQ(store->resourceVersion(), "2");
    } else {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.error().status.code, c.wantCode);
      EXPECT_EQ(got.error().status.message, c.wantMessage);
      EXPECT_TRUE(store->get(Resource::Pods, "default", "web").ok());
    }
  }
}

TEST(Store, ListFiltersBySelectorsAndNamespace) {
  auto store = makeStore();
  ASSERT_TRUE(
      store->create(Resource::Pods, "b", pod("p1", {{"nodeName", "n1"}}, {{"app", "web"}})).ok());
  ASSERT_TRUE(
      store->create(Resource::Pods, "a", pod("p2", {{"schedulerName", "berth"}}, {{"app", "db"}}))
          .ok());
  ASSERT_TRUE(
      store
          ->create(Resource::Pods, "a", pod("p3", {{"schedulerName", "berth"}, {"nodeName", "n2"}}))
          .ok());
  struct Case {
    std::string name;
    std::string ns;
    ListOptions options;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"everything, in namespace then name order", "", {}, {"p2", "p3", "p1"}},
      {"one namespace", "a", {}, {"p2", "p3"}},
      {"unbound pods", "", {"", "spec.nodeName="}, {"p2"}},
      {"bound pods", "", {"", "spec.nodeName!="}, {"p3", "p1"}},
      {"== is =", "", {"", "spec.nodeName==n1"}, {"p1"}},
      {"berth's pending pods", "", {"", "spec.schedulerName=berth,spec.nodeName="}, {"p2"}},
      {"default scheduler", "", {"", "spec.schedulerName=default-scheduler"}, {"p1"}},
      {"phase", "", {"", "status.phase=Pending"}, {"p2", "p3", "p1"}},
      {"phase mismatch", "", {"", "status.phase!=Pending"}, {}},
      {"metadata.name", "", {"", "metadata.name=p3"}, {"p3"}},
      {"metadata.namespace", "", {"", "metadata.namespace=b"}, {"p1"}},
      {"label equality", "", {"app=web", ""}, {"p1"}},
      {"label set", "", {"app in (web,db)", ""}, {"p2", "p1"}},
      {"label absent", "", {"!app", ""}, {"p3"}},
      {"labels and fields together", "a", {"app", "spec.schedulerName=berth"}, {"p2"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = store->list(Resource::Pods, c.ns, c.options);
    ASSERT_TRUE(got.ok()) << got.error().status.message;
    EXPECT_EQ(names(got->items), c.want);
    EXPECT_EQ(got->resourceVersion, "3");
  }

  json wire = store->list(Resource::Pods, "a")->toJson(Resource::Pods);
  EXPECT_EQ(wire["kind"], "PodList");
  EXPECT_EQ(wire["apiVersion"], "v1");
  EXPECT_EQ(wire["metadata"]["resourceVersion"], "3");
  ASSERT_EQ(wire["items"].size(), 2u);
  EXPECT_FALSE(wire["items"][0].contains("kind")) << "typed list items carry no kind";

  auto bad = store->list(Resource::Pods, "", {"a in (", ""});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().status.code, 400);
}

TEST(Store, FieldSelectorParsing) {
  struct Case {
    std::string name;
    Resource resource;
    std::string text;
    std::string wantError;  // "" when valid
  };
  const std::vector<Case> cases = {
      {"empty", Resource::Pods, "", ""},
      {"pod fields", Resource::Pods, "spec.nodeName=a,status.phase!=Failed", ""},
      {"node unschedulable", Resource::Nodes, "spec.unschedulable=false", ""},
      {"event involved object", Resource::Events, "involvedObject.name=web", ""},
      {"lease by name", Resource::Leases, "metadata.name=berth", ""},
      {"escaped comma", Resource::Pods, "metadata.name=a\\,b", ""},
      {"no operator", Resource::Pods, "spec.nodeName",
       "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'"},
      {"unsupported pod field", Resource::Pods, "spec.priority=1",
       "field label not supported: spec.priority"},
      {"unsupported node field", Resource::Nodes, "spec.nodeName=a",
       "field label not supported: spec.nodeName"},
      {"lease default conversion", Resource::Leases, "spec.holderIdentity=a",
       "\"spec.holderIdentity\" is not a known field selector: only \"metadata.name\", "
       "\"metadata.namespace\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = FieldSelector::parse(c.resource, c.text);
    if (c.wantError.empty()) {
      EXPECT_TRUE(got.ok()) << got.error().status.message;
    } else {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.error().status.code, 400);
      EXPECT_EQ(got.error().status.reason, "BadRequest");
      EXPECT_EQ(got.error().status.message, c.wantError);
    }
  }
  auto escaped = FieldSelector::parse(Resource::Pods, "metadata.name=a\\,b");
  ASSERT_TRUE(escaped.ok());
  EXPECT_TRUE(escaped->matches(Resource::Pods, pod("a,b")));
  EXPECT_FALSE(escaped->matches(Resource::Pods, pod("a")));
  EXPECT_EQ(fieldValue(Resource::Pods, pod("x"), "spec.hostNetwork"), "false");
}

TEST(Store, WatchStartsWithCurrentStateOrReplaysHistory) {
  auto store = makeStore();
  ASSERT_TRUE(store->create(Resource::Pods, "default", pod("a")).ok());  // rv 1
  ASSERT_TRUE(store->create(Resource::Nodes, "", node("n1")).ok());      // rv 2
  ASSERT_TRUE(store->create(Resource::Pods, "default", pod("b")).ok());  // rv 3
  json a = *store->get(Resource::Pods, "default", "a");
  a["metadata"]["labels"] = {{"x", "1"}};
  ASSERT_TRUE(store->update(Resource::Pods, "default", "a", a).ok());  // rv 4
  ASSERT_TRUE(store->remove(Resource::Pods, "default", "b").ok());     // rv 5

  struct Case {
    std::string name;
    std::string from;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"unset: the current objects", "", {"ADDED a 4"}},
      {"0: the current objects", "0", {"ADDED a 4"}},
      {"from the start", "1", {"ADDED b 3", "MODIFIED a 4", "DELETED b 5"}},
      {"from another resource's version", "2", {"ADDED b 3", "MODIFIED a 4", "DELETED b 5"}},
      {"from the last change", "5", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto w = store->watch(Resource::Pods, "", {c.from});
    ASSERT_TRUE(w.ok()) << w.error().status.message;
    EXPECT_EQ(describe(**w), c.want);
  }

  auto live = store->watch(Resource::Pods, "default", {"5"});
  ASSERT_TRUE(live.ok());
  ASSERT_TRUE(store->create(Resource::Pods, "default", pod("c")).ok());  // rv 6
  ASSERT_TRUE(store->create(Resource::Pods, "other", pod("d")).ok());    // rv 7: other namespace
  ASSERT_TRUE(store->create(Resource::Nodes, "", node("n2")).ok());      // rv 8: other resource
  auto event = (*live)->next(std::chrono::milliseconds(100));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->toJson()["type"], "ADDED");
  EXPECT_EQ(event->toJson()["object"]["metadata"]["name"], "c");
  EXPECT_EQ(event->toJson()["object"]["kind"], "Pod");
  EXPECT_FALSE((*live)->next(std::chrono::milliseconds(10)).has_value());

  auto bad = store->watch(Resource::Pods, "", {"abc"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().status.code, 400);
}

TEST(Store, WatchFromBeyondTheHistoryIsGone) {
  auto store = makeStore(/*historySize=*/3);
  for (int i = 1; i <= 5; ++i) {  // pods at rv 1..5; the history keeps 3, 4, 5
    ASSERT_TRUE(store->create(Resource::Pods, "default", pod("p" + std::to_string(i))).ok());
  }
  struct Case {
    std::string from;
    int wantCode;  // 0: accepted
    size_t wantEvents = 0;
  };
  const std::vector<Case> cases = {
      {"1", 410}, {"2", 0, 3}, {"3", 0, 2}, {"5", 0, 0}, {"0", 0, 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("from " + c.from);
    auto w = store->watch(Resource::Pods, "", {c.from});
    if (c.wantCode == 0) {
      ASSERT_TRUE(w.ok()) << w.error().status.message;
      EXPECT_EQ((*w)->drain().size(), c.wantEvents);
    } else {
      ASSERT_FALSE(w.ok());
      EXPECT_EQ(w.error().toStatus(),
                json::parse(R"js({"kind":"Status","apiVersion":"v1","metadata":{},
                  "status":"Failure","message":"too old resource version: 1 (2)",
                  "reason":"Expired","code":410})js"));
    }
  }

  store->expireHistory();
  auto expired = store->watch(Resource::Pods, "", {"4"});
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.error().status.message, "too old resource version: 4 (5)");
  EXPECT_TRUE(store->watch(Resource::Pods, "", {"5"}).ok());
  EXPECT_TRUE(store->watch(Resource::Nodes, "", {"5"}).ok());
}

TEST(Store, WatchSelectorsTurnTransitionsIntoAddsAndDeletes) {
  auto store = makeStore();
  ASSERT_TRUE(
      store->create(Resource::Pods, "default", pod("p", {{"schedulerName", "berth"}})).ok());
  auto pending = store->watch(Resource::Pods, "", {"", "", "spec.nodeName="});
  auto labelled = store->watch(Resource::Pods, "", {"", "app=web", ""});
  ASSERT_TRUE(pending.ok());
  ASSERT_TRUE(labelled.ok());
  EXPECT_THAT(describe(**pending), ElementsAre("ADDED p 1"));
  EXPECT_THAT(describe(**labelled), ElementsAre());

  json p = *store->get(Resource::Pods, "default", "p");
  p["metadata"]["labels"] = {{"app", "web"}};
  ASSERT_TRUE(store->update(Resource::Pods, "default", "p", p).ok());  // rv 2
  ASSERT_TRUE(
      store->bind("default", "p", {{"metadata", {{"name", "p"}}}, {"target", {{"name", "n1"}}}})
          .ok());  // rv 3
  EXPECT_THAT(describe(**pending), ElementsAre("MODIFIED p 2", "DELETED p 3"))
      << "leaving the selection is a DELETED at the event's resourceVersion";
  EXPECT_THAT(describe(**labelled), ElementsAre("ADDED p 2", "MODIFIED p 3"));

  // A grace period of 0 deletes a bound pod at once.
  ASSERT_TRUE(store->remove(Resource::Pods, "default", "p", {}, 0).ok());  // rv 4
  EXPECT_THAT(describe(**pending), ElementsAre());
  auto deleted = (*labelled)->drain();
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_EQ(deleted[0].typeName(), "DELETED");
  EXPECT_EQ(rvOf(deleted[0].object), "4");
  EXPECT_EQ(deleted[0].object["spec"]["nodeName"], "n1") << "the last state of the object";
}

TEST(Store, BookmarksAndClosingWatches) {
  auto store = makeStore();
  ASSERT_TRUE(store->create(Resource::Leases, "kube-system", lease("l")).ok());
  WatchOptions withBookmarks{"1"};
  withBookmarks.allowWatchBookmarks = true;
  auto a = store->watch(Resource::Leases, "", withBookmarks);
  auto b = store->watch(Resource::Leases, "", {"1"});
  ASSERT_TRUE(a.ok() && b.ok());
  store->sendBookmarks();
  auto events = (*a)->drain();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].toJson(), json::parse(R"({"type":"BOOKMARK","object":{"kind":"Lease",
      "apiVersion":"coordination.k8s.io/v1","metadata":{"resourceVersion":"1"}}})"));
  EXPECT_TRUE((*b)->drain().empty()) << "only watches that allow bookmarks get them";

  store->closeWatches();
  EXPECT_TRUE((*a)->closed());
  EXPECT_FALSE((*a)->next(std::chrono::milliseconds(1000)).has_value());

  auto c = store->watch(Resource::Leases, "", {"1"});
  ASSERT_TRUE(c.ok());
  (*c)->stop();
  json l = *store->get(Resource::Leases, "kube-system", "l");
  l["spec"]["holderIdentity"] = "b";
  ASSERT_TRUE(store->update(Resource::Leases, "kube-system", "l", l).ok());
  EXPECT_TRUE((*c)->drain().empty()) << "a stopped watch gets nothing more";
}

TEST(Store, SlowWatcherIsClosed) {
  StoreOptions options;
  options.watchQueueLimit = 2;
  Store store(options);
  auto w = store.watch(Resource::Nodes, "", {});
  ASSERT_TRUE(w.ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(store.create(Resource::Nodes, "", node("n" + std::to_string(i))).ok());
  }
  EXPECT_TRUE((*w)->closed());
  EXPECT_EQ((*w)->drain().size(), 2u) << "what was queued can still be read";
}

TEST(Store, BindingAssignsThePodOnce) {
  struct Case {
    std::string name;
    json binding;
    bool preBound = false;
    int wantCode;  // 0: success
    std::string wantMessage;
  };
  const json target = {{"kind", "Node"}, {"name", "n1"}};
  const std::vector<Case> cases = {
      {"binds", {{"metadata", {{"name", "web"}}}, {"target", target}}, false, 0, ""},
      {"uid precondition holds",
       {{"metadata", {{"name", "web"}, {"uid", "uid-1"}}}, {"target", target}},
       false,
       0,
       ""},
      {"already bound",
       {{"metadata", {{"name", "web"}}}, {"target", target}},
       true,
       409,
       "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to node "
       "\"n0\""},
      {"uid precondition fails",
       {{"metadata", {{"name", "web"}, {"uid", "old"}}}, {"target", target}},
       false,
       409,
       "Operation cannot be fulfilled on pods \"web\": StorageError: invalid object, Code: 4, Key: "
       "/registry/pods/default/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
       "UID in precondition: old, UID in object meta: uid-1"},
      {"missing pod",
       {{"metadata", {{"name", "nope"}}}, {"target", target}},
       false,
       404,
       "pods \"nope\" not found"},
      {"name differs from the URL",
       {{"metadata", {{"name", "other"}}}, {"target", target}},
       false,
       400,
       "name in URL does not match name in Binding object"},
      {"no target", {{"metadata", {{"name", "web"}}}}, false, 500, "target.name: Required value"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto store = makeStore();
    json in = pod("web");
    if (c.preBound) {
      in["spec"]["nodeName"] = "n0";  // created bound: an update may not set it
    }
    ASSERT_TRUE(store->create(Resource::Pods, "default", in).ok());
    std::string url = c.binding["metadata"]["name"];
    if (c.name == "name differs from the URL") {
      url = "web";
    }
    auto got = store->bind("default", url, c.binding);
    if (c.wantCode == 0) {
      ASSERT_TRUE(got.ok()) << got.error().status.message;
      EXPECT_EQ(*got, "2");
      json bound = *store->get(Resource::Pods, "default", "web");
      EXPECT_EQ(bound["spec"]["nodeName"], "n1");
      EXPECT_EQ(bound["status"]["conditions"],
                json::parse(R"([{"type":"PodScheduled","status":"True","lastProbeTime":null,
                  "lastTransitionTime":"2026-11-30T08:00:00Z"}])"));
      EXPECT_EQ(rvOf(bound), "2");
    } else {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.error().status.code, c.wantCode);
      EXPECT_EQ(got.error().status.message, c.wantMessage);
    }
  }
}

TEST(Store, BindingReplacesAnUnschedulableCondition) {
  auto store = makeStore();
  ASSERT_TRUE(store->create(Resource::Pods, "default", pod("web")).ok());
  json p = *store->get(Resource::Pods, "default", "web");
  p["status"]["conditions"] = json::parse(R"([{"type":"PodScheduled","status":"False",
      "reason":"Unschedulable","message":"0/1 nodes are available"}])");
  ASSERT_TRUE(store->updateStatus(Resource::Pods, "default", "web", p).ok());
  json binding = {{"metadata", {{"name", "web"}, {"annotations", {{"k", "v"}}}}},
                  {"target", {{"name", "n1"}}}};
  ASSERT_TRUE(store->bind("default", "web", binding).ok());
  json got = *store->get(Resource::Pods, "default", "web");
  EXPECT_EQ(got["status"]["conditions"],
            json::parse(R"([{"type":"PodScheduled","status":"True","lastProbeTime":null,
              "lastTransitionTime":"2026-11-30T08:00:00Z"}])"));
  EXPECT_EQ(got["metadata"]["annotations"]["k"], "v");
}

TEST(Store, ConcurrentWritersGetDistinctVersionsInWatchOrder) {
  auto store = makeStore(/*historySize=*/100000);
  auto w = store->watch(Resource::Pods, "", {});
  ASSERT_TRUE(w.ok());
  constexpr int kThreads = 4;
  constexpr int kEach = 250;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto r =
            store->create(Resource::Pods, "ns" + std::to_string(t), pod("p" + std::to_string(i)));
        EXPECT_TRUE(r.ok());
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  auto events = (*w)->drain();
  ASSERT_EQ(events.size(), static_cast<size_t>(kThreads * kEach));
  std::set<std::string> uids;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(rvOf(events[i].object), std::to_string(i + 1));
    uids.insert(events[i].object["metadata"]["uid"]);
  }
  EXPECT_EQ(uids.size(), events.size());
  EXPECT_EQ(store->list(Resource::Pods, "")->items.size(), events.size());
}

TEST(Store, ResourcesMapToPaths) {
  EXPECT_EQ(findResource("", "pods"), Resource::Pods);
  EXPECT_EQ(findResource("", "events"), Resource::Events);
  EXPECT_EQ(findResource("events.k8s.io", "events"), Resource::EventsV1);
  EXPECT_EQ(findResource("coordination.k8s.io", "leases"), Resource::Leases);
  EXPECT_FALSE(findResource("", "leases").has_value());
  EXPECT_FALSE(resourceInfo(Resource::Nodes).namespaced);
  EXPECT_EQ(resourceInfo(Resource::EventsV1).apiVersion(), "events.k8s.io/v1");
}

}  // namespace
}  // namespace berth::apiserver
