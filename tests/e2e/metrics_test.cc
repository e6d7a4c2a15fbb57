// End-to-end test of the operations endpoints: the real `berth run` against the embedded API
// server, its /metrics checked by Prometheus's own linter (promtool) and its values followed as
// pods are scheduled, fail and become schedulable.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "tests/support/api_server_fixture.h"
#include "tests/support/berth_process.h"
#include "tests/support/eventually.h"
#include "tests/support/objects.h"

namespace berth {
namespace {

using json = nlohmann::json;
using apiserver::Resource;
using test::nodeJson;
using test::podJson;
using namespace std::chrono_literals;

// The value of the sample `series` (name{labels} exactly as exposed), or -1 when absent.
double sample(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return -1;
}

// The sum of the samples of `name` whose labels contain `label` (e.g. `event="NodeAdd"`).
double sumWhere(const std::string& text, const std::string& name, const std::string& label) {
  double sum = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(name + "{") && line.find(label) != std::string::npos) {
      sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return sum;
}

// promtool's verdict on an exposition: its output, empty when it found nothing to report.
std::string promtoolCheck(const std::string& exposition) {
  const std::string path = testing::TempDir() + "berth-metrics-" + std::to_string(getpid());
  std::ofstream(path) << exposition;
  FILE* out = popen(("promtool check metrics < " + path + " 2>&1; echo \"rc=$?\"").c_str(), "r");
  std::string text;
  char buf[4096];
  while (out != nullptr && fgets(buf, sizeof buf, out) != nullptr) text += buf;
  if (out != nullptr) pclose(out);
  std::remove(path.c_str());
  return text == "rc=0\n" ? "" : text;
}

class Operations : public test::ApiServerTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(startServer());
    kubeconfig_ = testing::TempDir() + "berth-metrics-kubeconfig-" + std::to_string(getpid());
    ASSERT_TRUE(test::writeKubeconfig(kubeconfig_, server_->url()).ok());
    // The port is read from the log, and spawn appends: no line of an earlier test may be there.
    log_ = testing::TempDir() + "berth-metrics-" + std::to_string(getpid()) + ".log";
    std::remove(log_.c_str());
  }

  void startBerth() {
    auto spawned = test::BerthProcess::spawn(
        BERTH_BINARY,
        {"run", "--kubeconfig", kubeconfig_, "--port", "0", "--bind-address", "127.0.0.1",
         "--leader-elect-resource-namespace", "default", "--v", "2"},
        log_);
    ASSERT_TRUE(spawned.ok()) << spawned.error().message;
    berth_ = std::move(*spawned);
    auto line = berth_->waitForLogLine({"Serving securely"}, 10s);
    ASSERT_TRUE(line) << berth_->logTail();
    const std::string address = test::logField(*line, "address").value_or("");
    port_ = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  }

  std::string scrape(const std::string& path = "/metrics") {
    auto reply = test::httpsGet(port_, path, test::kScraperAuthorization);
    if (!reply.ok()) {
      ADD_FAILURE() << reply.error().message;
      return "";
    }
    EXPECT_EQ(reply->code, 200) << path << ": " << reply->body;
    return reply->body;
  }

  std::string kubeconfig_;
  std::string log_;
  test::BerthProcessPtr berth_;
  uint16_t port_ = 0;
};

TEST_F(Operations, MetricsPassPromtoolAndFollowSchedulingOutcomes) {
  create(Resource::Nodes, nodeJson("small", "2"));
  create(Resource::Pods, podJson("a", "1"));
  create(Resource::Pods, podJson("b", "500m"));
  create(Resource::Pods, podJson("huge", "8"));
  // Bound by hand to a node that does not exist: stuck forever, which berth reports.
  json typo = podJson("typo", "100m", "default-scheduler");
  typo["spec"]["nodeName"] = "smal";
  create(Resource::Pods, typo);
  startBerth();
  ASSERT_TRUE(test::eventually([&] { return !nodeOf("a").empty() && !nodeOf("b").empty(); }));

  // A binding lands in the store before berth has read its answer and counted it: wait for the
  // last figure berth records per bound pod (the SLI histogram) as well.
  std::string text;
  ASSERT_TRUE(test::eventually(
      [&] {
        text = scrape();
        return sample(text, R"(scheduler_pending_pods{queue="unschedulable"})") == 1 &&
               sumWhere(text, "scheduler_pod_scheduling_sli_duration_seconds_count", "attempts=") ==
                   2;
      },
      10s))
      << text;
  EXPECT_EQ(promtoolCheck(text), "");
  EXPECT_EQ(
      sample(text, R"(scheduler_schedule_attempts_total{profile="berth",result="scheduled"})"), 2);
  EXPECT_GE(
      sample(text, R"(scheduler_schedule_attempts_total{profile="berth",result="unschedulable"})"),
      1);
  EXPECT_EQ(
      sample(text, R"(scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="berth"})"),
      1);
  EXPECT_EQ(sample(text, R"(scheduler_pod_scheduling_attempts_count)"), 2);
  EXPECT_EQ(sample(text, R"(scheduler_cache_size{type="nodes"})"), 1);
  EXPECT_EQ(sample(text, "berth_pods_on_unknown_nodes"), 1);
  EXPECT_EQ(sample(text, R"(leader_election_master_status{name="berth"})"), 1);
  const std::string host = server_->url().substr(server_->url().find("://") + 3);
  EXPECT_GE(sample(text, R"(rest_client_requests_total{code="201",host=")" + host +
                             R"(",method="POST"})"),
            2);
  EXPECT_GE(sample(text, R"(scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"})"),
            3);

  // A node where the huge pod fits: the NodeAdd event moves it, and it is bound.
  create(Resource::Nodes, nodeJson("large", "16"));
  ASSERT_TRUE(test::eventually([&] { return nodeOf("huge") == "large"; }));
  ASSERT_TRUE(test::eventually(
      [&] {
        text = scrape();
        return sumWhere(text, "scheduler_pod_scheduling_sli_duration_seconds_count", "attempts=") ==
               3;
      },
      10s))
      << text;
  EXPECT_EQ(
      sample(text, R"(scheduler_schedule_attempts_total{profile="berth",result="scheduled"})"), 3);
  EXPECT_EQ(sample(text, R"(scheduler_pending_pods{queue="unschedulable"})"), 0);
  EXPECT_EQ(
      sample(text, R"(scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="berth"})"),
      -1);
  EXPECT_GE(sumWhere(text, "scheduler_queue_incoming_pods_total", R"(event="NodeAdd")"), 1);
  // Two pods bound at their first attempt, the huge one after more.
  EXPECT_EQ(sumWhere(text, "scheduler_pod_scheduling_sli_duration_seconds_count", "attempts="), 3);
  EXPECT_EQ(sample(text, R"(scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"})"),
            2);
  EXPECT_EQ(promtoolCheck(text), "");
  EXPECT_EQ(berth_->terminate(), 0);
}

// A pod that uses a field berth does not implement is never placed as if the field were absent:
// FailedScheduling names the field, and berth_unsupported_pods counts the pod until it is deleted.
TEST_F(Operations, RefusesAPodWithAFieldBerthDoesNotImplementAndCountsIt) {
  for (const char* n : {"n1", "n2", "n3", "n4", "n5"}) create(Resource::Nodes, nodeJson(n, "4"));
  json claim = podJson("claim", "100m");
  claim["spec"]["resourceClaims"] = json::array({{{"name", "gpu"}, {"resourceClaimName", "gpu"}}});
  create(Resource::Pods, claim);
  create(Resource::Pods, podJson("plain", "100m"));
  startBerth();
  ASSERT_TRUE(test::eventually([&] { return !nodeOf("plain").empty(); }));

  const std::string expected =
      "0/5 nodes are available: berth does not implement spec.resourceClaims (DynamicResources). "
      "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.";
  auto failedScheduling = [&] {
    auto events = store_.list(Resource::EventsV1, "default");
    if (!events.ok()) return false;
    for (const json& e : events->items) {
      if (e["reason"] == "FailedScheduling" && e["regarding"]["name"] == "claim" &&
          e["note"] == expected) {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(test::eventually(failedScheduling, 10s));
  const std::string series = R"(berth_unsupported_pods{field="spec.resourceClaims"})";
  std::string text;
  ASSERT_TRUE(test::eventually(
      [&] {
        text = scrape();
        return sample(text, series) == 1;
      },
      10s))
      << text;
  EXPECT_EQ(promtoolCheck(text), "");
  EXPECT_EQ(nodeOf("claim"), "");

  ASSERT_TRUE(store_.remove(Resource::Pods, "default", "claim").ok());
  ASSERT_TRUE(test::eventually(
      [&] {
        text = scrape();
        return sample(text, series) == 0;
      },
      10s))
      << text;
  EXPECT_EQ(berth_->terminate(), 0);
}

TEST_F(Operations, HealthEndpointsAnswerAsKubeScheduler) {
  create(Resource::Nodes, nodeJson("n", "2"));
  startBerth();
  ASSERT_TRUE(test::eventually(
      [&] {
        auto r = test::httpsGet(port_, "/readyz");
        return r.ok() && r->code == 200;
      },
      10s));
  EXPECT_EQ(scrape("/healthz"), "ok");
  EXPECT_EQ(scrape("/livez"), "ok");
  EXPECT_EQ(scrape("/readyz?verbose"),
            "[+]ping ok\n[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync ok\n"
            "readyz check passed\n");
  EXPECT_EQ(scrape("/readyz/sched-handler-sync"), "ok");
  auto missing = test::httpsGet(port_, "/nope", test::kScraperAuthorization);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->code, 404);
  EXPECT_EQ(berth_->terminate(), 0);
}

}  // namespace
}  // namespace berth
