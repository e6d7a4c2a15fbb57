#include "pkg/informer/informer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pkg/api/decode.h"
#include "pkg/log/log.h"
#include "pkg/util/clock.h"
#include "pkg/util/random.h"
#include "tests/support/builders.h"

namespace berth::informer {
namespace {

using client::ApiFailure;
using client::ApiResult;
using client::ObjectList;
using client::WatchEvent;
using json = nlohmann::json;
using ::testing::ElementsAre;

constexpr auto kDeadline = std::chrono::seconds(20);  // only against hangs

json pod(const std::string& name, const std::string& rv, const std::string& cpu = "100m") {
  json p = test::MakePod().name(name).resourceVersion(rv).req({}).json();
  // Written as text: some tests need a quantity that does not parse.
  p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu;
  return p;
}

std::string eventLine(std::string_view type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump();
}
std::string bookmark(const std::string& rv) {
  return eventLine("BOOKMARK", {{"kind", "Pod"}, {"metadata", {{"resourceVersion", rv}}}});
}
std::string gone() {
  return eventLine("ERROR", {{"kind", "Status"},
                             {"apiVersion", "v1"},
                             {"status", "Failure"},
                             {"code", 410},
                             {"reason", "Expired"},
                             {"message", "too old resource version: 5 (20)"}});
}

ApiFailure statusFailure(int code, const std::string& reason) {
  return client::decodeFailure(
      code, "GET",
      json{{"kind", "Status"}, {"code", code}, {"reason", reason}, {"message", reason}}.dump());
}

ObjectList page(std::vector<json> items, std::string rv, std::string cont = {}) {
  return ObjectList{std::move(items), std::move(rv), std::move(cont)};
}

// One scripted watch: lines, then an end or a failure; blocks for more until the stop token.
class FakeFeed {
 public:
  void line(std::string text) { push(Item{std::move(text), false, std::nullopt, std::nullopt}); }
  void end() { push(Item{{}, true, std::nullopt, std::nullopt}); }
  void fail(ApiFailure f) { push(Item{{}, false, std::move(f), std::nullopt}); }
  // An event as a stream would hand it over, past any check the line decoder makes.
  void event(WatchEvent e) { push(Item{{}, false, std::nullopt, std::move(e)}); }

  ApiResult<std::optional<WatchEvent>> next(std::stop_token stop) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait(lock, stop, [this] { return !items_.empty(); })) {
      return client::cancelledFailure();
    }
    Item item = std::move(items_.front());
    items_.pop_front();
    if (item.failure) {
      return *item.failure;
    }
    if (item.end) {
      return std::optional<WatchEvent>();
    }
    if (item.event) {
      return std::optional<WatchEvent>(std::move(*item.event));
    }
    ApiResult<WatchEvent> e = client::decodeWatchEvent(item.text);
    if (!e.ok()) {
      return e.error();
    }
    return std::optional<WatchEvent>(*std::move(e));
  }

 private:
  struct Item {
    std::string text;
    bool end = false;
    std::optional<ApiFailure> failure;
    std::optional<WatchEvent> event;
  };
  void push(Item item) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      items_.push_back(std::move(item));
    }
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<Item> items_;
};

class FakeStream final : public client::WatchStream {
 public:
  FakeStream(std::shared_ptr<FakeFeed> feed, std::stop_token stop)
      : feed_(std::move(feed)), stop_(std::move(stop)) {}
  ApiResult<std::optional<WatchEvent>> next() override { return feed_->next(stop_); }

 private:
  std::shared_ptr<FakeFeed> feed_;
  std::stop_token stop_;
};

// Lists and watches answered from scripts; a call with nothing scripted waits for a script.
class FakeListerWatcher final : public ListerWatcher {
 public:
  struct State {
    std::mutex mu;
    std::condition_variable_any cv;
    std::deque<ApiResult<ObjectList>> lists;
    std::deque<ApiResult<std::shared_ptr<FakeFeed>>> watches;
    std::vector<client::ListOptions> listCalls;
    std::vector<client::WatchOptions> watchCalls;
  };

  explicit FakeListerWatcher(std::shared_ptr<State> state) : s_(std::move(state)) {}

  ApiResult<ObjectList> list(const client::ListOptions& options, std::stop_token stop) override {
    std::unique_lock<std::mutex> lock(s_->mu);
    s_->listCalls.push_back(options);
    if (!s_->cv.wait(lock, stop, [this] { return !s_->lists.empty(); })) {
      return client::cancelledFailure();
    }
    ApiResult<ObjectList> r = std::move(s_->lists.front());
    s_->lists.pop_front();
    return r;
  }

  ApiResult<client::WatchStreamPtr> watch(const client::WatchOptions& options,
                                          std::stop_token stop) override {
    std::unique_lock<std::mutex> lock(s_->mu);
    s_->watchCalls.push_back(options);
    if (!s_->cv.wait(lock, stop, [this] { return !s_->watches.empty(); })) {
      return client::cancelledFailure();
    }
    ApiResult<std::shared_ptr<FakeFeed>> feed = std::move(s_->watches.front());
    s_->watches.pop_front();
    if (!feed.ok()) {
      return feed.error();
    }
    return client::WatchStreamPtr(std::make_unique<FakeStream>(*feed, stop));
  }

 private:
  std::shared_ptr<State> s_;
};

// Runs an Informer<api::Pod> over the fake and records what its handlers saw.
class InformerTest : public ::testing::Test {
 protected:
  InformerTest() : state_(std::make_shared<FakeListerWatcher::State>()) {
    ReflectorOptions options;
    options.name = "pods";
    options.clock = &clock_;
    options.random = &random_;
    informer_ = std::make_unique<Informer<api::Pod>>(std::make_unique<FakeListerWatcher>(state_),
                                                     api::decodePod, std::move(options));
    auto rec = [this](std::string what) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        events_.push_back(std::move(what));
      }
      cv_.notify_all();
    };
    informer_->addEventHandlers(EventHandlers<api::Pod>{
        [rec](const auto& p) {
          rec("add " + p->metadata.name + " " + p->metadata.resourceVersion);
        },
        [rec](const auto& o, const auto& n) {
          rec("update " + n->metadata.name + " " + o->metadata.resourceVersion + "->" +
              n->metadata.resourceVersion);
        },
        [rec](const auto& p) {
          rec("delete " + p->metadata.name + " " + p->metadata.resourceVersion);
        }});
  }
  ~InformerTest() override { informer_->stop(); }

  void list(ApiResult<ObjectList> r) {
    script([&] { state_->lists.push_back(std::move(r)); });
  }
  std::shared_ptr<FakeFeed> watch() {
    auto feed = std::make_shared<FakeFeed>();
    script([&] { state_->watches.push_back(feed); });
    return feed;
  }
  void watchFails(ApiFailure f) {
    script([&] { state_->watches.push_back(std::move(f)); });
  }
  template <typename F>
  void script(F f) {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      f();
    }
    state_->cv.notify_all();
  }

  // Waits until the handlers saw `n` events in all, then returns them.
  std::vector<std::string> events(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, kDeadline, [&] { return events_.size() >= n; });
    return events_;
  }
  // Waits until `n` watches were requested, then returns their options.
  std::vector<client::WatchOptions> watchCalls(size_t n) {
    for (auto until = std::chrono::steady_clock::now() + kDeadline;
         std::chrono::steady_clock::now() < until;) {
      {
        std::lock_guard<std::mutex> lock(state_->mu);
        if (state_->watchCalls.size() >= n) {
          return state_->watchCalls;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->watchCalls;
  }
  void expectRelistReconciles();
  size_t listCalls() {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->listCalls.size();
  }
  // The reflector's backoff waits, slept on the fake clock.
  std::vector<std::chrono::milliseconds> sleeps() {
    std::vector<std::chrono::milliseconds> out;
    for (util::Duration d : clock_.sleeps()) {
      out.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(d));
    }
    return out;
  }

  util::FakeClock clock_;
  util::FakeRandom random_{0.0};
  std::shared_ptr<FakeListerWatcher::State> state_;
  std::unique_ptr<Informer<api::Pod>> informer_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
};

TEST_F(InformerTest, ListsByPagesThenWatchesFromTheListResourceVersion) {
  list(page({pod("a", "1")}, "10", "token-1"));
  list(page({pod("b", "2")}, "10"));
  auto feed = watch();
  informer_->start();
  ASSERT_TRUE(informer_->waitForSync(kDeadline));
  EXPECT_THAT(events(2), ElementsAre("add a 1", "add b 2"));

  feed->line(eventLine("ADDED", pod("c", "11")));
  feed->line(eventLine("MODIFIED", pod("a", "12")));
  feed->line(eventLine("DELETED", pod("b", "13")));
  EXPECT_THAT(events(5),
              ElementsAre("add a 1", "add b 2", "add c 11", "update a 1->12", "delete b 13"));
  EXPECT_EQ(informer_->store().size(), 2u);
  ASSERT_NE(informer_->store().get("default/a"), nullptr);
  EXPECT_EQ(informer_->store().get("default/a")->metadata.resourceVersion, "12");

  const auto calls = watchCalls(1);
  EXPECT_EQ(calls[0].resourceVersion, "10");
  EXPECT_TRUE(calls[0].allowWatchBookmarks);
  EXPECT_GE(calls[0].timeoutSeconds, 300);
  std::lock_guard<std::mutex> lock(state_->mu);
  ASSERT_EQ(state_->listCalls.size(), 2u);
  EXPECT_EQ(state_->listCalls[0].limit, 500);
  EXPECT_EQ(state_->listCalls[0].continueToken, "");
  EXPECT_EQ(state_->listCalls[1].continueToken, "token-1");
}

TEST_F(InformerTest, NotSyncedBeforeTheFirstList) {
  informer_->start();
  EXPECT_FALSE(informer_->waitForSync(std::chrono::milliseconds(20)));
  list(page({}, "3"));
  EXPECT_TRUE(informer_->waitForSync(kDeadline));
}

TEST_F(InformerTest, RewatchesFromTheLastBookmarkWhenAWatchEnds) {
  list(page({pod("a", "1")}, "10"));
  auto first = watch();
  auto second = watch();
  informer_->start();
  first->line(eventLine("ADDED", pod("c", "11")));
  first->line(bookmark("15"));
  first->end();
  second->line(eventLine("MODIFIED", pod("c", "16")));
  EXPECT_THAT(events(3), ElementsAre("add a 1", "add c 11", "update c 11->16"));
  const auto calls = watchCalls(2);
  EXPECT_EQ(calls[1].resourceVersion, "15");
  EXPECT_EQ(listCalls(), 1u);
  EXPECT_EQ(informer_->lastSyncResourceVersion(), "16");
}

TEST_F(InformerTest, DropsAWatchEventThatRepeatsTheStoredVersion) {
  list(page({pod("a", "1")}, "10"));
  auto feed = watch();
  informer_->start();
  feed->line(eventLine("ADDED", pod("a", "1")));
  feed->line(eventLine("MODIFIED", pod("a", "1")));
  feed->line(eventLine("DELETED", pod("zz", "11")));  // never seen
  feed->line(eventLine("MODIFIED", pod("a", "12")));
  EXPECT_THAT(events(2), ElementsAre("add a 1", "update a 1->12"));
}

// After 410 Gone, whichever way it arrives, the relist reconciles the store: b vanished, c changed,
// d is new, a is unchanged (no update for it), and nothing is delivered twice.
void InformerTest::expectRelistReconciles() {
  list(page({pod("a", "1"), pod("c", "30"), pod("d", "31")}, "40"));
  watch();
  informer_->start();
  EXPECT_THAT(events(6), ElementsAre("add a 1", "add b 2", "add c 3", "update c 3->30", "add d 31",
                                     "delete b 2"));
  EXPECT_EQ(listCalls(), 2u);
  EXPECT_EQ(watchCalls(2).back().resourceVersion, "40");
  EXPECT_EQ(informer_->store().keys(),
            (std::vector<std::string>{"default/a", "default/c", "default/d"}));
}

TEST_F(InformerTest, RelistsWhenTheWatchIsAnsweredGone) {
  list(page({pod("a", "1"), pod("b", "2"), pod("c", "3")}, "10"));
  watchFails(statusFailure(410, "Expired"));
  expectRelistReconciles();
  EXPECT_TRUE(sleeps().empty());
}

TEST_F(InformerTest, RelistsOnAGoneErrorEvent) {
  list(page({pod("a", "1"), pod("b", "2"), pod("c", "3")}, "10"));
  watch()->line(gone());
  expectRelistReconciles();
}

TEST_F(InformerTest, SkipsAnObjectThatDoesNotDecode) {
  list(page({pod("a", "1"), pod("bad", "2", "12x"), pod("c", "3")}, "10"));
  auto feed = watch();
  informer_->start();
  feed->line(eventLine("MODIFIED", pod("a", "11", "lots")));
  feed->line(eventLine("ADDED", pod("d", "12")));
  EXPECT_THAT(events(3), ElementsAre("add a 1", "add c 3", "add d 12"));
  EXPECT_EQ(informer_->store().get("default/a")->metadata.resourceVersion, "1");
  EXPECT_EQ(informer_->store().get("default/bad"), nullptr);
  EXPECT_EQ(informer_->lastSyncResourceVersion(), "12");
}

TEST_F(InformerTest, RelistsOnAMalformedWatchLine) {
  list(page({pod("a", "1")}, "10"));
  auto feed = watch();
  feed->line("{\"type\":\"ADDED\",\"object\":{\"metadata\":");  // cut off
  list(page({pod("a", "2")}, "20"));
  watch();
  informer_->start();
  EXPECT_THAT(events(2), ElementsAre("add a 1", "update a 1->2"));
  EXPECT_EQ(listCalls(), 2u);
  EXPECT_EQ(watchCalls(2).back().resourceVersion, "20");
  EXPECT_EQ(sleeps().size(), 1u);
}

// Log lines written while it lives, from any thread.
class CapturedLog {
 public:
  CapturedLog() {
    log::setSink([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~CapturedLog() { log::setSink({}); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  // The lines containing `text`.
  std::vector<std::string> matching(std::string_view text) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const std::string& line : lines_) {
      if (line.find(text) != std::string::npos) {
        out.push_back(line);
      }
    }
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST_F(InformerTest, SkipsUnknownEventTypesAndRelistsAfterBackoffOnMalformedLines) {
  CapturedLog captured;
  list(page({pod("a", "1")}, "10"));
  auto first = watch();
  for (int i = 0; i < 3; ++i) {
    first->line(eventLine("WEIRD", pod("a", "1")));
  }
  first->line(eventLine("ADDED", pod("b", "11")));  // the stream goes on after them
  first->line("not json");
  list(page({pod("a", "1"), pod("b", "11")}, "20"));
  watch()->line("{\"type\":\"ADDED\"}");  // not an event
  list(page({pod("a", "1"), pod("b", "11")}, "30"));
  auto third = watch();
  informer_->start();
  EXPECT_THAT(events(2), ElementsAre("add a 1", "add b 11"));
  ASSERT_EQ(watchCalls(3).size(), 3u);
  EXPECT_EQ(listCalls(), 3u);
  // Each relist after a malformed line waits, doubling from client-go's 800 ms.
  using std::chrono::milliseconds;
  EXPECT_THAT(sleeps(), ElementsAre(milliseconds(800), milliseconds(1600)));
  EXPECT_EQ(captured.matching("Skipping watch events of an unknown type").size(), 1u);
  // After a healthy period the backoff starts again from 800 ms.
  clock_.advance(std::chrono::minutes(3));
  third->line("[]");
  list(page({pod("a", "1"), pod("b", "11")}, "40"));
  watch();
  ASSERT_EQ(watchCalls(4).size(), 4u);
  EXPECT_EQ(sleeps().back(), milliseconds(800));
  informer_->stop();
}

TEST_F(InformerTest, AnErrorEventNestedFarBeyondGosLimitIsReportedWithoutRecursion) {
  // 100,000 levels: copying or dumping the Status recursively overflows the stack.
  constexpr size_t kDepth = 100000;
  const std::string deep = std::string(kDepth, '[') + std::string(kDepth, ']');
  const std::string status =
      R"({"kind":"Status","code":500,"reason":"InternalError","message":"boom","details":{"causes":[{"message":)" +
      deep + "}]}}";
  list(page({pod("a", "1")}, "10"));
  // As a line, the decoder refuses it (Go's max depth) and the reflector relists after backoff.
  watch()->line(R"({"type":"ERROR","object":)" + status + "}");
  list(page({pod("a", "1")}, "20"));
  // Already decoded (a stream without the depth check), the reflector reads only code, reason
  // and message.
  WatchEvent event;
  event.type = WatchEvent::Type::Error;
  event.object = json::parse(status);
  watch()->event(std::move(event));
  list(page({pod("a", "1")}, "30"));
  watch();
  CapturedLog captured;
  informer_->start();
  ASSERT_EQ(watchCalls(3).size(), 3u);
  EXPECT_EQ(listCalls(), 3u);
  EXPECT_EQ(sleeps().size(), 2u);
  const std::vector<std::string> errors = captured.matching("Watch error event");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], ::testing::HasSubstr("boom (500 InternalError)"));
  EXPECT_EQ(captured.matching("exceeded max depth of 10000").size(), 1u);
  informer_->stop();
}

TEST_F(InformerTest, ListedObjectsThatDoNotDecodeAreLoggedInOneLine) {
  std::vector<json> items;
  for (int i = 0; i < 50; ++i) {
    items.push_back(pod("bad" + std::to_string(i), "1", "12x"));
  }
  items.push_back(json{{"kind", "Banana"}});
  items.push_back(pod("good", "2"));
  list(page(std::move(items), "10"));
  auto feed = watch();
  CapturedLog captured;
  informer_->start();
  ASSERT_TRUE(informer_->waitForSync(kDeadline));
  feed->line(eventLine("MODIFIED", pod("bad3", "11", "12y")));
  feed->line(eventLine("ADDED", pod("d", "12")));
  EXPECT_THAT(events(2), ElementsAre("add good 2", "add d 12"));
  informer_->stop();
  const std::vector<std::string> lines = captured.matching("not decode");
  // One line for the list, naming how many and the first few; one for the watch event.
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], ::testing::HasSubstr("Skipping listed objects that do not decode"));
  EXPECT_THAT(lines[0], ::testing::HasSubstr("count=51"));
  EXPECT_THAT(lines[0],
              ::testing::HasSubstr(R"(first=["default/bad0","default/bad1","default/bad2"])"));
  EXPECT_THAT(lines[1], ::testing::HasSubstr("Skipping an object that does not decode"));
  EXPECT_THAT(lines[1], ::testing::HasSubstr("default/bad3"));
}

TEST_F(InformerTest, BacksOffWhileTheServerIsDownThenRecovers) {
  for (int i = 0; i < 3; ++i) {
    list(client::connectionFailure("Connection refused"));
  }
  list(page({pod("a", "1")}, "10"));
  watchFails(client::connectionFailure("Connection refused"));
  watchFails(statusFailure(503, "ServiceUnavailable"));
  auto feed = watch();
  informer_->start();
  ASSERT_TRUE(informer_->waitForSync(kDeadline));
  feed->line(eventLine("ADDED", pod("b", "11")));
  EXPECT_THAT(events(2), ElementsAre("add a 1", "add b 11"));
  // client-go's 800 ms doubling (no jitter drawn here); the watch is retried from the same
  // resourceVersion without a relist.
  using std::chrono::milliseconds;
  EXPECT_THAT(sleeps(), ElementsAre(milliseconds(800), milliseconds(1600), milliseconds(3200),
                                    milliseconds(6400), milliseconds(12800)));
  EXPECT_EQ(listCalls(), 4u);
  for (const auto& call : watchCalls(3)) {
    EXPECT_EQ(call.resourceVersion, "10");
  }
}

TEST_F(InformerTest, RelistsAfterBackoffOnAnotherWatchError) {
  list(page({pod("a", "1")}, "10"));
  auto feed = watch();
  feed->line(eventLine("ERROR", {{"kind", "Status"}, {"code", 500}, {"reason", "InternalError"}}));
  list(page({pod("a", "1")}, "10"));
  watch();
  informer_->start();
  EXPECT_THAT(events(1), ElementsAre("add a 1"));
  watchCalls(2);
  EXPECT_EQ(listCalls(), 2u);
  EXPECT_EQ(sleeps().size(), 1u);
}

TEST_F(InformerTest, StopEndsABlockedWatchPromptly) {
  list(page({}, "1"));
  watch();
  informer_->start();
  ASSERT_TRUE(informer_->waitForSync(kDeadline));
  ASSERT_EQ(watchCalls(1).size(), 1u);
  informer_->stop();  // would hang if the watch were not cancelled
  informer_->stop();
  EXPECT_FALSE(informer_->store().size());
}

TEST(ObjectKey, NamespacedAndClusterScoped) {
  EXPECT_EQ(objectKey(pod("a", "1")), "default/a");
  EXPECT_EQ(objectKey(json{{"metadata", {{"name", "n1"}}}}), "n1");
  EXPECT_EQ(objectKey(json{{"metadata", {{"namespace", "x"}}}}), "");
  EXPECT_EQ(objectKey(json::array()), "");
}

}  // namespace
}  // namespace berth::informer
