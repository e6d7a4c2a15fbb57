#include "pkg/scheduler/scheduler.h"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "pkg/metrics/plugin_executions.h"
#include "pkg/plugins/registry.h"
#include "pkg/util/sleep.h"

namespace berth::scheduler {
namespace {

size_t workerThreads(int32_t parallelism) {
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<size_t>(static_cast<size_t>(std::max(parallelism, 1)), 1, cores);
}

}  // namespace

util::Result<std::unique_ptr<Scheduler>> Scheduler::create(ClusterApi& api, Feeds feeds,
                                                           SchedulerOptions options) {
  std::unique_ptr<Scheduler> s(new Scheduler(api, std::move(feeds), std::move(options)));
  const framework::runtime::Registry inTree =
      s->options_.registry ? framework::runtime::Registry() : plugins::makeInTreeRegistry();
  const framework::runtime::Registry& registry =
      s->options_.registry ? *s->options_.registry : inTree;
  framework::Handle handle{&api};
  handle.nominator = &s->nominator_;
  handle.volumes = s->options_.volumes;
  handle.clock = &s->clock_;
  if (s->feeds_.objects) {
    handle.objects = &s->feeds_.objects->objects();
  }
  events::RecorderOptions recorderBase;
  recorderBase.api = s->options_.eventsApi;
  recorderBase.clock = &s->clock_;
  queue::QueueOptions qo;
  qo.nominator = &s->nominator_;
  qo.podMaxInUnschedulablePodsDuration = s->options_.podMaxInUnschedulablePodsDuration;
  for (const config::Profile& profile : s->options_.config.profiles) {
    auto fw = framework::runtime::Framework::create(registry, profile, handle, s->clock_);
    if (!fw.ok()) return fw.error();
    qo.pluginEvents.emplace(profile.schedulerName, (*fw)->pluginEvents());
    events::RecorderOptions ro = recorderBase;
    ro.reportingController = profile.schedulerName;
    ro.reportingInstance = profile.schedulerName + "-" + s->options_.hostname;
    Profile p{std::move(*fw), std::make_unique<events::Recorder>(api, ro)};
    s->profiles_.emplace(profile.schedulerName, std::move(p));
  }
  if (s->profiles_.empty()) return util::invalidArgument("no scheduling profile configured");
  // Every profile uses the same queue sort (validated with the configuration).
  const framework::runtime::Framework* sorter = s->profiles_.begin()->second.framework.get();
  qo.podInitialBackoff = std::chrono::seconds(s->options_.config.podInitialBackoffSeconds);
  qo.podMaxBackoff = std::chrono::seconds(s->options_.config.podMaxBackoffSeconds);
  if (metrics::Metrics* m = s->options_.metrics) {
    qo.onIncoming = [m](std::string_view queue, std::string_view event) {
      m->queueIncoming(queue, event);
    };
  }
  s->queue_ = std::make_unique<queue::SchedulingQueue>(
      [sorter](const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) {
        return sorter->less(a, b);
      },
      s->clock_, qo);
  s->addEventHandlers();
  if (s->options_.metrics) {
    s->options_.metrics->setSchedulerState([raw = s.get()] { return raw->state(); });
  }
  return s;
}

Scheduler::Scheduler(ClusterApi& api, Feeds feeds, SchedulerOptions options)
    : api_(api),
      feeds_(std::move(feeds)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : util::realClock()),
      parallelizer_(static_cast<int>(workerThreads(options_.config.parallelism))),
      algorithm_(parallelizer_,
                 options_.seed
                     ? options_.seed
                     : static_cast<uint64_t>(clock_.systemNow().time_since_epoch().count()),
                 options_.config.percentageOfNodesToScore),
      cache_(clock_),
      sampler_(static_cast<std::minstd_rand::result_type>(options_.seed ? options_.seed
                                                                        : std::random_device{}())),
      preemptors_(options_.preemptionConcurrency),
      binders_(options_.bindConcurrency),
      volume_binders_(options_.bindConcurrency) {}

Scheduler::~Scheduler() {
  if (options_.metrics) options_.metrics->setSchedulerState(nullptr);
  stopInformers();
  if (queue_) queue_->close();
  preemption_stop_.request_stop();
  cancelVolumeWaits();
  // volume_binders_, the last member, finishes the queued tasks first, then binders_.
}

void Scheduler::startInformers() {
  feeds_.pods->start();
  feeds_.nodes->start();
  if (feeds_.objects) feeds_.objects->start();
}

void Scheduler::stopInformers() {
  if (feeds_.pods) feeds_.pods->stop();
  if (feeds_.nodes) feeds_.nodes->stop();
  if (feeds_.objects) feeds_.objects->stop();
}

bool Scheduler::hasSynced() const {
  return feeds_.pods->hasSynced() && feeds_.nodes->hasSynced() &&
         (!feeds_.objects || feeds_.objects->hasSynced());
}

bool Scheduler::waitForCacheSync(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::max(std::chrono::steady_clock::duration::zero(),
                    deadline - std::chrono::steady_clock::now());
  };
  return feeds_.pods->waitForSync(timeout) && feeds_.nodes->waitForSync(left()) &&
         (!feeds_.objects || feeds_.objects->waitForSync(left()));
}

void Scheduler::run(std::stop_token stop) {
  std::stop_callback closeQueue(stop, [this] { queue_->close(); });
  while (!stop.stop_requested() && !hasSynced()) {
    waitForCacheSync(std::chrono::milliseconds(200));
  }
  std::jthread timers([this](std::stop_token s) { timerLoop(s); });
  while (!stop.stop_requested()) {
    std::optional<queue::QueuedPod> next = queue_->pop();
    if (!next) break;
    scheduleOne(*next);
  }
  timers.request_stop();
  // Finish the bindings in flight: their pods are assumed and their requests may be on the wire.
  // Preemptions finish too, without their retry waits: a victim whose condition was patched is
  // still deleted.
  preemption_stop_.request_stop();
  preemptors_.drain();
  // Volume bindings stop waiting; a failed one still writes through the binder pool.
  cancelVolumeWaits();
  volume_binders_.drain();
  binders_.drain();
}

metrics::SchedulerState Scheduler::state() const {
  metrics::SchedulerState s;
  const queue::PendingPods pending = queue_->pendingPods();
  s.active = static_cast<int64_t>(pending.active);
  s.backoff = static_cast<int64_t>(pending.backoff);
  s.unschedulable = static_cast<int64_t>(pending.unschedulable);
  s.gated = static_cast<int64_t>(pending.gated);
  const cache::CacheSize size = cache_.size();
  s.cacheNodes = static_cast<int64_t>(size.nodes);
  s.cachePods = static_cast<int64_t>(size.pods);
  s.cacheAssumedPods = static_cast<int64_t>(size.assumedPods);
  s.podsOnUnknownNodes = static_cast<int64_t>(size.podsOnUnknownNodes);
  s.unschedulableByPlugin = queue_->unschedulablePlugins();
  s.bindingsInFlight = bindings_in_flight_.load();
  s.kubeletRejections = cache_.kubeletRejections();
  countUnsupportedPods(s.unsupportedPods);
  std::vector<metrics::PluginExecution> executions;
  for (const auto& [name, profile] : profiles_) {
    for (auto& series : profile.framework->pluginDurations().snapshot()) {
      executions.push_back(
          {series.plugin, std::string(series.extensionPoint), std::string(series.status),
           std::vector<uint64_t>(series.cumulative.begin(), series.cumulative.end()), series.count,
           series.sumSeconds});
    }
  }
  const auto& bounds = framework::runtime::PluginDurations::bucketBounds();
  s.pluginExecutions =
      metrics::pluginExecutionSeries(executions, std::vector<double>(bounds.begin(), bounds.end()));
  return s;
}

void Scheduler::countUnsupportedPods(std::map<std::string, int64_t>& counts) const {
  for (const auto& [name, profile] : profiles_) {
    for (const auto* row : profile.framework->fieldGate().activeRows()) {
      counts.try_emplace(std::string(row->field), 0);
    }
  }
  if (counts.empty()) return;
  // Counted from the queue when scraped, so a pod stops counting as soon as it is deleted, bound or
  // updated to drop the field.
  queue_->forEachRejected([&](const api::Pod& pod, const std::set<std::string>& rejectedBy) {
    auto it = profiles_.find(pod.spec.schedulerName);
    if (it == profiles_.end()) return;
    auto refusal = it->second.framework->fieldGate().check(pod);
    if (refusal && rejectedBy.contains(std::string(refusal->row->plugin))) {
      ++counts[std::string(refusal->row->field)];
    }
  });
}

void Scheduler::timerLoop(std::stop_token stop) {
  auto nextLeftover = clock_.monotonicNow() + queue::kUnschedulableFlushInterval;
  while (util::sleepFor(queue::kBackoffFlushInterval, stop)) {
    queue_->flushBackoffQCompleted();
    cache_.cleanupAssumedPods();
    if (clock_.monotonicNow() >= nextLeftover) {
      queue_->flushUnschedulablePodsLeftover();
      nextLeftover = clock_.monotonicNow() + queue::kUnschedulableFlushInterval;
    }
  }
}

}  // namespace berth::scheduler
