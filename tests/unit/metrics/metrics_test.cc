#include "pkg/metrics/metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>

namespace berth::metrics {
namespace {

using std::chrono::milliseconds;

// The value of the sample line that starts with `series` (name and labels), or -1.
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

TEST(ExponentialBuckets, MatchesPrometheusExponentialBuckets) {
  const std::vector<double> buckets = exponentialBuckets(0.001, 2, 15);
  ASSERT_EQ(buckets.size(), 15u);
  EXPECT_DOUBLE_EQ(buckets.front(), 0.001);
  EXPECT_DOUBLE_EQ(buckets[1], 0.002);
  EXPECT_DOUBLE_EQ(buckets.back(), 16.384);
}

TEST(Metrics, ScheduleAttemptsUseKubeSchedulerNamesLabelsAndBuckets) {
  Metrics m;
  m.scheduleAttempt("berth", "scheduled", milliseconds(3));
  m.scheduleAttempt("berth", "scheduled", milliseconds(3));
  m.scheduleAttempt("berth", "unschedulable", milliseconds(1));
  const std::string text = m.expose();
  EXPECT_NE(text.find("# TYPE scheduler_schedule_attempts_total counter"), std::string::npos);
  EXPECT_EQ(
      sample(text, R"(scheduler_schedule_attempts_total{profile="berth",result="scheduled"})"), 2);
  EXPECT_EQ(
      sample(text, R"(scheduler_schedule_attempts_total{profile="berth",result="unschedulable"})"),
      1);
  EXPECT_NE(text.find("# TYPE scheduler_scheduling_attempt_duration_seconds histogram"),
            std::string::npos);
  // Exp(0.001, 2, 15): 3 ms falls in le=0.004, not in le=0.002.
  const std::string bucket =
      R"(scheduler_scheduling_attempt_duration_seconds_bucket{profile="berth",result="scheduled",le=")";
  EXPECT_EQ(sample(text, bucket + R"(0.002"})"), 0);
  EXPECT_EQ(sample(text, bucket + R"(0.004"})"), 2);
  EXPECT_EQ(sample(text, bucket + R"(16.384"})"), 2);
  EXPECT_EQ(sample(text, bucket + R"(+Inf"})"), 2);
}

TEST(Metrics, SliAttemptsLabelIsCappedAtFifteen) {
  Metrics m;
  m.podScheduled(1, milliseconds(20));
  m.podScheduled(40, std::chrono::seconds(3));
  const std::string text = m.expose();
  EXPECT_EQ(sample(text, R"(scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"})"),
            1);
  EXPECT_EQ(sample(text, R"(scheduler_pod_scheduling_sli_duration_seconds_count{attempts="15+"})"),
            1);
  // Exp(1, 2, 5) for the attempts histogram: 40 is beyond its last bucket (16).
  EXPECT_EQ(sample(text, R"(scheduler_pod_scheduling_attempts_bucket{le="16"})"), 1);
  EXPECT_EQ(sample(text, R"(scheduler_pod_scheduling_attempts_bucket{le="+Inf"})"), 2);
}

TEST(Metrics, QueueIncomingAndExtensionPointsAreCountedByLabel) {
  Metrics m;
  m.queueIncoming("active", "PodAdd");
  m.queueIncoming("active", "PodAdd");
  m.queueIncoming("backoff", "ScheduleAttemptFailure");
  m.extensionPoint("PreFilter", "Success", "berth", std::chrono::microseconds(50));
  const std::string text = m.expose();
  EXPECT_EQ(sample(text, R"(scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"})"),
            2);
  EXPECT_EQ(
      sample(
          text,
          R"(scheduler_queue_incoming_pods_total{event="ScheduleAttemptFailure",queue="backoff"})"),
      1);
  EXPECT_EQ(
      sample(
          text,
          R"(scheduler_framework_extension_point_duration_seconds_count{extension_point="PreFilter",profile="berth",status="Success"})"),
      1);
}

TEST(Metrics, RestClientRequestsCarryCodeMethodAndHost) {
  Metrics m;
  m.restRequest("POST", "10.96.0.1:443", "201", milliseconds(4));
  m.restRequest("GET", "10.96.0.1:443", "<error>", milliseconds(30));
  const std::string text = m.expose();
  EXPECT_EQ(
      sample(text, R"(rest_client_requests_total{code="201",host="10.96.0.1:443",method="POST"})"),
      1);
  EXPECT_EQ(
      sample(text,
             R"(rest_client_requests_total{code="<error>",host="10.96.0.1:443",method="GET"})"),
      1);
  EXPECT_EQ(
      sample(
          text,
          R"(rest_client_request_duration_seconds_bucket{host="10.96.0.1:443",verb="POST",le="0.005"})"),
      1);
}

TEST(Metrics, StateIsReadFromItsSourceAtScrapeTime) {
  Metrics m;
  SchedulerState state;
  state.active = 3;
  state.unschedulable = 2;
  state.cacheNodes = 5;
  state.unschedulableByPlugin[{"NodeResourcesFit", "berth"}] = 2;
  state.kubeletRejections["OutOfcpu"] = 1;
  state.podsOnUnknownNodes = 4;
  state.unsupportedPods["spec.resourceClaims"] = 2;
  state.unsupportedPods["spec.resources"] = 0;
  m.setSchedulerState([&state] { return state; });
  std::string text = m.expose();
  EXPECT_EQ(sample(text, R"(scheduler_pending_pods{queue="active"})"), 3);
  EXPECT_EQ(sample(text, R"(scheduler_pending_pods{queue="unschedulable"})"), 2);
  EXPECT_EQ(sample(text, R"(scheduler_cache_size{type="nodes"})"), 5);
  EXPECT_EQ(
      sample(text, R"(scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="berth"})"),
      2);
  EXPECT_EQ(sample(text, R"(berth_kubelet_admission_rejections_total{reason="OutOfcpu"})"), 1);
  EXPECT_EQ(sample(text, "berth_pods_on_unknown_nodes"), 4);
  EXPECT_EQ(sample(text, R"(berth_unsupported_pods{field="spec.resourceClaims"})"), 2);
  EXPECT_EQ(sample(text, R"(berth_unsupported_pods{field="spec.resources"})"), 0);
  state.active = 0;
  text = m.expose();
  EXPECT_EQ(sample(text, R"(scheduler_pending_pods{queue="active"})"), 0);
  m.setSchedulerState(nullptr);
  EXPECT_EQ(m.expose().find("scheduler_pending_pods"), std::string::npos);
}

TEST(Metrics, LeaderStatusFollowsTheElector) {
  Metrics m;
  EXPECT_EQ(m.expose().find("leader_election_master_status"), std::string::npos);
  bool leader = false;
  m.setLeaderStatus("berth", [&leader] { return leader; });
  EXPECT_EQ(sample(m.expose(), R"(leader_election_master_status{name="berth"})"), 0);
  leader = true;
  EXPECT_EQ(sample(m.expose(), R"(leader_election_master_status{name="berth"})"), 1);
}

TEST(Metrics, ProcessAndBuildInfoAreExposed) {
  Metrics m;
  const std::string text = m.expose();
  EXPECT_GT(sample(text, "process_resident_memory_bytes"), 1e6);
  EXPECT_GT(sample(text, "process_open_fds"), 2);
  EXPECT_GT(sample(text, "process_start_time_seconds"), 1.7e9);
  EXPECT_GE(sample(text, "process_cpu_seconds_total"), 0);
  EXPECT_EQ(sample(text, std::string(R"(berth_build_info{version=")") + BERTH_VERSION + R"("})"),
            1);
}

}  // namespace
}  // namespace berth::metrics

namespace berth::metrics {
namespace {

TEST(Metrics, DisabledMetricsAreNotExposed) {
  Metrics m;
  m.scheduleAttempt("berth", "scheduled", std::chrono::milliseconds(3));
  m.setExposureOptions({.disabled = {"scheduler_schedule_attempts_total"}, .allowLabels = {}});
  const std::string text = m.expose();
  EXPECT_EQ(text.find("scheduler_schedule_attempts_total"), std::string::npos);
  EXPECT_NE(text.find("scheduler_scheduling_attempt_duration_seconds_bucket"), std::string::npos);
}

TEST(Metrics, LabelValuesOutsideTheAllowListAreExposedAsUnexpected) {
  Metrics m;
  m.scheduleAttempt("berth", "scheduled", std::chrono::milliseconds(3));
  m.scheduleAttempt("berth", "error", std::chrono::milliseconds(3));
  m.scheduleAttempt("berth", "unschedulable", std::chrono::milliseconds(3));
  m.setExposureOptions(
      {.disabled = {},
       .allowLabels = {{{"scheduler_schedule_attempts_total", "result"}, {"scheduled"}},
                       {{"scheduler_scheduling_attempt_duration_seconds", "result"}, {}}}});
  const std::string text = m.expose();
  EXPECT_EQ(
      sample(text, R"(scheduler_schedule_attempts_total{profile="berth",result="scheduled"})"), 1);
  // error and unschedulable are one "unexpected" series now, summed.
  EXPECT_EQ(
      sample(text, R"(scheduler_schedule_attempts_total{profile="berth",result="unexpected"})"), 2);
  EXPECT_EQ(sample(text, R"(scheduler_schedule_attempts_total{profile="berth",result="error"})"),
            -1);
  const std::string bucket =
      R"(scheduler_scheduling_attempt_duration_seconds_bucket{profile="berth",result="unexpected",le=")";
  EXPECT_EQ(sample(text, bucket + R"(+Inf"})"), 3);
  EXPECT_EQ(
      sample(
          text,
          R"(scheduler_scheduling_attempt_duration_seconds_count{profile="berth",result="unexpected"})"),
      3);
}

}  // namespace
}  // namespace berth::metrics
