#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pkg/apiserver/store.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

const std::string kContinueExpired =
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.";

constexpr std::string_view kBase64Url =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string base64Url(std::string_view data) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : data) {
    bits = (bits << 8) | c;
    for (count += 8; count >= 6; count -= 6) {
      out += kBase64Url[(bits >> (count - 6)) & 0x3F];
    }
  }
  if (count > 0) {
    out += kBase64Url[(bits << (6 - count)) & 0x3F];
  }
  return out;
}

std::string unbase64Url(std::string_view text) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    bits = (bits << 6) | static_cast<uint32_t>(kBase64Url.find(c));
    if ((count += 6) >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xFF);
    }
  }
  return out;
}

// Without a namespace (the builders' pods are in "default"): one body is created in several.
json pod(const std::string& name, json labels = json::object(), std::string node = "") {
  json p = {{"metadata", {{"name", name}, {"labels", std::move(labels)}}},
            {"spec", json::object()}};
  if (!node.empty()) {
    p["spec"]["nodeName"] = node;
  }
  return p;
}

std::vector<std::string> keys(const std::vector<json>& items) {
  std::vector<std::string> out;
  for (const json& i : items) {
    const json& meta = i["metadata"];
    out.push_back(meta.contains("namespace")
                      ? meta["namespace"].get<std::string>() + "/" + meta["name"].get<std::string>()
                      : meta["name"].get<std::string>());
  }
  return out;
}

// Lists every page with `limit`, calling `between` before each continuation.
std::vector<ListResult> listPages(Store& store, Resource resource, std::string_view ns,
                                  ListOptions options, const std::function<void(int)>& between) {
  std::vector<ListResult> pages;
  for (int page = 0; page < 100; ++page) {
    auto got = store.list(resource, ns, options);
    EXPECT_TRUE(got.ok()) << got.error().status.message;
    if (!got.ok()) {
      break;
    }
    pages.push_back(*got);
    if (got->continueToken.empty()) {
      break;
    }
    options.continueToken = got->continueToken;
    between(page);
  }
  return pages;
}

TEST(StoreList, PagesAreOneSnapshotDespiteWritesBetweenThem) {
  Store store;
  std::vector<std::string> want;
  for (int i = 0; i < 10; ++i) {
    std::string name = "p" + std::to_string(i);
    ASSERT_TRUE(store.create(Resource::Pods, "default", pod(name, {{"v", "1"}})).ok());
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(store.create(Resource::Pods, "kube-system", pod("q" + std::to_string(i))).ok());
  }
  const ListResult whole = *store.list(Resource::Pods, "");
  ASSERT_EQ(whole.items.size(), 13u);
  EXPECT_TRUE(whole.continueToken.empty());
  EXPECT_FALSE(whole.remainingItemCount.has_value());

  // Between pages: create before and after the cursor, delete and modify items not yet served.
  int writes = 0;
  auto between = [&](int page) {
    const std::string n = std::to_string(page);
    ASSERT_TRUE(store.create(Resource::Pods, "default", pod("p5" + n)).ok());
    ASSERT_TRUE(store.create(Resource::Pods, "kube-system", pod("q9" + n)).ok());
    ASSERT_TRUE(store.create(Resource::Pods, "a", pod("early" + n)).ok());
    if (page == 0) {
      ASSERT_TRUE(store.remove(Resource::Pods, "default", "p5").ok());
      json p6 = *store.get(Resource::Pods, "default", "p6");
      p6["metadata"]["labels"]["v"] = "2";
      ASSERT_TRUE(store.update(Resource::Pods, "default", "p6", p6).ok());
      ASSERT_TRUE(store.remove(Resource::Pods, "kube-system", "q2").ok());
    }
    ++writes;
  };
  ListOptions options;
  options.limit = 4;
  const std::vector<ListResult> pages = listPages(store, Resource::Pods, "", options, between);
  ASSERT_EQ(pages.size(), 4u);
  EXPECT_EQ(writes, 3);
  std::vector<json> served;
  const std::vector<int64_t> remaining = {9, 5, 1};
  for (size_t i = 0; i < pages.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(pages[i].resourceVersion, whole.resourceVersion) << "every page is at the first rv";
    EXPECT_EQ(pages[i].items.size(), i < 3 ? 4u : 1u);
    if (i < 3) {
      EXPECT_FALSE(pages[i].continueToken.empty());
      EXPECT_EQ(pages[i].remainingItemCount, remaining[i]);
    } else {
      EXPECT_TRUE(pages[i].continueToken.empty());
      EXPECT_FALSE(pages[i].remainingItemCount.has_value());
    }
    served.insert(served.end(), pages[i].items.begin(), pages[i].items.end());
  }
  EXPECT_EQ(keys(served), keys(whole.items));
  EXPECT_EQ(served, whole.items) << "deleted and modified items are served as they were";
  EXPECT_EQ(served[6]["metadata"]["labels"]["v"], "1");
  EXPECT_NE(store.get(Resource::Pods, "default", "p6")->at("metadata").at("labels").at("v"), "1");

  // A new list sees the writes.
  auto now = store.list(Resource::Pods, "");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->items.size(), 13u + 9u - 2u);
}

TEST(StoreList, LimitCountsMatchingItemsAcrossPages) {
  Store store;
  for (int i = 0; i < 12; ++i) {
    json labels = i % 2 == 0 ? json{{"app", "web"}} : json{{"app", "db"}};
    ASSERT_TRUE(store
                    .create(Resource::Pods, i < 6 ? "a" : "b",
                            pod("p" + std::to_string(10 + i), labels, i % 3 == 0 ? "" : "n1"))
                    .ok());
  }
  struct Case {
    std::string name;
    std::string ns;
    std::string labels;
    std::string fields;
    int64_t limit;
  };
  const std::vector<Case> cases = {
      {"label selector", "", "app=web", "", 2},
      {"field selector", "", "", "spec.nodeName=n1", 3},
      {"both", "", "app=web", "spec.nodeName=n1", 1},
      {"both, one namespace", "b", "app=web", "spec.nodeName!=n1", 1},
      {"nothing matches", "", "app=none", "", 2},
      {"limit beyond the matches", "a", "app", "", 50},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ListOptions all{c.labels, c.fields};
    const ListResult whole = *store.list(Resource::Pods, c.ns, all);
    // Between pages, pods start and stop matching; the pages keep the first page's view.
    auto between = [&](int page) {
      for (const std::string& key : keys(whole.items)) {
        auto slash = key.find('/');
        json p = *store.get(Resource::Pods, key.substr(0, slash), key.substr(slash + 1));
        p["metadata"]["labels"]["app"] = "moved" + std::to_string(page);
        ASSERT_TRUE(
            store.update(Resource::Pods, key.substr(0, slash), key.substr(slash + 1), p).ok());
      }
      ASSERT_TRUE(store.create(Resource::Pods, "b", pod("p00", {{"app", "web"}}, "n1")).ok());
      ASSERT_TRUE(store.remove(Resource::Pods, "b", "p00", {}, /*gracePeriodSeconds=*/0).ok());
    };
    ListOptions paged = all;
    paged.limit = c.limit;
    std::vector<json> served;
    const std::vector<ListResult> pages = listPages(store, Resource::Pods, c.ns, paged, between);
    for (const ListResult& page : pages) {
      EXPECT_LE(static_cast<int64_t>(page.items.size()), c.limit);
      EXPECT_FALSE(page.remainingItemCount.has_value()) << "not counted for filtered lists";
      EXPECT_EQ(page.resourceVersion, whole.resourceVersion);
      served.insert(served.end(), page.items.begin(), page.items.end());
    }
    for (size_t i = 0; i + 1 < pages.size(); ++i) {
      EXPECT_EQ(static_cast<int64_t>(pages[i].items.size()), c.limit) << "only the last is short";
    }
    EXPECT_EQ(keys(served), keys(whole.items));
    EXPECT_EQ(served, whole.items);
  }
}

TEST(StoreList, PagesOneNamespaceAndClusterScopedResources) {
  Store store;
  for (std::string ns : {"a", "b", "c"}) {
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(store.create(Resource::Pods, ns, pod("p" + std::to_string(i))).ok());
    }
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        store.create(Resource::Nodes, "", {{"metadata", {{"name", "n" + std::to_string(i)}}}})
            .ok());
  }
  ListOptions options;
  options.limit = 2;
  auto pages = listPages(store, Resource::Pods, "b", options, [](int) {});
  ASSERT_EQ(pages.size(), 2u);
  EXPECT_EQ(keys(pages[0].items), (std::vector<std::string>{"b/p0", "b/p1"}));
  EXPECT_EQ(keys(pages[1].items), (std::vector<std::string>{"b/p2"}));
  EXPECT_EQ(pages[0].remainingItemCount, 1);
  // Within one namespace the token's key is relative to it, as etcd's key prefix is.
  json token = json::parse(unbase64Url(pages[0].continueToken));
  EXPECT_EQ(token["start"], std::string("p1") + '\0');

  pages = listPages(store, Resource::Nodes, "", options, [](int) {});
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_EQ(keys(pages[2].items), (std::vector<std::string>{"n4"}));
}

TEST(StoreList, ContinueTokenIsUpstreamsOpaqueBase64Json) {
  Store store;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(store.create(Resource::Pods, "default", pod("p" + std::to_string(i))).ok());
  }
  ListOptions options;
  options.limit = 2;
  auto page = store.list(Resource::Pods, "", options);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->continueToken.find('='), std::string::npos) << "unpadded";
  EXPECT_EQ(unbase64Url(page->continueToken),
            R"({"v":"meta.k8s.io/v1","rv":3,"start":"default/p1\u0000"})");
  json wire = page->toJson(Resource::Pods);
  EXPECT_EQ(wire["metadata"], json({{"resourceVersion", "3"},
                                    {"continue", page->continueToken},
                                    {"remainingItemCount", 1}}));
  options.continueToken = page->continueToken;
  wire = store.list(Resource::Pods, "", options)->toJson(Resource::Pods);
  EXPECT_EQ(wire["metadata"], json({{"resourceVersion", "3"}}));
  EXPECT_EQ(wire["items"].size(), 1u);
}

TEST(StoreList, ContinuingBeyondTheHistoryIsExpired) {
  StoreOptions small;
  small.historySize = 3;
  Store store(small);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store.create(Resource::Pods, "default", pod("p" + std::to_string(i))).ok());
  }
  ListOptions options;
  options.limit = 2;
  auto first = store.list(Resource::Pods, "", options);
  ASSERT_TRUE(first.ok());
  options.continueToken = first->continueToken;
  // Two writes stay within the history: the continuation is still consistent.
  ASSERT_TRUE(store.create(Resource::Pods, "default", pod("p10")).ok());
  ASSERT_TRUE(store.remove(Resource::Pods, "default", "p3").ok());
  auto second = store.list(Resource::Pods, "", options);
  ASSERT_TRUE(second.ok()) << second.error().status.message;
  EXPECT_EQ(keys(second->items), (std::vector<std::string>{"default/p2", "default/p3"}));
  // Two more push the first page's resourceVersion out of it.
  ASSERT_TRUE(store.create(Resource::Pods, "default", pod("p11")).ok());
  ASSERT_TRUE(store.create(Resource::Pods, "default", pod("p12")).ok());
  auto expired = store.list(Resource::Pods, "", options);
  ASSERT_FALSE(expired.ok());
  const json status = expired.error().toStatus();
  EXPECT_EQ(status["code"], 410);
  EXPECT_EQ(status["reason"], "Expired");
  EXPECT_EQ(status["message"], kContinueExpired);
  ASSERT_TRUE(status["metadata"].contains("continue"));
  EXPECT_EQ(unbase64Url(status["metadata"]["continue"].get<std::string>()),
            R"({"v":"meta.k8s.io/v1","rv":-1,"start":"default/p1\u0000"})");

  // The inconsistent token goes on from the same key at the current state.
  options.continueToken = status["metadata"]["continue"];
  options.limit = 0;
  auto rest = store.list(Resource::Pods, "", options);
  ASSERT_TRUE(rest.ok()) << rest.error().status.message;
  EXPECT_EQ(keys(rest->items),
            (std::vector<std::string>{"default/p10", "default/p11", "default/p12", "default/p2",
                                      "default/p4"}));
  EXPECT_EQ(rest->resourceVersion, store.resourceVersion());

  store.expireHistory();
  options.continueToken = second->continueToken;
  EXPECT_EQ(store.list(Resource::Pods, "", options).error().status.code, 410);
}

TEST(StoreList, MalformedContinueTokensAreBadRequests) {
  Store store;
  ASSERT_TRUE(store.create(Resource::Pods, "default", pod("p0")).ok());
  const std::string invalid = "invalid continue token: continue key is not valid";
  struct Case {
    std::string name;
    std::string token;
    std::string message;  // a prefix
  };
  const std::vector<Case> cases = {
      {"not base64", "%%%", invalid + ": illegal base64 data at input byte 0"},
      {"not JSON", base64Url("nope"), invalid + ": "},
      {"not an object", base64Url("[]"),
       invalid + ": json: cannot unmarshal array into Go value of type storage.continueToken"},
      {"unknown version", base64Url(R"({"v":"meta.k8s.io/v2","rv":1,"start":"a"})"),
       invalid + ": server does not recognize this encoded version meta.k8s.io/v2"},
      {"zero resourceVersion", base64Url(R"({"v":"meta.k8s.io/v1","rv":0,"start":"a"})"),
       invalid + ": incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
      {"string resourceVersion", base64Url(R"({"v":"meta.k8s.io/v1","rv":"1","start":"a"})"),
       invalid + ": json: cannot unmarshal string into Go struct field continueToken.rv of type "
                 "int64"},
      {"empty start", base64Url(R"({"v":"meta.k8s.io/v1","rv":1,"start":""})"),
       invalid + ": encoded start key empty (version meta.k8s.io/v1)"},
      {"path traversal", base64Url(R"({"v":"meta.k8s.io/v1","rv":1,"start":"../x"})"),
       invalid + ": ../x"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ListOptions options;
    options.continueToken = c.token;
    auto got = store.list(Resource::Pods, "", options);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().status.code, 400);
    EXPECT_EQ(got.error().status.reason, "BadRequest");
    EXPECT_TRUE(got.error().status.message.starts_with(c.message)) << got.error().status.message;
  }
  ListOptions future;
  future.continueToken = base64Url(R"({"v":"meta.k8s.io/v1","rv":99,"start":"a"})");
  auto got = store.list(Resource::Pods, "", future);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().status.code, 504);
  EXPECT_EQ(got.error().status.message, "Too large resource version: 99, current: 1");
}

}  // namespace
}  // namespace berth::apiserver
