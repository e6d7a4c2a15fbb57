// Preemption in the daemon, in process: the real Scheduler over the REST adapters and informers
// (cmd/berth/rest_adapters.h) against the embedded API server, whose kubelet stand-in finalizes a
// running victim's graceful deletion. A PostFilter plugin standing in for DefaultPreemption picks
// the victims; everything else (the nominator, the writes in upstream's order, the preemptor's
// retry on its victims' delete events, the binding) is berth's own.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cmd/berth/rest_adapters.h"
#include "pkg/apiserver/kubelet_stand_in.h"
#include "pkg/config/config.h"
#include "pkg/plugins/registry.h"
#include "pkg/scheduler/scheduler.h"
#include "tests/support/api_server_fixture.h"
#include "tests/support/eventually.h"
#include "tests/support/objects.h"

namespace berth {
namespace {

using apiserver::Resource;
using json = nlohmann::json;
using test::eventually;
using namespace std::chrono_literals;

constexpr std::string_view kPreemptorName = "high";

// For pod "high": evicts every lower-priority pod on n1, unless one is already terminating there
// (DefaultPreemption's eligibility rule), in which case it waits.
class FakePreemption final : public framework::PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "FakePreemption";
  std::string_view name() const override { return kName; }
  framework::Status postFilter(framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::Diagnosis&,
                               framework::PostFilterResult& result) const override {
    const framework::NodeInfo* node = state.snapshot() ? state.snapshot()->get("n1") : nullptr;
    if (pod->metadata.name != kPreemptorName || node == nullptr) {
      return framework::Status(framework::Code::Unschedulable,
                               std::string_view("No preemption victims found for incoming pod"));
    }
    std::vector<framework::PodInfoPtr> victims;
    for (const auto& p : node->pods()) {
      if (p->pod->metadata.deletionTimestamp) {
        return framework::Status(
            framework::Code::Unschedulable,
            std::string_view("not eligible due to a terminating pod on the nominated node."));
      }
      if (p->pod->spec.priority.value_or(0) < pod->spec.priority.value_or(0)) victims.push_back(p);
    }
    result.nominatedNode = "n1";
    result.victims = std::move(victims);
    return framework::Status();
  }
};

class PreemptionDaemonTest : public test::ApiServerTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(startServer());
    kubelets_ = std::make_unique<apiserver::KubeletStandIn>(store_, 500ms, 20ms);
    client::RestConfig config;
    config.server = server_->url();
    config.qps = -1;
    auto rest = client::RestClient::create(config, {});
    ASSERT_TRUE(rest.ok()) << rest.error().message;
    rest_ = *std::move(rest);
    api_ = std::make_unique<cmd::RestClusterApi>(*rest_);

    registry_ = plugins::makeInTreeRegistry();
    ASSERT_TRUE(registry_
                    .add(std::string(FakePreemption::kName),
                         [](const framework::Handle&) {
                           return util::Result<framework::PluginPtr>(
                               std::make_unique<FakePreemption>());
                         })
                    .ok());
    scheduler::SchedulerOptions options;
    options.config = config::defaultConfiguration();
    options.config.profiles[0].plugins.postFilter.enabled.push_back(
        config::PluginRef{std::string(FakePreemption::kName), 0, ""});
    options.registry = &registry_;
    options.eventsApi = cmd::discoverEventsApi(*rest_);
    auto made = scheduler::Scheduler::create(*api_, cmd::informerFeeds(*rest_), options);
    ASSERT_TRUE(made.ok()) << made.error().message;
    scheduler_ = std::move(*made);
  }

  void TearDown() override {
    if (runner_.joinable()) {
      runner_.request_stop();
      runner_.join();
    }
    if (scheduler_) scheduler_->stopInformers();
    scheduler_.reset();
    kubelets_.reset();
    ApiServerTest::TearDown();
  }

  void start() {
    scheduler_->startInformers();
    runner_ = std::jthread([this](std::stop_token stop) { scheduler_->run(stop); });
  }

  json pod(const std::string& name, const std::string& cpu, int32_t priority,
           const std::string& node = "", const std::string& nominated = "") {
    json p = test::podJson(name, cpu, std::string(config::kDefaultSchedulerName));
    p["spec"]["priority"] = priority;
    if (!node.empty()) p["spec"]["nodeName"] = node;
    if (!nominated.empty()) p["status"] = {{"nominatedNodeName", nominated}};
    return p;
  }
  void createPod(const json& p) {
    auto r = store_.create(Resource::Pods, "default", p);
    ASSERT_TRUE(r.ok()) << r.error().status.message;
    if (p.contains("status")) {
      json withStatus = *r;
      withStatus["status"].update(p["status"]);
      ASSERT_TRUE(store_
                      .updateStatus(Resource::Pods, "default",
                                    p["metadata"]["name"].get<std::string>(), withStatus)
                      .ok());
    }
  }

  // The writes berth made, in order: "VERB resource[/subresource] name" for pods, and
  // "create events REASON REGARDING" for events.
  std::vector<std::string> writes() {
    std::vector<std::string> out;
    for (const apiserver::RequestRecord& r : server_->requestLog()) {
      if (r.verb != "create" && r.verb != "patch" && r.verb != "delete") continue;
      if (r.resource == "pods" && r.subresource != "binding") {
        out.push_back(r.verb + " " + r.resource +
                      (r.subresource.empty() ? "" : "/" + r.subresource) + " " + r.name);
      }
    }
    return out;
  }

  // (reason, regarding) of every event, in creation order.
  std::vector<std::pair<std::string, std::string>> events() {
    std::vector<std::pair<std::string, std::string>> out;
    for (Resource resource : {Resource::EventsV1, Resource::Events}) {
      auto listed = store_.list(resource, "default");
      if (!listed.ok()) continue;
      std::vector<std::pair<int64_t, std::pair<std::string, std::string>>> byVersion;
      for (const json& e : listed->items) {
        const json& regarding = e.contains("regarding") ? e["regarding"] : e["involvedObject"];
        byVersion.push_back({std::stoll(e["metadata"]["resourceVersion"].get<std::string>()),
                             {e.value("reason", ""), regarding.value("name", "")}});
      }
      std::sort(byVersion.begin(), byVersion.end());
      for (auto& [rv, ev] : byVersion) out.push_back(ev);
    }
    return out;
  }

  std::unique_ptr<apiserver::KubeletStandIn> kubelets_;
  client::RestClientPtr rest_;
  std::unique_ptr<cmd::RestClusterApi> api_;
  framework::runtime::Registry registry_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::jthread runner_;
};

TEST_F(PreemptionDaemonTest, EvictsTheVictimInOrderAndBindsThePreemptorOnceItIsGone) {
  create(Resource::Nodes, test::nodeJson("n1", "4"));
  createPod(pod("low", "3", 0, "n1"));
  // Never preempting itself, the nominee keeps its nomination until the preemptor's takes it away
  // (a nominee that may preempt loses it as soon as it finds no candidate, as upstream).
  json nominee = pod("nominee", "1", 1, "", "n1");
  nominee["spec"]["preemptionPolicy"] = "Never";
  createPod(nominee);
  createPod(pod("high", "4", 100));
  start();

  ASSERT_TRUE(eventually([&] { return nodeOf("high") == "n1"; }, 60s))
      << ::testing::PrintToString(writes());
  // The victim went through its graceful deletion: the kubelet stand-in finalized it.
  EXPECT_FALSE(store_.get(Resource::Pods, "default", "low").ok());

  std::vector<std::string> got;
  for (const std::string& w : writes()) {
    if (w.ends_with(" low") || w.ends_with(" high") || w == "patch pods/status nominee") {
      got.push_back(w);
    }
  }
  // The preemption's writes in upstream's order: the victim's condition, its DELETE, the end of
  // the nominee's nomination, then the preemptor's patch. The nominee's own failures may patch it
  // at any time (its cycles run while the writes are in flight), so only the order of the steps is
  // checked: each is the first of its kind after the one before.
  auto after = [&](size_t from, const std::string& w) {
    return static_cast<size_t>(
        std::find(got.begin() + static_cast<std::ptrdiff_t>(from), got.end(), w) - got.begin());
  };
  const size_t condition = after(0, "patch pods/status low");
  const size_t deleted = after(condition, "delete pods low");
  const size_t nominationEnd = after(deleted, "patch pods/status nominee");
  const size_t preemptor = after(nominationEnd, "patch pods/status high");
  EXPECT_LT(preemptor, got.size()) << ::testing::PrintToString(got);
  EXPECT_EQ(after(0, "patch pods/status high"), preemptor) << ::testing::PrintToString(got);

  auto pending = store_.get(Resource::Pods, "default", "nominee");
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ((*pending)["status"].value("nominatedNodeName", ""), "");

  // Preempted, with the preemptor as related object, before the preemptor's FailedScheduling.
  auto all = events();
  auto preempted = std::find(all.begin(), all.end(),
                             std::make_pair(std::string("Preempted"), std::string("low")));
  auto failed = std::find(all.begin(), all.end(),
                          std::make_pair(std::string("FailedScheduling"), std::string("high")));
  ASSERT_NE(preempted, all.end());
  ASSERT_NE(failed, all.end());
  EXPECT_LT(preempted, failed);

  // Bound once: one Binding was posted for it.
  int bindings = 0;
  for (const auto& r : server_->requestLog()) {
    if (r.subresource == "binding" && r.name == "high") ++bindings;
  }
  EXPECT_EQ(bindings, 1);
}

TEST_F(PreemptionDaemonTest, ANominatedPodsRoomIsKeptFromALowerPriorityPod) {
  create(Resource::Nodes, test::nodeJson("n1", "4"));
  createPod(pod("low", "2", 0, "n1"));
  createPod(pod("high", "4", 100));
  start();
  ASSERT_TRUE(eventually([&] {
    auto p = store_.get(Resource::Pods, "default", "high");
    return p.ok() && (*p)["status"].value("nominatedNodeName", "") == "n1";
  })) << ::testing::PrintToString(writes());
  // Two CPUs are free while the victim terminates, but they are the preemptor's.
  createPod(pod("sneaky", "2", 0));
  ASSERT_TRUE(eventually([&] { return nodeOf("high") == "n1"; }, 60s));
  EXPECT_EQ(nodeOf("sneaky"), "");
  for (const auto& r : server_->requestLog()) {
    if (r.subresource == "binding") {
      EXPECT_EQ(r.name, "high");
    }
  }
}

}  // namespace
}  // namespace berth
