// Whole scheduling cycles through the real Scheduler, with in-memory feeds, an in-memory API and a
// FakeClock: no HTTP, no informer.

#include "pkg/scheduler/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "pkg/api/decode.h"
#include "pkg/framework/cluster_objects.h"
#include "pkg/plugins/registry.h"
#include "tests/support/berth_process.h"
#include "tests/support/builders.h"
#include "tests/support/eventually.h"

namespace berth::scheduler {
namespace {

using test::eventually;
using test::MakeNode;
using test::MakePod;

template <typename T>
class FakeFeed final : public Feed<T> {
 public:
  using Ptr = typename Feed<T>::Ptr;

  void add(Ptr object) {
    std::lock_guard lock(mu_);
    objects_[keyOf(*object)] = object;
    for (auto& h : handlers_) h.onAdd(object);
  }
  void update(Ptr object) {
    std::lock_guard lock(mu_);
    Ptr old = objects_[keyOf(*object)];
    objects_[keyOf(*object)] = object;
    for (auto& h : handlers_) h.onUpdate(old, object);
  }
  void remove(const std::string& key) {
    std::lock_guard lock(mu_);
    Ptr old = objects_[key];
    objects_.erase(key);
    for (auto& h : handlers_) h.onDelete(old);
  }

  // Feed
  void addEventHandlers(FeedHandlers<T> handlers) override {
    handlers_.push_back(std::move(handlers));
  }
  void start() override {}
  void stop() override {}
  bool hasSynced() const override { return true; }
  bool waitForSync(std::chrono::steady_clock::duration) const override { return true; }
  Ptr get(const std::string& key) const override {
    std::lock_guard lock(mu_);
    auto it = objects_.find(key);
    return it == objects_.end() ? nullptr : it->second;
  }

 private:
  static std::string keyOf(const T& object) {
    return object.metadata.namespace_.empty()
               ? object.metadata.name
               : object.metadata.namespace_ + "/" + object.metadata.name;
  }

  mutable std::mutex mu_;
  std::map<std::string, Ptr> objects_;
  std::vector<FeedHandlers<T>> handlers_;
};

// Records every write; bind answers with `onBind` (default: success), reads back with `onGet`.
class FakeClusterApi final : public ClusterApi {
 public:
  struct Event {
    std::string reason;
    std::string note;
  };

  std::function<framework::Status(const api::Pod&, const std::string&)> onBind;
  std::function<util::Result<std::optional<api::Pod>>(const std::string&)> onGet;

  framework::Status bind(const api::Pod& pod, const std::string& node) override {
    {
      std::lock_guard lock(mu_);
      binds_.emplace_back(api::podKey(pod), node);
    }
    return onBind ? onBind(pod, node) : framework::Status();
  }
  Outcome create(events::Api, const std::string&, const nlohmann::json& event) override {
    std::lock_guard lock(mu_);
    events_.push_back({event.value("reason", ""), event.value("note", "")});
    const nlohmann::json& regarding = event.value("regarding", nlohmann::json::object());
    writes_.push_back("event " + event.value("reason", "") + " " +
                      regarding.value("namespace", "") + "/" + regarding.value("name", ""));
    return Outcome::Ok;
  }
  Outcome patch(events::Api, const std::string&, const std::string&,
                const nlohmann::json&) override {
    return Outcome::Ok;
  }
  util::Result<std::optional<api::Pod>> getPod(const std::string& ns,
                                               const std::string& name) override {
    if (onGet) return onGet(ns + "/" + name);
    return util::Error{util::ErrorCode::Unavailable, "no answer"};
  }
  util::Result<void> patchPodStatus(const std::string& ns, const std::string& name,
                                    const nlohmann::json& patch) override {
    std::lock_guard lock(mu_);
    status_patches_.emplace_back(ns + "/" + name, patch);
    writes_.push_back("patch " + ns + "/" + name + " " + patch.dump());
    return {};
  }
  util::Result<void> deletePod(const std::string& ns, const std::string& name,
                               const std::string& uid) override {
    std::lock_guard lock(mu_);
    writes_.push_back("delete " + ns + "/" + name + " " + uid);
    return {};
  }
  // Every write, in order: "patch NS/NAME JSON", "delete NS/NAME UID", "event REASON NS/NAME".
  std::vector<std::string> writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }

  std::vector<std::pair<std::string, std::string>> binds() const {
    std::lock_guard lock(mu_);
    return binds_;
  }
  std::vector<Event> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::vector<std::pair<std::string, nlohmann::json>> statusPatches() const {
    std::lock_guard lock(mu_);
    return status_patches_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> binds_;
  std::vector<Event> events_;
  std::vector<std::pair<std::string, nlohmann::json>> status_patches_;
  std::vector<std::string> writes_;
};

class CountingObserver final : public Observer {
 public:
  void bound(const api::Pod& pod, const std::string& node, const queue::QueuedPod&) override {
    std::lock_guard lock(mu_);
    bound_[api::podKey(pod)].push_back(node);
  }
  std::map<std::string, std::vector<std::string>> bound() const {
    std::lock_guard lock(mu_);
    return bound_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::vector<std::string>> bound_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pods = std::make_unique<FakeFeed<api::Pod>>();
    auto nodes = std::make_unique<FakeFeed<api::Node>>();
    pods_ = pods.get();
    nodes_ = nodes.get();
    SchedulerOptions options;
    options.config = config::defaultConfiguration();
    options.clock = &clock_;
    options.observer = &observer_;
    options.bindConcurrency = 4;
    options.seed = 1;
    configure(options);
    Feeds feeds{std::move(pods), std::move(nodes)};
    feeds.objects = objectsFeed();
    auto made = Scheduler::create(api_, std::move(feeds), options);
    ASSERT_TRUE(made.ok()) << made.error().message;
    scheduler_ = std::move(*made);
  }

  void TearDown() override { stop(); }
  virtual void configure(SchedulerOptions& /*options*/) {}
  virtual std::unique_ptr<ObjectsFeed> objectsFeed() { return nullptr; }

  void start() {
    runner_ = std::jthread([this](std::stop_token stop) { scheduler_->run(stop); });
  }
  void stop() {
    if (runner_.joinable()) {
      runner_.request_stop();
      runner_.join();
    }
  }

  static api::PodPtr pendingPod(const std::string& name, const std::string& cpu = "1") {
    return MakePod()
        .name(name)
        .ns("default")
        .uid("uid-" + name)
        .schedulerName(std::string(config::kDefaultSchedulerName))
        .req({{"cpu", cpu}})
        .obj();
  }

  bool hasEvent(const std::string& reason) const {
    for (const auto& e : api_.events()) {
      if (e.reason == reason) return true;
    }
    return false;
  }

  util::FakeClock clock_;
  FakeClusterApi api_;
  CountingObserver observer_;
  FakeFeed<api::Pod>* pods_ = nullptr;
  FakeFeed<api::Node>* nodes_ = nullptr;
  std::unique_ptr<Scheduler> scheduler_;
  std::jthread runner_;
};

TEST_F(SchedulerTest, BindsAPodThatFitsAndRecordsScheduled) {
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
  pods_->add(pendingPod("web"));
  start();
  ASSERT_TRUE(eventually([&] { return hasEvent("Scheduled"); }));
  const auto binds = api_.binds();
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(binds[0], std::make_pair(std::string("default/web"), std::string("n1")));
  for (const auto& e : api_.events()) {
    if (e.reason == "Scheduled") {
      EXPECT_EQ(e.note, "Successfully assigned default/web to n1");
    }
  }
  EXPECT_EQ(scheduler_->cacheSize().assumedPods, 1u);  // until the feed shows it bound
  EXPECT_TRUE(api_.statusPatches().empty());
}

TEST_F(SchedulerTest, UnschedulablePodGetsFailedSchedulingAndPodScheduledFalse) {
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "1"}, {"pods", "10"}}).obj());
  pods_->add(pendingPod("big", "2"));
  start();
  ASSERT_TRUE(eventually([&] { return !api_.statusPatches().empty(); }));
  ASSERT_TRUE(eventually([&] { return hasEvent("FailedScheduling"); }));
  const std::string message =
      "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No "
      "preemption victims found for incoming pod.";
  for (const auto& e : api_.events()) {
    if (e.reason == "FailedScheduling") {
      EXPECT_EQ(e.note, message);
    }
  }
  const auto patches = api_.statusPatches();
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].first, "default/big");
  const nlohmann::json& condition = patches[0].second["status"]["conditions"][0];
  EXPECT_EQ(condition["type"], "PodScheduled");
  EXPECT_EQ(condition["status"], "False");
  EXPECT_EQ(condition["reason"], "Unschedulable");
  EXPECT_EQ(condition["message"], message);
  EXPECT_TRUE(api_.binds().empty());
  EXPECT_EQ(scheduler_->pendingPods().unschedulable, 1u);
}

// berth_unsupported_pods counts a refused pod while it waits, and stops the moment the pod is
// deleted or updated to drop the field.
TEST_F(SchedulerTest, RefusedPodIsCountedUntilDeletedOrUpdatedToDropTheField) {
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
  auto withClaim = [](const std::string& name) {
    auto pod = std::make_shared<api::Pod>(*pendingPod(name, "100m"));
    pod->spec.resourceClaims = {api::PodResourceClaim{"gpu"}};
    return api::PodPtr(pod);
  };
  pods_->add(withClaim("a"));
  pods_->add(withClaim("b"));
  start();
  auto refused = [&] { return scheduler_->state().unsupportedPods["spec.resourceClaims"]; };
  ASSERT_TRUE(eventually([&] { return refused() == 2; }));
  ASSERT_TRUE(eventually([&] { return hasEvent("FailedScheduling"); }));
  for (const auto& e : api_.events()) {
    if (e.reason == "FailedScheduling") {
      EXPECT_EQ(e.note,
                "0/1 nodes are available: berth does not implement spec.resourceClaims "
                "(DynamicResources). preemption: 0/1 nodes are available: 1 Preemption is not "
                "helpful for scheduling.");
    }
  }
  EXPECT_TRUE(api_.binds().empty());

  pods_->remove("default/a");
  EXPECT_EQ(refused(), 1);
  auto dropped = std::make_shared<api::Pod>(*pods_->get("default/b"));
  dropped->spec.resourceClaims.clear();
  dropped->metadata.resourceVersion = "2";
  pods_->update(dropped);
  EXPECT_EQ(refused(), 0);
}

// A pod larger than kube-apiserver can store is kept as a skeleton and refused with an event that
// names the field, never dropped silently.
TEST_F(SchedulerTest, APodTooLargeToHaveBeenStoredGetsFailedSchedulingNamingTheField) {
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
  nlohmann::json j = {{"metadata", {{"name", "huge"}, {"namespace", "default"}, {"uid", "u1"}}},
                      {"spec",
                       {{"schedulerName", std::string(config::kDefaultSchedulerName)},
                        {"containers", nlohmann::json::array()}}}};
  for (int i = 0; i < 70000; ++i) j["spec"]["containers"].push_back(nlohmann::json::object());
  auto decoded = api::decodePod(j);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_TRUE(decoded->spec.containers.empty());
  pods_->add(std::make_shared<const api::Pod>(std::move(*decoded)));
  start();
  ASSERT_TRUE(eventually([&] { return hasEvent("FailedScheduling"); }));
  for (const auto& e : api_.events()) {
    if (e.reason == "FailedScheduling") {
      EXPECT_EQ(e.note,
                "0/1 nodes are available: pod default/huge: spec.containers: 70000 containers, "
                "more than the 65536 an object within etcd's 1.5 MiB limit can hold. preemption: "
                "0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
    }
  }
  EXPECT_TRUE(api_.binds().empty());
}

TEST_F(SchedulerTest, BindFailureForgetsThePodAndRequeuesItWithBackoff) {
  api_.onBind = [](const api::Pod&, const std::string&) {
    return framework::Status::error("Internal error occurred: etcd timeout (500)");
  };
  api_.onGet = [&](const std::string& key) -> util::Result<std::optional<api::Pod>> {
    return std::optional<api::Pod>(*pods_->get(key));  // still pending
  };
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
  pods_->add(pendingPod("web"));
  start();
  ASSERT_TRUE(eventually([&] { return scheduler_->pendingPods().backoff == 1; }));
  EXPECT_EQ(api_.binds().size(), 1u);  // one Binding per decision
  EXPECT_EQ(scheduler_->cacheSize().assumedPods, 0u);
  EXPECT_EQ(scheduler_->cacheSize().pods, 0u);
  ASSERT_TRUE(eventually([&] { return !api_.statusPatches().empty(); }));
  const auto patches = api_.statusPatches();
  const nlohmann::json& condition = patches[0].second["status"]["conditions"][0];
  EXPECT_EQ(condition["reason"], "SchedulerError");
  EXPECT_EQ(condition["message"],
            "binding rejected: running Bind plugin \"DefaultBinder\": Internal error occurred: "
            "etcd timeout (500)");
  EXPECT_TRUE(observer_.bound().empty());
}

TEST_F(SchedulerTest, BindConflictWithAnotherBindingDropsThePod) {
  api_.onBind = [](const api::Pod&, const std::string&) {
    return framework::Status::error("Operation cannot be fulfilled: pod is already assigned (409)");
  };
  api_.onGet = [&](const std::string& key) -> util::Result<std::optional<api::Pod>> {
    api::Pod pod = *pods_->get(key);
    pod.spec.nodeName = "elsewhere";
    return std::optional<api::Pod>(pod);
  };
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
  pods_->add(pendingPod("web"));
  start();
  ASSERT_TRUE(eventually([&] { return !api_.binds().empty(); }));
  stop();  // drains the binding cycle
  EXPECT_EQ(api_.binds().size(), 1u);
  const queue::PendingPods pending = scheduler_->pendingPods();
  EXPECT_EQ(pending.active + pending.backoff + pending.unschedulable, 0u);
  EXPECT_EQ(scheduler_->cacheSize().assumedPods, 0u);
  EXPECT_TRUE(api_.statusPatches().empty());
  EXPECT_FALSE(hasEvent("FailedScheduling"));
  EXPECT_TRUE(observer_.bound().empty());
}

TEST_F(SchedulerTest, StopFinishesBindingsInFlightAndBindsNothingTwice) {
  std::mutex mu;
  std::condition_variable cv;
  int waiting = 0;
  bool release = false;
  api_.onBind = [&](const api::Pod&, const std::string&) {
    std::unique_lock lock(mu);
    ++waiting;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    return framework::Status();
  };
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "100"}, {"pods", "100"}}).obj());
  const int kPods = 10;
  for (int i = 0; i < kPods; ++i) pods_->add(pendingPod("p" + std::to_string(i)));
  start();
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return waiting == 4; });  // every binder holds a Binding on the wire
  }
  runner_.request_stop();  // SIGTERM
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  runner_.join();

  EXPECT_EQ(scheduler_->state().bindingsInFlight, 0);
  std::map<std::string, int> bindsPerPod;
  for (const auto& [pod, node] : api_.binds()) ++bindsPerPod[pod];
  for (const auto& [pod, n] : bindsPerPod) EXPECT_EQ(n, 1) << pod;
  const auto bound = observer_.bound();
  // Every Binding sent was confirmed before run() returned; the rest still wait in the queue.
  EXPECT_EQ(bound.size(), bindsPerPod.size());
  const queue::PendingPods pending = scheduler_->pendingPods();
  EXPECT_EQ(bound.size() + pending.active + pending.backoff + pending.unschedulable,
            static_cast<size_t>(kPods));
}

// A PostFilter plugin standing in for DefaultPreemption: for pod "high", the first time, it
// nominates node n1 and evicts the pods `victims` names; every other call finds nothing (as
// DefaultPreemption does while the victims terminate).
class FakePreemption final : public framework::PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "FakePreemption";
  // Preempts for "high" on its first `times` attempts.
  FakePreemption(std::function<std::vector<framework::PodInfoPtr>()> victims, int times)
      : victims_(std::move(victims)), times_(times) {}
  std::string_view name() const override { return kName; }
  framework::Status postFilter(framework::CycleState&, const framework::PodInfo& pod,
                               const framework::Diagnosis&,
                               framework::PostFilterResult& result) const override {
    if (pod->metadata.name != "high" || calls_++ >= times_) {
      return framework::Status(framework::Code::Unschedulable,
                               std::string_view("preemption: nothing to do"));
    }
    result.nominatedNode = "n1";
    result.victims = victims_();
    return framework::Status();
  }

 private:
  std::function<std::vector<framework::PodInfoPtr>()> victims_;
  const int times_;
  mutable std::atomic<int> calls_{0};
};

class PreemptionTest : public SchedulerTest {
 protected:
  void configure(SchedulerOptions& options) override {
    registry_ = plugins::makeInTreeRegistry();
    auto added = registry_.add(std::string(FakePreemption::kName), [this](
                                                                       const framework::Handle&) {
      return util::Result<framework::PluginPtr>(std::make_unique<FakePreemption>(
          [this] { return std::vector<framework::PodInfoPtr>{framework::makePodInfo(victim_)}; },
          preemptions_));
    });
    ASSERT_TRUE(added.ok());
    options.registry = &registry_;
    options.config.profiles[0].plugins.postFilter.enabled.push_back(
        config::PluginRef{std::string(FakePreemption::kName), 0, ""});
  }
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(SchedulerTest::SetUp());
    nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
    victim_ = MakePod()
                  .name("low")
                  .ns("default")
                  .uid("uid-low")
                  .schedulerName(std::string(config::kDefaultSchedulerName))
                  .req({{"cpu", "2"}})
                  .node("n1")
                  .obj();
    pods_->add(victim_);
  }

  static api::PodPtr withPriority(const api::PodPtr& pod, int32_t priority,
                                  const std::string& nominated = "") {
    auto p = std::make_shared<api::Pod>(*pod);
    p->spec.priority = priority;
    p->status.nominatedNodeName = nominated;
    return p;
  }

  // The writes about these pods, in order, each shortened to what the test compares.
  std::vector<std::string> writesAbout(const std::set<std::string>& pods) const {
    std::vector<std::string> out;
    for (const std::string& w : api_.writes()) {
      const size_t at = w.find(' ');
      const std::string verb = w.substr(0, at);
      std::string rest = w.substr(at + 1);
      if (verb == "event") {
        const size_t sp = rest.find(' ');
        if (pods.contains(rest.substr(sp + 1))) out.push_back(w);
        continue;
      }
      const size_t sp = rest.find(' ');
      const std::string pod = rest.substr(0, sp);
      if (!pods.contains(pod)) continue;
      if (verb == "delete") {
        out.push_back(w);
        continue;
      }
      const nlohmann::json patch = nlohmann::json::parse(rest.substr(sp + 1));
      const nlohmann::json& status = patch["status"];
      std::string what = "patch " + pod;
      for (const auto& c : status.value("conditions", nlohmann::json::array())) {
        what += " " + c["type"].get<std::string>() + "=" + c["status"].get<std::string>();
      }
      if (status.contains("nominatedNodeName")) {
        what += " nominatedNodeName=" + (status["nominatedNodeName"].is_null()
                                             ? std::string("null")
                                             : status["nominatedNodeName"].get<std::string>());
      }
      out.push_back(what);
    }
    return out;
  }

  framework::runtime::Registry registry_;
  api::PodPtr victim_;
  int preemptions_ = 1;  // set before start()
};

TEST_F(PreemptionTest, WritesInUpstreamOrderThenBindsThePreemptorOnceItsVictimIsGone) {
  // A lower-priority pod nominated to n1 loses its nomination to the preemptor. (It may not
  // preempt itself, so that its own failures keep the nomination.)
  auto nominee = std::make_shared<api::Pod>(*withPriority(pendingPod("nominee", "1"), 1, "n1"));
  nominee->spec.preemptionPolicy = "Never";
  pods_->add(nominee);
  pods_->add(withPriority(pendingPod("high", "4"), 100));
  start();
  const std::vector<std::string> want = {
      "patch default/low DisruptionTarget=True",
      "delete default/low uid-low",
      "event Preempted default/low",
      "patch default/nominee nominatedNodeName=null",
      "event FailedScheduling default/high",
      "patch default/high PodScheduled=False nominatedNodeName=n1",
  };
  const std::set<std::string> pods = {"default/low", "default/high"};
  ASSERT_TRUE(eventually([&] { return writesAbout(pods).size() >= 6; }))
      << ::testing::PrintToString(api_.writes());
  std::vector<std::string> got = writesAbout({"default/low", "default/high", "default/nominee"});
  // The nominee's own failures are its business; only its nomination's end is in the sequence.
  std::erase_if(got, [](const std::string& w) {
    return w.find("default/nominee") != std::string::npos &&
           w.find("nominatedNodeName=null") == std::string::npos;
  });
  // Then the preemptor's retry, which the fake answers with nothing to do, writes its own failure.
  ASSERT_GE(got.size(), want.size());
  got.resize(want.size());
  EXPECT_EQ(got, want);
  for (const auto& e : api_.events()) {
    if (e.reason == "Preempted") {
      EXPECT_EQ(e.note, "Preempted by pod uid-high on node n1");
    }
  }
  EXPECT_TRUE(api_.binds().empty());  // the victim still holds the room

  // The victim's deletion arrives: the preemptor is retried and bound to n1, once.
  pods_->remove("default/low");
  ASSERT_TRUE(eventually([&] {
    clock_.advance(std::chrono::seconds(20));  // past any backoff
    return !observer_.bound().empty();
  }));
  stop();
  const auto bound = observer_.bound();
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound.at("default/high"), std::vector<std::string>{"n1"});
  EXPECT_EQ(api_.binds().size(), 1u);
}

TEST_F(PreemptionTest, VictimChosenAgainBeforeItsDeletionIsSeenIsNotEvictedTwice) {
  // The preemptor is retried before the informer shows the victim's deletion, and preemption
  // picks the same victim again: its writes are not repeated.
  preemptions_ = 2;
  pods_->add(withPriority(pendingPod("high", "4"), 100));
  start();
  // Each attempt ends in one status patch of the preemptor: two preemptions, then the fake's
  // "nothing to do".
  ASSERT_TRUE(eventually([&] {
    clock_.advance(std::chrono::seconds(20));  // past any backoff
    return std::ranges::count_if(writesAbout({"default/high"}),
                                 [](const std::string& w) { return w.starts_with("patch"); }) >= 3;
  })) << ::testing::PrintToString(api_.writes());
  stop();
  const std::vector<std::string> want = {"patch default/low DisruptionTarget=True",
                                         "delete default/low uid-low",
                                         "event Preempted default/low"};
  EXPECT_EQ(writesAbout({"default/low"}), want);
}

TEST_F(PreemptionTest, NoCandidateClearsTheNominationInTheOneStatusPatch) {
  // Neither fits n1, and the victim's priority is theirs: DefaultPreemption finds no candidate for
  // "stale", whose nomination from an earlier attempt goes; "waiting" may not preempt (not
  // eligible) and keeps its nomination.
  pods_->add(withPriority(pendingPod("stale", "4"), 0, "n1"));
  auto waiting = std::make_shared<api::Pod>(*withPriority(pendingPod("waiting", "4"), 0, "n1"));
  waiting->spec.preemptionPolicy = "Never";
  pods_->add(waiting);
  start();
  auto patchesAbout = [&](const std::string& pod) {
    std::vector<std::string> out = writesAbout({pod});
    std::erase_if(out, [](const std::string& w) { return !w.starts_with("patch "); });
    return out;
  };
  ASSERT_TRUE(eventually([&] {
    return !patchesAbout("default/stale").empty() && !patchesAbout("default/waiting").empty();
  }));
  stop();
  // The fake API leaves the informer's copy as it was: a retry would write the same patch again.
  EXPECT_THAT(patchesAbout("default/stale"),
              ::testing::Each(std::string("patch default/stale PodScheduled=False "
                                          "nominatedNodeName=null")));
  EXPECT_THAT(patchesAbout("default/waiting"),
              ::testing::Each(std::string("patch default/waiting PodScheduled=False")));
  EXPECT_TRUE(api_.binds().empty());
}

TEST_F(PreemptionTest, LowerPriorityPodDoesNotTakeTheRoomWhileTheVictimTerminates) {
  pods_->add(withPriority(pendingPod("high", "4"), 100));
  start();
  ASSERT_TRUE(eventually([&] {
    for (const auto& w : writesAbout({"default/high"})) {
      if (w.find("nominatedNodeName=n1") != std::string::npos) return true;
    }
    return false;
  }));
  // 2 of n1's 4 CPUs are free, but they and the victim's 2 are the preemptor's.
  pods_->add(withPriority(pendingPod("sneaky", "2"), 0));
  ASSERT_TRUE(eventually([&] {
    for (const auto& w : writesAbout({"default/sneaky"})) {
      if (w.find("PodScheduled=False") != std::string::npos) return true;
    }
    return false;
  }));
  EXPECT_TRUE(api_.binds().empty());

  pods_->remove("default/low");
  ASSERT_TRUE(eventually([&] {
    clock_.advance(std::chrono::seconds(20));
    return !observer_.bound().empty();
  }));
  stop();
  const auto bound = observer_.bound();
  EXPECT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound.at("default/high"), std::vector<std::string>{"n1"});
  for (const auto& b : api_.binds()) EXPECT_NE(b.first, "default/sneaky");
}

// The storage objects VolumeBinding reads, and its writes: each UPDATE lands in the store with a
// newer resourceVersion, and with `provision` the PV controller binds a claim as soon as its
// selected-node annotation lands.
class FakeObjectsFeed final : public ObjectsFeed {
 public:
  explicit FakeObjectsFeed(framework::ClusterObjectStore& store) : store_(store) {}
  const framework::ClusterObjects& objects() const override { return store_; }
  void onNamespaceUpdate(NamespaceUpdate) override {}
  void onStorageEvent(StorageEvent) override {}
  void start() override {}
  void stop() override {}
  bool hasSynced() const override { return true; }
  bool waitForSync(std::chrono::steady_clock::duration) const override { return true; }

 private:
  framework::ClusterObjectStore& store_;
};

class FakeVolumeApi final : public framework::VolumeWriter {
 public:
  explicit FakeVolumeApi(framework::ClusterObjectStore& store) : store_(store) {}
  framework::Status updatePersistentVolume(const api::PersistentVolume& pv) override {
    record("pv/" + pv.metadata.name);
    auto landed = std::make_shared<api::PersistentVolume>(pv);
    landed->metadata.resourceVersion = std::to_string(std::stoll(pv.metadata.resourceVersion) + 1);
    store_.upsert(api::PersistentVolumePtr(landed));
    return framework::Status::success();
  }
  framework::Status updatePersistentVolumeClaim(const api::PersistentVolumeClaim& pvc) override {
    record("pvc/" + pvc.metadata.namespace_ + "/" + pvc.metadata.name);
    auto landed = std::make_shared<api::PersistentVolumeClaim>(pvc);
    landed->metadata.resourceVersion = std::to_string(std::stoll(pvc.metadata.resourceVersion) + 1);
    if (provision) {
      auto pv = std::make_shared<api::PersistentVolume>();
      pv->metadata.name = "pv-" + pvc.metadata.name;
      pv->metadata.resourceVersion = "1";
      pv->spec.claimRef = api::ObjectReference{.kind = "PersistentVolumeClaim",
                                               .namespace_ = pvc.metadata.namespace_,
                                               .name = pvc.metadata.name,
                                               .uid = pvc.metadata.uid};
      store_.upsert(api::PersistentVolumePtr(pv));
      landed->spec.volumeName = pv->metadata.name;
      landed->metadata.annotations["pv.kubernetes.io/bind-completed"] = "yes";
    }
    store_.upsert(api::PersistentVolumeClaimPtr(landed));
    return framework::Status::success();
  }
  std::vector<std::string> writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }
  std::atomic<bool> provision{false};

 private:
  void record(std::string write) {
    std::lock_guard lock(mu_);
    writes_.push_back(std::move(write));
  }
  framework::ClusterObjectStore& store_;
  mutable std::mutex mu_;
  std::vector<std::string> writes_;
};

// A clock whose sleeps last until they are stopped: a PreBind wait blocks until it is cancelled.
class StoppedOnlyClock final : public util::Clock {
 public:
  util::MonotonicTime monotonicNow() const override { return inner_.monotonicNow(); }
  util::SystemTime systemNow() const override { return inner_.systemNow(); }
  bool sleepFor(util::Duration, std::stop_token stop) override {
    util::waitForStop(std::move(stop));
    return false;
  }

 private:
  util::FakeClock inner_;
};

class VolumeBindingSchedulerTest : public SchedulerTest {
 protected:
  void configure(SchedulerOptions& options) override {
    options.volumes = &volumes_;
    if (blockingWaits()) options.clock = &blocking_clock_;
    auto wait = std::make_shared<api::StorageClass>();
    wait->metadata.name = "wait";
    wait->provisioner = "csi.example.com";
    wait->volumeBindingMode = "WaitForFirstConsumer";
    store_.upsert(api::StorageClassPtr(wait));
  }
  virtual bool blockingWaits() const { return false; }
  std::unique_ptr<ObjectsFeed> objectsFeed() override {
    return std::make_unique<FakeObjectsFeed>(store_);
  }

  void addClaim(const std::string& name) {
    auto pvc = std::make_shared<api::PersistentVolumeClaim>();
    pvc->metadata.name = name;
    pvc->metadata.namespace_ = "default";
    pvc->metadata.uid = "uid-" + name;
    pvc->metadata.resourceVersion = "5";
    pvc->spec.storageClassName = "wait";
    pvc->spec.accessModes = {"ReadWriteOnce"};
    store_.upsert(api::PersistentVolumeClaimPtr(pvc));
  }

  static api::PodPtr podWithClaim(const std::string& name, const std::string& claim) {
    auto pod = std::make_shared<api::Pod>(*pendingPod(name, "100m"));
    pod->spec.volumes.push_back({.name = "data",
                                 .source = "persistentVolumeClaim",
                                 .claimName = claim,
                                 .readOnly = false,
                                 .disk = "",
                                 .rbdPool = "",
                                 .rbdMonitors = {},
                                 .csiDriver = ""});
    return pod;
  }

  bool claimBound(const std::string& name) const {
    auto pvc = store_.getPersistentVolumeClaim("default", name);
    return pvc && !pvc->spec.volumeName.empty() &&
           pvc->metadata.annotations.contains("pv.kubernetes.io/bind-completed");
  }

  framework::ClusterObjectStore store_;
  FakeVolumeApi volumes_{store_};
  StoppedOnlyClock blocking_clock_;
};

TEST_F(VolumeBindingSchedulerTest, BindsThePodOnlyAfterItsClaimIsBound) {
  volumes_.provision = true;
  std::atomic<bool> boundFirst{false};
  api_.onBind = [&](const api::Pod&, const std::string&) {
    boundFirst = claimBound("data-web");
    return framework::Status();
  };
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
  addClaim("data-web");
  pods_->add(podWithClaim("web", "data-web"));
  start();
  ASSERT_TRUE(eventually([&] { return hasEvent("Scheduled"); }));
  EXPECT_EQ(volumes_.writes(), std::vector<std::string>{"pvc/default/data-web"});
  EXPECT_EQ(api_.binds().size(), 1u);
  EXPECT_TRUE(boundFirst);
  auto pvc = store_.getPersistentVolumeClaim("default", "data-web");
  EXPECT_EQ(pvc->metadata.annotations.at("volume.kubernetes.io/selected-node"), "n1");
}

TEST_F(VolumeBindingSchedulerTest, PreBindTimeoutUnreservesAndRequeuesWithBackoff) {
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
  addClaim("data-web");
  pods_->add(podWithClaim("web", "data-web"));
  start();
  ASSERT_TRUE(eventually([&] { return scheduler_->pendingPods().backoff == 1; }));
  ASSERT_TRUE(eventually([&] { return hasEvent("FailedScheduling"); }));
  const std::string message =
      "running PreBind plugin \"VolumeBinding\": binding volumes: context deadline exceeded";
  for (const auto& e : api_.events()) {
    if (e.reason == "FailedScheduling") {
      EXPECT_EQ(e.note, message);
    }
  }
  ASSERT_TRUE(eventually([&] { return !api_.statusPatches().empty(); }));
  const auto patches = api_.statusPatches();
  const nlohmann::json& condition = patches[0].second["status"]["conditions"][0];
  EXPECT_EQ(condition["reason"], "SchedulerError");
  EXPECT_EQ(condition["message"], message);
  EXPECT_TRUE(api_.binds().empty());
  EXPECT_EQ(scheduler_->cacheSize().assumedPods, 0u);
  EXPECT_EQ(volumes_.writes(), std::vector<std::string>{"pvc/default/data-web"});
}

class BlockingVolumeBindingSchedulerTest : public VolumeBindingSchedulerTest {
 protected:
  bool blockingWaits() const override { return true; }
};

TEST_F(BlockingVolumeBindingSchedulerTest, AWaitingPodHoldsUpNoOtherBindingAndEndsWhenDeleted) {
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
  addClaim("data-web");
  pods_->add(podWithClaim("web", "data-web"));
  start();
  ASSERT_TRUE(eventually([&] { return !volumes_.writes().empty(); }));
  // More pods without volumes than the binder pool has threads bind while "web" waits.
  for (int i = 0; i < 6; ++i) pods_->add(pendingPod("plain-" + std::to_string(i), "100m"));
  ASSERT_TRUE(eventually([&] { return observer_.bound().size() == 6; }));
  EXPECT_FALSE(observer_.bound().contains("default/web"));
  // Deleting the pod ends its wait: unreserved, forgotten, not requeued, never bound.
  pods_->remove("default/web");
  ASSERT_TRUE(eventually([&] { return scheduler_->cacheSize().assumedPods == 6; }));
  const queue::PendingPods pending = scheduler_->pendingPods();
  EXPECT_EQ(pending.active + pending.backoff + pending.unschedulable, 0u);
  for (const auto& [pod, node] : api_.binds()) {
    EXPECT_NE(pod, "default/web");
  }
}

TEST_F(BlockingVolumeBindingSchedulerTest, StopEndsAWaitPromptly) {
  nodes_->add(MakeNode().name("n1").allocatable({{"cpu", "4"}, {"pods", "10"}}).obj());
  addClaim("data-web");
  pods_->add(podWithClaim("web", "data-web"));
  start();
  ASSERT_TRUE(eventually([&] { return !volumes_.writes().empty(); }));
  stop();  // returns only once the waiting binding cycle ended
  EXPECT_TRUE(api_.binds().empty());
  EXPECT_EQ(scheduler_->cacheSize().assumedPods, 0u);
}

}  // namespace
}  // namespace berth::scheduler
