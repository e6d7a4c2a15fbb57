// The REST client and informers against the embedded API server over HTTP, with its fault hooks.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "pkg/api/decode.h"
#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "pkg/client/rest.h"
#include "pkg/informer/informer.h"
#include "tests/support/builders.h"
#include "tests/support/eventually.h"

namespace berth {
namespace {

using apiserver::Resource;
using json = nlohmann::json;
using test::eventually;
using test::MakePod;
using namespace std::chrono_literals;

constexpr auto kDeadline = std::chrono::seconds(60);  // only against hangs

class ClientIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::StoreOptions storeOptions;
    storeOptions.historySize = 200000;
    store_ = std::make_unique<apiserver::Store>(std::move(storeOptions));
    auto server = apiserver::Server::start(*store_, {});
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = *std::move(server);
    client_ = makeClient(server_->url());
  }

  static client::RestClientPtr makeClient(
      const std::string& url, int maxRetries = 5, client::Duration requestTimeout = 30s,
      size_t maxWatchEventBytes = client::RestOptions{}.maxWatchEventBytes,
      size_t maxResponseBytes = client::RestOptions{}.maxResponseBytes) {
    client::RestConfig config;
    config.server = url;
    config.qps = -1;  // the tests measure the server, not the limiter
    client::RestOptions options;
    options.retry.maxRetries = maxRetries;
    options.retry.backoff.initial = 10ms;
    options.retry.backoff.max = 100ms;
    options.requestTimeout = requestTimeout;
    options.maxWatchEventBytes = maxWatchEventBytes;
    options.maxResponseBytes = maxResponseBytes;
    auto c = client::RestClient::create(config, options);
    EXPECT_TRUE(c.ok());
    return c.ok() ? *std::move(c) : nullptr;
  }

  std::unique_ptr<informer::Informer<api::Pod>> podInformer(std::atomic<int>* events = nullptr) {
    informer::ReflectorOptions options;
    options.name = "pods";
    options.backoff.initial = 20ms;
    options.backoff.max = 200ms;
    auto inf = std::make_unique<informer::Informer<api::Pod>>(
        informer::makeListerWatcher(*client_, client::kPods), api::decodePod, options);
    if (events != nullptr) {
      inf->addEventHandlers({[events](const auto&) { ++*events; },
                             [events](const auto&, const auto&) { ++*events; },
                             [events](const auto&) { ++*events; }});
    }
    return inf;
  }

  int count(const std::string& verb) {
    int n = 0;
    for (const auto& r : server_->requestLog()) {
      n += r.verb == verb ? 1 : 0;
    }
    return n;
  }

  // A watch was started after the last list (and is open).
  bool watchingSinceLastList() {
    int lastList = -1;
    int lastWatch = -1;
    const auto log = server_->requestLog();
    for (int i = 0; i < static_cast<int>(log.size()); ++i) {
      if (log[i].verb == "list") {
        lastList = i;
      } else if (log[i].verb == "watch" && log[i].code == 200) {
        lastWatch = i;
      }
    }
    return lastWatch > lastList && server_->activeWatches() > 0;
  }

  // The informer's store holds exactly the server's pods, at the same resourceVersions.
  bool matches(const informer::Informer<api::Pod>& inf) {
    auto list = store_->list(Resource::Pods, "");
    if (!list.ok() || list->items.size() != inf.store().size()) {
      return false;
    }
    for (const json& item : list->items) {
      auto p = inf.store().get(item["metadata"]["namespace"].get<std::string>() + "/" +
                               item["metadata"]["name"].get<std::string>());
      if (p == nullptr || p->metadata.resourceVersion != item["metadata"]["resourceVersion"]) {
        return false;
      }
    }
    return true;
  }

  std::unique_ptr<apiserver::Store> store_;
  std::unique_ptr<apiserver::Server> server_;
  client::RestClientPtr client_;
};

TEST_F(ClientIntegration, CreateGetUpdatePatchBindDelete) {
  auto created = client_->create(client::kPods, "default", MakePod().name("web").json());
  ASSERT_TRUE(created.ok()) << created.error().toString();
  auto got = client_->get(client::kPods, "default", "web");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["metadata"]["uid"], (*created)["metadata"]["uid"]);

  json changed = *got;
  changed["metadata"]["labels"] = {{"app", "web"}};
  auto updated = client_->update(client::kPods, "default", "web", changed);
  ASSERT_TRUE(updated.ok()) << updated.error().toString();
  auto stale = client_->update(client::kPods, "default", "web", changed);
  ASSERT_FALSE(stale.ok());
  EXPECT_TRUE(stale.error().isConflict());

  auto patched = client_->patch(client::kPods, "default", "web", client::PatchType::Merge,
                                {{"metadata", {{"labels", {{"tier", "fe"}}}}}});
  ASSERT_TRUE(patched.ok()) << patched.error().toString();
  EXPECT_EQ((*patched)["metadata"]["labels"]["tier"], "fe");

  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", "web"}, {"namespace", "default"}}},
                  {"target", {{"kind", "Node"}, {"name", "n1"}}}};
  auto bound = client_->post(client::kPods, "default", "web", "binding", binding);
  ASSERT_TRUE(bound.ok()) << bound.error().toString();
  EXPECT_EQ((*client_->get(client::kPods, "default", "web"))["spec"]["nodeName"], "n1");

  auto wrongUid = client_->remove(client::kPods, "default", "web", {.uid = "nope"});
  ASSERT_FALSE(wrongUid.ok());
  EXPECT_TRUE(wrongUid.error().isConflict());
  // A bound pod is deleted gracefully: it terminates until its kubelet (here the test) finalizes
  // it.
  auto terminating = client_->remove(client::kPods, "default", "web");
  ASSERT_TRUE(terminating.ok());
  EXPECT_EQ((*terminating)["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(store_->finalizeGracefulDeletions(std::chrono::seconds(0)), 1u);
  auto missing = client_->get(client::kPods, "default", "web");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().isNotFound());
  EXPECT_EQ(missing.error().status.reason, "NotFound");
  EXPECT_EQ(missing.error().status.message, "pods \"web\" not found");
}

TEST_F(ClientIntegration, PagesThroughThousandsOfPods) {
  for (int i = 0; i < 2345; ++i) {
    ASSERT_TRUE(
        store_->create(Resource::Pods, "default", MakePod().name("p" + std::to_string(i)).json())
            .ok());
  }
  server_->clearRequestLog();
  auto all = client_->listAll(client::kPods, "", {.limit = 100});
  ASSERT_TRUE(all.ok()) << all.error().toString();
  EXPECT_EQ(all->items.size(), 2345u);
  EXPECT_EQ(all->resourceVersion, store_->resourceVersion());
  EXPECT_EQ(count("list"), 24);
}

TEST_F(ClientIntegration, AnInformerSyncsPodsAtTheApiSizeLimitsThroughSmallerPages) {
  // Pods with 200 KB of annotations (kube-apiserver allows 256 KiB in all) against a 1 MiB
  // response limit: a page of 500 such pods is over berth's real 64 MiB limit in the same way.
  const std::string pad(200 * 1000, 'z');
  for (int i = 0; i < 24; ++i) {
    json pod = MakePod().name("big-" + std::to_string(i)).json();
    pod["metadata"]["annotations"] = {{"example.com/pad", pad}};
    ASSERT_TRUE(store_->create(Resource::Pods, "default", pod).ok());
  }
  client_ =
      makeClient(server_->url(), 5, 30s, client::RestOptions{}.maxWatchEventBytes, 1024 * 1024);
  server_->clearRequestLog();
  auto inf = podInformer();
  inf->start();
  ASSERT_TRUE(inf->waitForSync(kDeadline));
  EXPECT_TRUE(matches(*inf));
  // Events still flow once synced: a new pod of the same size arrives.
  json later = MakePod().name("later").json();
  later["metadata"]["annotations"] = {{"example.com/pad", pad}};
  ASSERT_TRUE(store_->create(Resource::Pods, "default", later).ok());
  EXPECT_TRUE(eventually([&] { return inf->store().get("default/later") != nullptr; }));
  // 500, 250, 125, 62, 31, 15, 7 are over the limit; then pages of 3 (600 KB).
  std::vector<std::string> queries;
  for (const auto& r : server_->requestLog()) {
    if (r.verb == "list") {
      queries.push_back(r.query);
    }
  }
  ASSERT_EQ(queries.size(), 7u + 8u);
  EXPECT_THAT(queries[0], ::testing::HasSubstr("limit=500"));
  EXPECT_THAT(queries[7], ::testing::HasSubstr("limit=3"));
  EXPECT_THAT(queries[8], ::testing::HasSubstr("continue="));
}

TEST_F(ClientIntegration, RetriesIdempotentCallsButNeverAPost) {
  ASSERT_TRUE(store_->create(Resource::Pods, "default", MakePod().name("a").json()).ok());
  server_->clearRequestLog();
  server_->failNextRequests(2, 503);
  EXPECT_TRUE(client_->get(client::kPods, "default", "a").ok());
  EXPECT_EQ(count("get"), 3);

  server_->failNextRequests(1, 503);
  auto created = client_->create(client::kPods, "default", MakePod().name("b").json());
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.error().status.code, 503);
  EXPECT_EQ(count("create"), 1);

  server_->failNextRequests(1, 500);
  json binding = {{"metadata", {{"name", "a"}}}, {"target", {{"kind", "Node"}, {"name", "n1"}}}};
  auto bound = client_->post(client::kPods, "default", "a", "binding", binding);
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.error().status.code, 500);
  EXPECT_EQ(count("create"), 2);  // one binding attempt, no retry
}

TEST_F(ClientIntegration, ADelayedBindingIsSentOnce) {
  ASSERT_TRUE(store_->create(Resource::Pods, "default", MakePod().name("a").json()).ok());
  server_->delayBindings(300ms);
  json binding = {{"metadata", {{"name", "a"}}}, {"target", {{"kind", "Node"}, {"name", "n1"}}}};
  auto bound = client_->post(client::kPods, "default", "a", "binding", binding);
  ASSERT_TRUE(bound.ok()) << bound.error().toString();
  int bindings = 0;
  for (const auto& r : server_->requestLog()) {
    bindings += r.subresource == "binding" ? 1 : 0;
  }
  EXPECT_EQ(bindings, 1);
}

// A binding slower than the client's timeout fails on the client, is not sent again, and still
// takes effect: why the scheduler must never blindly retry one.
TEST_F(ClientIntegration, ABindingThatTimesOutIsNotRetried) {
  ASSERT_TRUE(store_->create(Resource::Pods, "default", MakePod().name("a").json()).ok());
  auto impatient = makeClient(server_->url(), 5, 200ms);
  server_->delayBindings(1000ms);
  json binding = {{"metadata", {{"name", "a"}}}, {"target", {{"kind", "Node"}, {"name", "n1"}}}};
  auto bound = impatient->post(client::kPods, "default", "a", "binding", binding);
  ASSERT_FALSE(bound.ok());
  EXPECT_EQ(bound.error().kind, client::ApiFailure::Kind::Connection);
  auto bindings = [&] {
    int n = 0;
    for (const auto& r : server_->requestLog()) {
      n += r.subresource == "binding" ? 1 : 0;
    }
    return n;
  };
  ASSERT_TRUE(eventually(
      [&] {
        auto p = store_->get(Resource::Pods, "default", "a");
        return bindings() > 0 && p.ok() &&
               p->value("/spec/nodeName"_json_pointer, std::string()) == "n1";
      },
      kDeadline));
  std::this_thread::sleep_for(300ms);  // room for a (wrong) retry to show up
  EXPECT_EQ(bindings(), 1);
}

TEST_F(ClientIntegration, ARefusedConnectionHasNoHttpCode) {
  const std::string url = server_->url();
  server_->stop();
  auto c = makeClient(url, /*maxRetries=*/0);
  auto r = c->get(client::kPods, "default", "a");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, client::ApiFailure::Kind::Connection);
  EXPECT_EQ(r.error().status.code, 0);
}

TEST_F(ClientIntegration, InformerFollowsChangesAcrossEveryFault) {
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(
        store_->create(Resource::Pods, "default", MakePod().name("p" + std::to_string(i)).json())
            .ok());
  }
  auto inf = podInformer();
  inf->start();
  ASSERT_TRUE(inf->waitForSync(kDeadline));
  EXPECT_EQ(inf->store().size(), 50u);
  const int lists = count("list");

  // A closed watch is reopened from the last resourceVersion, without a list.
  server_->closeWatches();
  ASSERT_TRUE(store_->create(Resource::Pods, "default", MakePod().name("after-close").json()).ok());
  ASSERT_TRUE(eventually([&] { return matches(*inf); }, kDeadline));
  EXPECT_EQ(count("list"), lists);

  // A 410 answer leads to a relist that also removes what vanished meanwhile.
  server_->expireNextWatches(1);
  server_->closeWatches();
  ASSERT_TRUE(store_->remove(Resource::Pods, "default", "p0").ok());
  ASSERT_TRUE(eventually([&] { return count("list") > lists && matches(*inf); }, kDeadline));

  // A malformed line leads to a relist. A line injected while the new watch is still starting
  // can miss it, so inject until the relist shows.
  const int beforeMalformed = count("list");
  ASSERT_TRUE(eventually([&] { return watchingSinceLastList(); }, kDeadline));
  ASSERT_TRUE(eventually(
      [&] {
        if (count("list") > beforeMalformed) {
          return true;
        }
        server_->injectMalformedWatchLine();
        std::this_thread::sleep_for(50ms);
        return false;
      },
      kDeadline));
  ASSERT_TRUE(
      store_->create(Resource::Pods, "default", MakePod().name("after-malformed").json()).ok());
  ASSERT_TRUE(eventually([&] { return matches(*inf); }, kDeadline));

  // 5xx for a while, then a restart refusing connections: backoff, then recovery.
  server_->failRequestsFor(300ms, 503);
  server_->closeWatches();
  server_->refuseConnectionsFor(500ms);
  ASSERT_TRUE(store_->remove(Resource::Pods, "default", "p1").ok());
  ASSERT_TRUE(
      store_->create(Resource::Pods, "default", MakePod().name("after-restart").json()).ok());
  ASSERT_TRUE(eventually([&] { return matches(*inf); }, kDeadline));
  inf->stop();
}

json podWithAnnotation(const std::string& name, size_t bytes) {
  json p = MakePod().name(name).json();
  p["metadata"]["annotations"] = {{"example.com/blob", std::string(bytes, 'a')}};
  return p;
}

TEST_F(ClientIntegration, AWatchEventOverTheLimitFailsTheStreamAndTheInformerRelists) {
  constexpr size_t kLimit = 64 * 1024;
  client_ = makeClient(server_->url(), 5, 30s, kLimit);
  auto list = client_->list(client::kPods, "");
  ASSERT_TRUE(list.ok()) << list.error().toString();
  client::WatchOptions options;
  options.resourceVersion = list->resourceVersion;
  options.allowWatchBookmarks = true;
  auto stream = client_->watch(client::kPods, "", options);
  ASSERT_TRUE(stream.ok()) << stream.error().toString();
  const json big = podWithAnnotation("big", 2 * kLimit);
  ASSERT_TRUE(store_->create(Resource::Pods, "default", podWithAnnotation("small", 1024)).ok());
  ASSERT_TRUE(store_->create(Resource::Pods, "default", big).ok());

  auto small = (*stream)->next();
  ASSERT_TRUE(small.ok()) << small.error().toString();
  ASSERT_TRUE(small->has_value());
  EXPECT_EQ((**small).object["metadata"]["name"], "small");
  auto tooLong = (*stream)->next();
  ASSERT_FALSE(tooLong.ok());
  EXPECT_EQ(tooLong.error().kind, client::ApiFailure::Kind::BadResponse);
  EXPECT_EQ(tooLong.error().toString(), "malformed response: watch event longer than 65536 bytes");
  stream->reset();

  // The informer treats it as a malformed stream and relists; a list is not held to the limit.
  auto inf = podInformer();
  inf->start();
  ASSERT_TRUE(inf->waitForSync(kDeadline));
  ASSERT_TRUE(eventually([&] { return watchingSinceLastList(); }, kDeadline));
  const int lists = count("list");
  const json big2 = podWithAnnotation("big-2", 2 * kLimit);
  ASSERT_TRUE(store_->create(Resource::Pods, "default", big2).ok());
  ASSERT_TRUE(eventually([&] { return count("list") > lists && matches(*inf); }, kDeadline));
  EXPECT_NE(inf->store().get("default/big-2"), nullptr);
  inf->stop();
}

// 100,000 events in an optimized build; sanitizer builds (5-10x slower, and where CI runs the
// suite) send 20,000, which still keeps the watch busy for minutes of server and decoder time.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BERTH_SLOW_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BERTH_SLOW_SANITIZER 1
#endif
#ifdef BERTH_SLOW_SANITIZER
constexpr int kLongWatchEvents = 20000;
#else
constexpr int kLongWatchEvents = 100000;
#endif

TEST_F(ClientIntegration, TensOfThousandsOfWatchEventsArriveWithoutLoss) {
  std::atomic<int> events{0};
  auto inf = podInformer(&events);
  inf->start();
  ASSERT_TRUE(inf->waitForSync(kDeadline));
  constexpr int kPods = 1000;
  constexpr int kEvents = kLongWatchEvents;
  for (int i = 0; i < kPods; ++i) {
    ASSERT_TRUE(
        store_->create(Resource::Pods, "default", MakePod().name("p" + std::to_string(i)).json())
            .ok());
  }
  for (int i = kPods; i < kEvents; ++i) {
    const std::string name = "p" + std::to_string(i % kPods);
    json p = MakePod().name(name).json();
    p["metadata"]["labels"] = {{"round", std::to_string(i)}};
    ASSERT_TRUE(store_->update(Resource::Pods, "default", name, p).ok());
  }
  ASSERT_TRUE(eventually([&] { return events.load() >= kEvents; }, kDeadline));
  EXPECT_EQ(events.load(), kEvents);
  EXPECT_TRUE(matches(*inf));
  EXPECT_EQ(count("list"), 1);
}

}  // namespace
}  // namespace berth
