#include "pkg/metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "pkg/metrics/process.h"

namespace berth::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

double seconds(util::Duration d) { return std::chrono::duration<double>(d).count(); }

// upstream: "attempts" label of the SLI histogram is capped so its cardinality stays bounded.
std::string attemptsLabel(int attempts) {
  return attempts >= 15 ? "15+" : std::to_string(attempts);
}

MetricFamily family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void addSample(MetricFamily& f, std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  if (f.type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
}

}  // namespace

std::vector<double> exponentialBuckets(double start, double factor, int count) {
  std::vector<double> buckets;
  buckets.reserve(static_cast<size_t>(count));
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor) buckets.push_back(v);
  return buckets;
}

Metrics::Metrics()
    : attempts_(
          prometheus::BuildCounter()
              .Name("scheduler_schedule_attempts_total")
              .Help("Number of attempts to schedule pods, by the result. 'unschedulable' means "
                    "a pod could not be scheduled, while 'error' means an internal scheduler "
                    "problem.")
              .Register(registry_)),
      attempt_duration_(prometheus::BuildHistogram()
                            .Name("scheduler_scheduling_attempt_duration_seconds")
                            .Help("Scheduling attempt latency in seconds (scheduling algorithm + "
                                  "binding)")
                            .Register(registry_)),
      algorithm_duration_(prometheus::BuildHistogram()
                              .Name("scheduler_scheduling_algorithm_duration_seconds")
                              .Help("Scheduling algorithm latency in seconds")
                              .Register(registry_)
                              .Add({}, exponentialBuckets(0.001, 2, 15))),
      pod_attempts_(prometheus::BuildHistogram()
                        .Name("scheduler_pod_scheduling_attempts")
                        .Help("Number of attempts to successfully schedule a pod.")
                        .Register(registry_)
                        .Add({}, exponentialBuckets(1, 2, 5))),
      sli_(prometheus::BuildHistogram()
               .Name("scheduler_pod_scheduling_sli_duration_seconds")
               .Help("E2e latency for a pod being scheduled, from the time the pod enters the "
                     "scheduling queue and might involve multiple scheduling attempts.")
               .Register(registry_)),
      extension_points_(prometheus::BuildHistogram()
                            .Name("scheduler_framework_extension_point_duration_seconds")
                            .Help("Latency for running all plugins of a specific extension point.")
                            .Register(registry_)),
      incoming_(prometheus::BuildCounter()
                    .Name("scheduler_queue_incoming_pods_total")
                    .Help("Number of pods added to scheduling queues by event and queue type.")
                    .Register(registry_)),
      scheduled_after_flush_(
          prometheus::BuildCounter()
              .Name("scheduler_pod_scheduled_after_flush_total")
              .Help("Number of pods that were successfully scheduled after being "
                    "flushed from unschedulablePods due to timeout")
              .Register(registry_)
              .Add({})),
      preemption_attempts_(prometheus::BuildCounter()
                               .Name("scheduler_preemption_attempts_total")
                               .Help("Total preemption attempts in the cluster till now")
                               .Register(registry_)
                               .Add({})),
      preemption_victims_(prometheus::BuildHistogram()
                              .Name("scheduler_preemption_victims")
                              .Help("Number of selected preemption victims")
                              .Register(registry_)
                              .Add({}, exponentialBuckets(1, 2, 7))),
      rest_requests_(prometheus::BuildCounter()
                         .Name("rest_client_requests_total")
                         .Help("Number of HTTP requests, partitioned by status code, method, and "
                               "host.")
                         .Register(registry_)),
      rest_duration_(prometheus::BuildHistogram()
                         .Name("rest_client_request_duration_seconds")
                         .Help("Request latency in seconds. Broken down by verb, and host.")
                         .Register(registry_)) {}

void Metrics::scheduleAttempt(std::string_view profile, std::string_view result,
                              util::Duration took) {
  const prometheus::Labels labels{{"result", std::string(result)},
                                  {"profile", std::string(profile)}};
  attempts_.Add(labels).Increment();
  attempt_duration_.Add(labels, exponentialBuckets(0.001, 2, 15)).Observe(seconds(took));
}

void Metrics::schedulingAlgorithm(util::Duration took) {
  algorithm_duration_.Observe(seconds(took));
}

void Metrics::podScheduled(int attempts, util::Duration sinceFirstQueued) {
  pod_attempts_.Observe(attempts);
  sli_.Add({{"attempts", attemptsLabel(attempts)}}, exponentialBuckets(0.01, 2, 20))
      .Observe(seconds(sinceFirstQueued));
}

void Metrics::extensionPoint(std::string_view point, std::string_view status,
                             std::string_view profile, util::Duration took) {
  extension_points_
      .Add({{"extension_point", std::string(point)},
            {"status", std::string(status)},
            {"profile", std::string(profile)}},
           exponentialBuckets(0.0001, 2, 12))
      .Observe(seconds(took));
}

void Metrics::queueIncoming(std::string_view queue, std::string_view event) {
  incoming_.Add({{"queue", std::string(queue)}, {"event", std::string(event)}}).Increment();
}

void Metrics::podScheduledAfterFlush() { scheduled_after_flush_.Increment(); }

void Metrics::preemptionAttempt() { preemption_attempts_.Increment(); }

void Metrics::preemptionVictims(size_t victims) {
  preemption_victims_.Observe(static_cast<double>(victims));
}

void Metrics::restRequest(std::string_view method, std::string_view host, std::string_view code,
                          util::Duration took) {
  rest_requests_
      .Add({{"code", std::string(code)},
            {"method", std::string(method)},
            {"host", std::string(host)}})
      .Increment();
  // component-base's buckets for this histogram.
  static const std::vector<double> kBuckets{0.005, 0.025, 0.1, 0.25, 0.5,  1.0,
                                            2.0,   4.0,   8.0, 15.0, 30.0, 60.0};
  rest_duration_.Add({{"verb", std::string(method)}, {"host", std::string(host)}}, kBuckets)
      .Observe(seconds(took));
}

void Metrics::setSchedulerState(std::function<SchedulerState()> source) {
  std::lock_guard lock(mu_);
  scheduler_state_ = std::move(source);
}

void Metrics::setLeaderStatus(std::string name, std::function<bool()> isLeader) {
  std::lock_guard lock(mu_);
  lease_name_ = std::move(name);
  is_leader_ = std::move(isLeader);
}

void Metrics::setExposureOptions(ExposureOptions options) {
  std::lock_guard lock(mu_);
  exposure_ = std::move(options);
}

namespace {

// Sums `from` into `into`, two series of one family with the same labels.
void addSeries(ClientMetric& into, const ClientMetric& from) {
  into.counter.value += from.counter.value;
  into.gauge.value += from.gauge.value;
  into.untyped.value += from.untyped.value;
  into.histogram.sample_count += from.histogram.sample_count;
  into.histogram.sample_sum += from.histogram.sample_sum;
  for (size_t i = 0; i < into.histogram.bucket.size() && i < from.histogram.bucket.size(); ++i) {
    into.histogram.bucket[i].cumulative_count += from.histogram.bucket[i].cumulative_count;
  }
}

void applyExposure(const ExposureOptions& options, std::vector<MetricFamily>& families) {
  std::erase_if(families, [&](const MetricFamily& f) { return options.disabled.contains(f.name); });
  if (options.allowLabels.empty()) return;
  for (MetricFamily& f : families) {
    bool listed = false;
    for (const auto& entry : options.allowLabels) listed = listed || entry.first.first == f.name;
    if (!listed) continue;
    std::vector<ClientMetric> merged;
    for (ClientMetric& m : f.metric) {
      for (prometheus::ClientMetric::Label& label : m.label) {
        auto allowed = options.allowLabels.find({f.name, label.name});
        if (allowed != options.allowLabels.end() && !allowed->second.contains(label.value)) {
          label.value = "unexpected";
        }
      }
      auto same = std::find_if(merged.begin(), merged.end(),
                               [&](const ClientMetric& other) { return other.label == m.label; });
      if (same == merged.end()) {
        merged.push_back(std::move(m));
      } else {
        addSeries(*same, m);
      }
    }
    f.metric = std::move(merged);
  }
}

}  // namespace

std::string Metrics::expose() const {
  std::vector<MetricFamily> families = registry_.Collect();

  std::function<SchedulerState()> stateSource;
  std::string leaseName;
  std::function<bool()> isLeader;
  ExposureOptions exposure;
  {
    std::lock_guard lock(mu_);
    exposure = exposure_;
    stateSource = scheduler_state_;
    leaseName = lease_name_;
    isLeader = is_leader_;
  }
  if (stateSource) {
    const SchedulerState s = stateSource();
    MetricFamily pending =
        family("scheduler_pending_pods",
               "Number of pending pods, by the queue type. 'active' means number "
               "of pods in activeQ; 'backoff' means number of pods in backoffQ; "
               "'unschedulable' means number of pods in unschedulablePods that "
               "the scheduler attempted to schedule and failed; 'gated' is the "
               "number of unschedulable pods that the scheduler never attempted "
               "to schedule because they are gated.",
               MetricType::Gauge);
    addSample(pending, {{"queue", "active"}}, static_cast<double>(s.active));
    addSample(pending, {{"queue", "backoff"}}, static_cast<double>(s.backoff));
    addSample(pending, {{"queue", "gated"}}, static_cast<double>(s.gated));
    addSample(pending, {{"queue", "unschedulable"}}, static_cast<double>(s.unschedulable));
    families.push_back(std::move(pending));

    MetricFamily cache = family("scheduler_cache_size",
                                "Number of nodes, pods, and assumed (bound) pods in the scheduler "
                                "cache.",
                                MetricType::Gauge);
    addSample(cache, {{"type", "assumed_pods"}}, static_cast<double>(s.cacheAssumedPods));
    addSample(cache, {{"type", "nodes"}}, static_cast<double>(s.cacheNodes));
    addSample(cache, {{"type", "pods"}}, static_cast<double>(s.cachePods));
    families.push_back(std::move(cache));

    MetricFamily unschedulable = family(
        "scheduler_unschedulable_pods",
        "The number of unschedulable pods broken down by plugin name. A pod will increment the "
        "gauge for all plugins that caused it to not schedule and so this metric have meaning "
        "only when broken down by plugin.",
        MetricType::Gauge);
    for (const auto& [key, count] : s.unschedulableByPlugin) {
      addSample(unschedulable, {{"plugin", key.first}, {"profile", key.second}},
                static_cast<double>(count));
    }
    families.push_back(std::move(unschedulable));

    MetricFamily workers = family("scheduler_goroutines",
                                  "Number of running goroutines split by the work they do such as "
                                  "binding (berth: binding cycles running on its binder threads).",
                                  MetricType::Gauge);
    addSample(workers, {{"operation", "binding"}}, static_cast<double>(s.bindingsInFlight));
    families.push_back(std::move(workers));

    MetricFamily plugins = family("scheduler_plugin_execution_duration_seconds",
                                  "Duration for running a plugin at a specific extension point.",
                                  MetricType::Histogram);
    for (const HistogramSeries& series : s.pluginExecutions) {
      ClientMetric m;
      for (const auto& [name, value] : series.labels) m.label.push_back({name, value});
      m.histogram.sample_count = series.count;
      m.histogram.sample_sum = series.sum;
      for (size_t i = 0; i < series.bounds.size(); ++i) {
        m.histogram.bucket.push_back({series.cumulative[i], series.bounds[i]});
      }
      m.histogram.bucket.push_back({series.count, std::numeric_limits<double>::infinity()});
      plugins.metric.push_back(std::move(m));
    }
    families.push_back(std::move(plugins));

    MetricFamily rejections = family(
        "berth_kubelet_admission_rejections_total",
        "Pods berth placed that kubelet then failed at admission, by status.reason (OutOfcpu, "
        "OutOfmemory, OutOfpods...): another scheduler over-committed the node.",
        MetricType::Counter);
    for (const auto& [reason, count] : s.kubeletRejections) {
      addSample(rejections, {{"reason", reason}}, static_cast<double>(count));
    }
    families.push_back(std::move(rejections));

    MetricFamily unknown = family(
        "berth_pods_on_unknown_nodes",
        "Pods whose spec.nodeName names a node that does not exist (a typo, or a node not yet "
        "registered): they never start.",
        MetricType::Gauge);
    addSample(unknown, {}, static_cast<double>(s.podsOnUnknownNodes));
    families.push_back(std::move(unknown));

    if (!s.unsupportedPods.empty()) {
      MetricFamily unsupported = family(
          "berth_unsupported_pods",
          "Pending pods berth refuses to place because they use a field that restricts placement "
          "and that berth does not implement (the README lists them), by field.",
          MetricType::Gauge);
      for (const auto& [field, count] : s.unsupportedPods) {
        addSample(unsupported, {{"field", field}}, static_cast<double>(count));
      }
      families.push_back(std::move(unsupported));
    }
  }
  if (isLeader) {
    MetricFamily leader = family("leader_election_master_status",
                                 "Gauge of if the reporting system is master of the relevant "
                                 "lease, 0 indicates backup, 1 indicates master. 'name' is the "
                                 "string used to identify the lease. Please make sure to group "
                                 "by name.",
                                 MetricType::Gauge);
    addSample(leader, {{"name", leaseName}}, isLeader() ? 1 : 0);
    families.push_back(std::move(leader));
  }

  MetricFamily build = family("berth_build_info",
                              "A metric with a constant '1' value labeled by the version berth was "
                              "built from.",
                              MetricType::Gauge);
  addSample(build, {{"version", BERTH_VERSION}}, 1);
  families.push_back(std::move(build));

  for (MetricFamily& f : processFamilies()) families.push_back(std::move(f));
  applyExposure(exposure, families);
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace berth::metrics
