#include "pkg/events/recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace berth::events {
namespace {

using json = nlohmann::json;

// Records every write; answers with scripted outcomes (Ok once the script runs out).
class FakeSink : public Sink {
 public:
  struct Call {
    std::string verb;  // "create" or "patch"
    Api api;
    std::string ns;
    std::string name;
    json body;
  };

  Outcome create(Api api, const std::string& ns, const json& event) override {
    return take({"create", api, ns, event["metadata"]["name"], event});
  }
  Outcome patch(Api api, const std::string& ns, const std::string& name,
                const json& patch) override {
    return take({"patch", api, ns, name, patch});
  }

  std::vector<Call> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  void script(std::vector<Outcome> outcomes) {
    std::lock_guard lock(mu_);
    script_ = std::move(outcomes);
  }
  // The next call blocks until release().
  void hold() { held_ = true; }
  void release() {
    std::lock_guard lock(mu_);
    held_ = false;
    cv_.notify_all();
  }
  void waitEntered() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return entered_ > 0; });
  }

 private:
  Outcome take(Call call) {
    std::unique_lock lock(mu_);
    ++entered_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !held_; });
    calls_.push_back(std::move(call));
    if (script_.empty()) return Outcome::Ok;
    Outcome next = script_.front();
    script_.erase(script_.begin());
    return next;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Call> calls_;
  std::vector<Outcome> script_;
  std::atomic<bool> held_{false};
  int entered_ = 0;
};

// A util::FakeClock at 2025-11-30T08:00:00Z, the time the expectations below are written in.
struct FakeClock {
  void advanceMinutes(int64_t minutes) { fake.advance(std::chrono::minutes(minutes)); }
  util::FakeClock fake{util::SystemTime(std::chrono::seconds(1'764'489'600))};
};

ObjectReference pod(const std::string& name) {
  return ObjectReference{"Pod", "v1", "default", name, "uid-" + name, "7"};
}

RecorderOptions options(FakeClock& clock, Api api = Api::EventsV1) {
  RecorderOptions o;
  o.api = api;
  o.reportingController = "berth";
  o.reportingInstance = "berth-host1";
  o.retryInterval = std::chrono::milliseconds(1);
  o.clock = &clock.fake;
  return o;
}

TEST(Recorder, CreatesAnEventsV1EventForTheFirstOccurrence) {
  FakeSink sink;
  FakeClock clock;
  Recorder recorder(sink, options(clock));
  recorder.record(pod("web-1"), "Normal", "Scheduled", "Binding",
                  "Successfully assigned default/web-1 to node-a");
  recorder.waitIdle();
  auto calls = sink.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].verb, "create");
  EXPECT_EQ(calls[0].ns, "default");
  const json& e = calls[0].body;
  EXPECT_EQ(e["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(e["kind"], "Event");
  EXPECT_EQ(e["metadata"]["name"].get<std::string>().rfind("web-1.", 0), 0u);
  EXPECT_EQ(e["eventTime"], "2025-11-30T08:00:00.000000Z");
  EXPECT_EQ(e["reportingController"], "berth");
  EXPECT_EQ(e["reportingInstance"], "berth-host1");
  EXPECT_EQ(e["action"], "Binding");
  EXPECT_EQ(e["reason"], "Scheduled");
  EXPECT_EQ(e["type"], "Normal");
  EXPECT_EQ(e["note"], "Successfully assigned default/web-1 to node-a");
  EXPECT_EQ(e["regarding"], json({{"kind", "Pod"},
                                  {"namespace", "default"},
                                  {"name", "web-1"},
                                  {"uid", "uid-web-1"},
                                  {"apiVersion", "v1"},
                                  {"resourceVersion", "7"}}));
  EXPECT_FALSE(e.contains("series"));
}

TEST(Recorder, AggregatesRepeatsIntoASeriesWithoutFlooding) {
  FakeSink sink;
  FakeClock clock;
  Recorder recorder(sink, options(clock));
  for (int i = 0; i < 50; ++i) {
    // The note is not part of the series key, as upstream: changing reasons join one series.
    recorder.record(pod("big"), "Warning", "FailedScheduling", "Scheduling",
                    "0/" + std::to_string(i) + " nodes are available");
  }
  recorder.waitIdle();
  auto calls = sink.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].verb, "create");
  EXPECT_EQ(calls[1].verb, "patch");
  EXPECT_EQ(calls[1].name, calls[0].name);
  EXPECT_EQ(calls[1].body["series"]["count"], 2);
  EXPECT_EQ(calls[1].body["series"]["lastObservedTime"], "2025-11-30T08:00:00.000000Z");
}

TEST(Recorder, FinishingASeriesWritesTheFinalCountOnce) {
  FakeSink sink;
  FakeClock clock;
  Recorder recorder(sink, options(clock));
  for (int i = 0; i < 5; ++i)
    recorder.record(pod("big"), "Warning", "FailedScheduling", "Scheduling", "x");
  recorder.waitIdle();
  clock.advanceMinutes(5);
  recorder.finishSeries();  // the last occurrence is only 5 minutes old: still open
  EXPECT_EQ(sink.calls().size(), 2u);
  clock.advanceMinutes(2);
  recorder.finishSeries();
  auto calls = sink.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2].verb, "patch");
  EXPECT_EQ(calls[2].body["series"]["count"], 5);
  recorder.finishSeries();  // forgotten: nothing more
  EXPECT_EQ(sink.calls().size(), 3u);
  // After the series ended, the same event starts afresh.
  recorder.record(pod("big"), "Warning", "FailedScheduling", "Scheduling", "x");
  recorder.waitIdle();
  EXPECT_EQ(sink.calls().back().verb, "create");
}

TEST(Recorder, RefreshRewritesOpenSeriesOnly) {
  FakeSink sink;
  FakeClock clock;
  Recorder recorder(sink, options(clock));
  recorder.record(pod("a"), "Normal", "Scheduled", "Binding", "once");
  for (int i = 0; i < 3; ++i)
    recorder.record(pod("b"), "Warning", "FailedScheduling", "Scheduling", "x");
  recorder.waitIdle();
  ASSERT_EQ(sink.calls().size(), 3u);
  recorder.refreshSeries();
  auto calls = sink.calls();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[3].verb, "patch");
  EXPECT_EQ(calls[3].body["series"]["count"], 3);
}

TEST(Recorder, RecreatesASeriesWhoseEventExpired) {
  FakeSink sink;
  FakeClock clock;
  Recorder recorder(sink, options(clock));
  sink.script({Sink::Outcome::Ok, Sink::Outcome::NotFound});
  recorder.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "x");
  recorder.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "x");
  recorder.waitIdle();
  auto calls = sink.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2].verb, "create");
  EXPECT_EQ(calls[2].body["series"]["count"], 2);
  EXPECT_EQ(calls[2].body["note"], "x");
}

TEST(Recorder, RetriesUnavailableWritesThenGivesUp) {
  FakeSink sink;
  FakeClock clock;
  RecorderOptions o = options(clock);
  o.maxTries = 3;
  Recorder recorder(sink, o);
  sink.script({Sink::Outcome::Unavailable, Sink::Outcome::Unavailable, Sink::Outcome::Unavailable,
               Sink::Outcome::Unavailable});
  recorder.record(pod("p"), "Normal", "Scheduled", "Binding", "x");
  recorder.waitIdle();
  EXPECT_EQ(sink.calls().size(), 3u);
}

TEST(Recorder, RetriesWaitOnTheInjectedClockWithJitter) {
  FakeSink sink;
  FakeClock clock;
  util::FakeRandom random({0.0, 1.0});
  RecorderOptions o = options(clock);
  o.retryInterval = std::chrono::seconds(10);
  o.random = &random;
  o.maxTries = 3;
  Recorder recorder(sink, o);
  sink.script({Sink::Outcome::Unavailable, Sink::Outcome::Unavailable, Sink::Outcome::Ok});
  recorder.record(pod("p"), "Normal", "Scheduled", "Binding", "x");
  recorder.waitIdle();
  EXPECT_EQ(sink.calls().size(), 3u);
  // 10 s jittered by up to 25%, slept on the fake clock: the test does not wait for them.
  EXPECT_EQ(clock.fake.sleeps(), (std::vector<util::Duration>{std::chrono::seconds(10),
                                                              std::chrono::milliseconds(12500)}));
}

TEST(Recorder, StampsEventsAndFinishesSeriesOnTheInjectedClock) {
  FakeSink sink;
  FakeClock clock;
  Recorder recorder(sink, options(clock, Api::CoreV1));
  recorder.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "x");
  clock.advanceMinutes(1);
  recorder.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "x");
  recorder.waitIdle();
  EXPECT_EQ(sink.calls().at(1).body["lastTimestamp"], "2025-11-30T08:01:00Z");
  clock.advanceMinutes(7);  // the last occurrence is now over finishAfter (6 min) old
  recorder.finishSeries();
  ASSERT_EQ(sink.calls().size(), 3u);
  EXPECT_EQ(sink.calls()[2].body["count"], 2);
}

TEST(Recorder, DoesNotRetryRejectedWrites) {
  FakeSink sink;
  FakeClock clock;
  Recorder recorder(sink, options(clock));
  sink.script({Sink::Outcome::Rejected});
  recorder.record(pod("p"), "Normal", "Scheduled", "Binding", "x");
  recorder.waitIdle();
  EXPECT_EQ(sink.calls().size(), 1u);
}

TEST(Recorder, DropsEventsWhenTheQueueIsFull) {
  FakeSink sink;
  FakeClock clock;
  RecorderOptions o = options(clock);
  o.queueLimit = 2;
  Recorder recorder(sink, o);
  sink.hold();
  recorder.record(pod("p0"), "Normal", "Scheduled", "Binding", "x");
  sink.waitEntered();  // the writer holds p0; the queue is empty again
  for (int i = 1; i <= 4; ++i) {
    recorder.record(pod("p" + std::to_string(i)), "Normal", "Scheduled", "Binding", "x");
  }
  EXPECT_EQ(recorder.dropped(), 2u);
  sink.release();
  recorder.waitIdle();
  EXPECT_EQ(sink.calls().size(), 3u);
}

TEST(Recorder, WritesCoreV1EventsWhenEventsV1IsUnavailable) {
  FakeSink sink;
  FakeClock clock;
  Recorder recorder(sink, options(clock, Api::CoreV1));
  recorder.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "0/3 nodes are available");
  recorder.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", "0/3 nodes are available");
  recorder.waitIdle();
  auto calls = sink.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].api, Api::CoreV1);
  const json& e = calls[0].body;
  EXPECT_EQ(e["apiVersion"], "v1");
  EXPECT_EQ(e["involvedObject"]["name"], "p");
  EXPECT_EQ(e["message"], "0/3 nodes are available");
  EXPECT_EQ(e["source"]["component"], "berth");
  EXPECT_EQ(e["firstTimestamp"], "2025-11-30T08:00:00Z");
  EXPECT_EQ(e["count"], 1);
  EXPECT_EQ(calls[1].body, json({{"count", 2}, {"lastTimestamp", "2025-11-30T08:00:00Z"}}));
}

TEST(Recorder, TruncatesNotesToTheEventsApiLimit) {
  FakeSink sink;
  FakeClock clock;
  Recorder recorder(sink, options(clock));
  recorder.record(pod("p"), "Warning", "FailedScheduling", "Scheduling", std::string(3000, 'x'));
  recorder.waitIdle();
  std::string note = sink.calls().at(0).body["note"];
  EXPECT_EQ(note.size(), 1024u);
  EXPECT_EQ(note.substr(1020), " ...");
}

}  // namespace
}  // namespace berth::events
