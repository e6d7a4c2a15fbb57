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
  EXPECT_EQ(e->unknownType, "");
  // An unknown type is not a malformed line: the reflector skips the event, as client-go's.
  auto renamed = decodeWatchEvent(R"({"type":"RENAMED","object":{}})");
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(renamed->unknownType, "RENAMED");
  struct Case {
    std::string line;
    std::string message;
  };
  const Case bad[] = {
      {R"({"type":"MODIFIED","object":{)", "watch event is not JSON"},
      {R"([1])", "watch event is not a JSON object"},
      {R"({"type":"ADDED"})", "watch event needs a string type and an object"},
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
  // A page of more items than this is over the client's response limit (0: no limit).
  int64_t largestPage = 0;

  ApiResult<ObjectList> operator()(const ListOptions& o) {
    calls.push_back(o);
    if (largestPage > 0 && (o.limit <= 0 || o.limit > largestPage)) {
      return responseTooLarge("GET /api/v1/pods: response body over the limit of 1024 bytes");
    }
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

TEST(ListAllPages, AsksForSmallerPagesWhenAPageIsOverTheResponseLimit) {
  FakePager server{1234};
  server.largestPage = 3;  // e.g. objects near the API's size limits
  auto all = listAllPages(std::ref(server), {});
  ASSERT_TRUE(all.ok()) << all.error().toString();
  ASSERT_EQ(all->items.size(), 1234u);
  for (int i = 0; i < 1234; ++i) {
    ASSERT_EQ(all->items[i]["i"], i);
  }
  // 500, 250, 125, 62, 31, 15, 7 fail; 3 fits and is kept for the rest of the list.
  std::vector<int64_t> limits;
  for (const ListOptions& call : server.calls) {
    limits.push_back(call.limit);
  }
  ASSERT_GE(limits.size(), 8u);
  EXPECT_EQ(std::vector<int64_t>(limits.begin(), limits.begin() + 8),
            (std::vector<int64_t>{500, 250, 125, 62, 31, 15, 7, 3}));
  EXPECT_EQ(server.calls.size(), 7u + (1234 + 2) / 3);
  EXPECT_EQ(server.calls[7].continueToken, "");
  EXPECT_EQ(server.calls[8].continueToken, "3");
}

TEST(ListAllPages, ShrinksAPageInTheMiddleOfTheListFromItsContinueToken) {
  FakePager server{10};
  int calls = 0;
  auto pages = [&](const ListOptions& o) -> ApiResult<ObjectList> {
    // The second page (from "4") is too large until it holds a single object.
    if (++calls > 1 && o.continueToken == "4" && o.limit > 1) {
      return responseTooLarge("too large");
    }
    return server(o);
  };
  auto all = listAllPages(pages, {.limit = 4});
  ASSERT_TRUE(all.ok()) << all.error().toString();
  EXPECT_EQ(all->items.size(), 10u);
  ASSERT_GE(server.calls.size(), 2u);
  EXPECT_EQ(server.calls[1].continueToken, "4");
  EXPECT_EQ(server.calls[1].limit, 1);
}

TEST(ListAllPages, FailsWhenASingleObjectIsOverTheLimit) {
  std::vector<int64_t> limits;
  auto tooLarge = [&](const ListOptions& o) -> ApiResult<ObjectList> {
    limits.push_back(o.limit);
    return responseTooLarge("too large");
  };
  auto all = listAllPages(tooLarge, {.limit = 8});
  ASSERT_FALSE(all.ok());
  EXPECT_TRUE(all.error().isResponseTooLarge());
  EXPECT_EQ(limits, (std::vector<int64_t>{8, 4, 2, 1}));
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
