#include "pkg/client/request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::client {
namespace {

using json = nlohmann::json;

TEST(Resource, PathsFollowTheApiServerLayout) {
  EXPECT_EQ(kPods.path(), "/api/v1/pods");
  EXPECT_EQ(kPods.path("default"), "/api/v1/namespaces/default/pods");
  EXPECT_EQ(kPods.path("default", "web"), "/api/v1/namespaces/default/pods/web");
  EXPECT_EQ(kPods.path("default", "web", "binding"), "/api/v1/namespaces/default/pods/web/binding");
  EXPECT_EQ(kNodes.path("ignored", "n1", "status"), "/api/v1/nodes/n1/status");
  EXPECT_EQ(kLeases.path("kube-system", "berth"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/berth");
}

TEST(QueryString, EncodesListAndWatchParameters) {
  ListOptions list;
  EXPECT_EQ(queryString(list), "");
  list.labelSelector = "app in (a,b),tier!=db";
  list.limit = 500;
  list.continueToken = "eyJ2IjoxfQ==";
  EXPECT_EQ(
      queryString(list),
      "?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Ddb&limit=500&continue=eyJ2IjoxfQ%3D%3D");
  WatchOptions watch;
  watch.resourceVersion = "42";
  watch.timeoutSeconds = 300;
  watch.fieldSelector = "spec.nodeName=";
  watch.allowWatchBookmarks = true;
  EXPECT_EQ(queryString(watch),
            "?watch=true&fieldSelector=spec.nodeName%3D&resourceVersion=42&timeoutSeconds=300&"
            "allowWatchBookmarks=true");
}

TEST(WatchEvent, DecodesLines) {
  auto e = decodeWatchEvent(R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":"7"}}})");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->type, WatchEvent::Type::Modified);
  EXPECT_EQ(e->resourceVersion(), "7");
  struct Case {
    std::string line;
    std::string message;
  };
  const Case bad[] = {
      {R"({"type":"MODIFIED","object":{)", "watch event is not JSON"},
      {R"([1])", "watch event is not a JSON object"},
      {R"({"type":"ADDED"})", "watch event needs a string type and an object"},
      {R"({"type":"RENAMED","object":{}})", "unknown watch event type \"RENAMED\""},
  };
  for (const Case& c : bad) {
    SCOPED_TRACE(c.line);
    auto r = decodeWatchEvent(c.line);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ApiFailure::Kind::BadResponse);
    EXPECT_THAT(r.error().status.message, ::testing::StartsWith(c.message));
  }
}

TEST(DecodeList, ReadsItemsAndMetadata) {
  auto l = decodeList(json::parse(
      R"({"kind":"PodList","metadata":{"resourceVersion":"9","continue":"c"},"items":[{"a":1}]})"));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->resourceVersion, "9");
  EXPECT_EQ(l->continueToken, "c");
  EXPECT_EQ(l->items.size(), 1u);
  EXPECT_TRUE(decodeList(json::parse(R"({"metadata":{},"items":null})")).ok());
  EXPECT_FALSE(decodeList(json::parse(R"({"items":{}})")).ok());
}

// A server holding `total` items that pages them.
struct FakePager {
  explicit FakePager(int n) : total(n) {}
  int total;
  std::vector<ListOptions> calls;
  bool expireSecondPage = false;

  ApiResult<ObjectList> operator()(const ListOptions& o) {
    calls.push_back(o);
    if (expireSecondPage && !o.continueToken.empty()) {
      return decodeFailure(410, "GET", R"({"kind":"Status","code":410,"reason":"Expired"})");
    }
    const int start = o.continueToken.empty() ? 0 : std::stoi(o.continueToken);
    const int end = o.limit > 0 ? std::min(total, start + static_cast<int>(o.limit)) : total;
    ObjectList page;
    page.resourceVersion = "100";
    for (int i = start; i < end; ++i) {
      page.items.push_back(json{{"i", i}});
    }
    if (end < total) {
      page.continueToken = std::to_string(end);
    }
    return page;
  }
};

TEST(ListAllPages, FollowsContinueTokens) {
  FakePager server{1234};
  auto all = listAllPages(std::ref(server), {});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->items.size(), 1234u);
  for (int i = 0; i < 1234; ++i) {
    ASSERT_EQ(all->items[i]["i"], i);
  }
  EXPECT_EQ(all->resourceVersion, "100");
  ASSERT_EQ(server.calls.size(), 3u);
  EXPECT_EQ(server.calls[0].limit, 500);
  EXPECT_EQ(server.calls[2].continueToken, "1000");
}

TEST(ListAllPages, FallsBackToAFullListWhenTheTokenExpires) {
  FakePager server{1234};
  server.expireSecondPage = true;
  auto all = listAllPages(std::ref(server), {.limit = 100});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), 1234u);
  ASSERT_EQ(server.calls.size(), 3u);
  EXPECT_EQ(server.calls[2].limit, 0);
}

TEST(ListAllPages, StopsWhenCancelled) {
  FakePager server{10};
  std::stop_source stop;
  stop.request_stop();
  auto all = listAllPages(std::ref(server), {}, stop.get_token());
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.error().kind, ApiFailure::Kind::Cancelled);
}

}  // namespace
}  // namespace berth::client
