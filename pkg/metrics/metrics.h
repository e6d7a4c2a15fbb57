#pragma once
// Metrics: what berth exposes on /metrics, under kube-scheduler's names, types, labels and buckets
// (k/k pkg/scheduler/metrics/metrics.go), so that dashboards and alerts written for kube-scheduler
// keep working; berth's own additions are prefixed berth_.
//
// Two kinds of values:
// - events, recorded as they happen by the scheduler and the REST client (counters and
//   histograms in a prometheus-cpp registry; each call is a few atomic adds);
// - state owned elsewhere (queue lengths, cache size, leadership, process figures), read when
//   /metrics is scraped from the sources set here, so nothing has to keep a copy in sync.
//
// Thread-safe: recording from any thread, one scrape at a time or several.

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/util/clock.h"

namespace berth::metrics {

// prometheus.ExponentialBuckets(start, factor, count), as upstream declares its buckets.
std::vector<double> exponentialBuckets(double start, double factor, int count);

// component-base's escape hatches for misbehaving metrics, applied when /metrics is served:
// --disabled-metrics (families not exposed) and --allow-metric-labels (a value of a listed label
// outside its allow-list is exposed as "unexpected"; series that then share their labels are
// summed, as if recorded under "unexpected").
struct ExposureOptions {
  std::set<std::string> disabled;
  // (metric name, label name) -> the values allowed.
  std::map<std::pair<std::string, std::string>, std::set<std::string>> allowLabels;
};

// One series of a histogram kept outside prometheus-cpp: cumulative counts per upper bound (the
// +Inf bucket is `count`).
struct HistogramSeries {
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<double> bounds;
  std::vector<uint64_t> cumulative;  // parallel to bounds
  uint64_t count = 0;
  double sum = 0;
};

// The scheduler's state at scrape time.
struct SchedulerState {
  // scheduler_pending_pods{queue}: active, backoff, unschedulable, gated.
  int64_t active = 0;
  int64_t backoff = 0;
  int64_t unschedulable = 0;
  int64_t gated = 0;
  // scheduler_cache_size{type}.
  int64_t cacheNodes = 0;
  int64_t cachePods = 0;
  int64_t cacheAssumedPods = 0;
  // scheduler_unschedulable_pods{plugin, profile}: pods waiting in the unschedulable pool, by each
  // plugin that rejected them.
  std::map<std::pair<std::string, std::string>, int64_t> unschedulableByPlugin;
  // scheduler_goroutines{operation="binding"}: binding cycles running now.
  int64_t bindingsInFlight = 0;
  // berth_kubelet_admission_rejections_total{reason}: pods berth placed that kubelet then failed
  // at admission (OutOfcpu, OutOfmemory, OutOfpods...).
  std::map<std::string, int64_t> kubeletRejections;
  // berth_pods_on_unknown_nodes: bound pods whose spec.nodeName names no node (yet).
  int64_t podsOnUnknownNodes = 0;
  // berth_unsupported_pods{field}: pending pods refused because they use a field berth does not
  // implement, for every field some profile refuses (0 when none is waiting).
  std::map<std::string, int64_t> unsupportedPods;
  // scheduler_plugin_execution_duration_seconds{extension_point, plugin, status}, from the
  // framework's lock-free histograms (sampled cycles only).
  std::vector<HistogramSeries> pluginExecutions;
};

class Metrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // --- Events: the scheduling cycle ---
  // scheduler_schedule_attempts_total and scheduler_scheduling_attempt_duration_seconds; result is
  // "scheduled", "unschedulable" or "error".
  void scheduleAttempt(std::string_view profile, std::string_view result, util::Duration took);
  // scheduler_scheduling_algorithm_duration_seconds: filter and score of one attempt.
  void schedulingAlgorithm(util::Duration took);
  // A pod was bound after `attempts` attempts, `sinceFirstQueued` after it first entered the
  // queue: scheduler_pod_scheduling_attempts and scheduler_pod_scheduling_sli_duration_seconds.
  void podScheduled(int attempts, util::Duration sinceFirstQueued);
  // scheduler_framework_extension_point_duration_seconds; status is the framework code's name.
  void extensionPoint(std::string_view point, std::string_view status, std::string_view profile,
                      util::Duration took);
  // scheduler_queue_incoming_pods_total: a pod entered `queue` because of `event`.
  void queueIncoming(std::string_view queue, std::string_view event);
  // scheduler_pod_scheduled_after_flush_total.
  void podScheduledAfterFlush();
  // scheduler_preemption_attempts_total: a PostFilter (preemption) run for a pod that fit nowhere.
  void preemptionAttempt();
  // scheduler_preemption_victims: the victims of one preemption.
  void preemptionVictims(size_t victims);

  // --- Events: the API client ---
  // rest_client_requests_total{code,method,host} and rest_client_request_duration_seconds{verb,
  // host}; code is the HTTP status, or "<error>" when no answer came.
  void restRequest(std::string_view method, std::string_view host, std::string_view code,
                   util::Duration took);

  // --- State read at scrape time ---
  void setSchedulerState(std::function<SchedulerState()> source);
  // leader_election_master_status{name}: 1 while this replica leads the lease `name`.
  void setLeaderStatus(std::string name, std::function<bool()> isLeader);

  void setExposureOptions(ExposureOptions options);

  // The Prometheus text exposition (format 0.0.4) of everything above, plus process_* figures
  // and berth_build_info.
  std::string expose() const;

 private:
  prometheus::Registry registry_;
  prometheus::Family<prometheus::Counter>& attempts_;
  prometheus::Family<prometheus::Histogram>& attempt_duration_;
  prometheus::Histogram& algorithm_duration_;
  prometheus::Histogram& pod_attempts_;
  prometheus::Family<prometheus::Histogram>& sli_;
  prometheus::Family<prometheus::Histogram>& extension_points_;
  prometheus::Family<prometheus::Counter>& incoming_;
  prometheus::Counter& scheduled_after_flush_;
  prometheus::Counter& preemption_attempts_;
  prometheus::Histogram& preemption_victims_;
  prometheus::Family<prometheus::Counter>& rest_requests_;
  prometheus::Family<prometheus::Histogram>& rest_duration_;

  mutable std::mutex mu_;  // the sources
  std::function<SchedulerState()> scheduler_state_;
  std::string lease_name_;
  ExposureOptions exposure_;
  std::function<bool()> is_leader_;
};

}  // namespace berth::metrics
