#include "pkg/scheduler/scheduler.h"

#include <algorithm>
#include <random>
#include <tuple>
#include <utility>

#include "pkg/api/decode.h"
#include "pkg/log/log.h"
#include "pkg/plugins/registry.h"
#include "pkg/util/sleep.h"

namespace berth::scheduler {
namespace {

using framework::Code;

// kube-scheduler's pod informer leaves terminal pods out: their end arrives as a delete.
constexpr const char* kNonTerminalPods = "status.phase!=Succeeded,status.phase!=Failed";

bool assigned(const api::Pod& pod) { return !pod.spec.nodeName.empty(); }
bool terminal(const api::Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

std::string podRef(const api::Pod& pod) {
  return log::ref(pod.metadata.namespace_, pod.metadata.name);
}

size_t workerThreads(int32_t parallelism) {
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<size_t>(static_cast<size_t>(std::max(parallelism, 1)), 1, cores);
}

}  // namespace

// One pod from pop to bound or requeued: what the binding cycle needs from the scheduling cycle.
struct Scheduler::Attempt {
  queue::QueuedPod queued;
  Profile* profile = nullptr;
  framework::CycleState state;
  framework::PodInfoPtr assumed;  // the pod with spec.nodeName set, as counted in the cache
  std::string node;
  util::MonotonicTime started{};
  int evaluatedNodes = 0;
  size_t feasibleNodes = 0;
};

util::Result<std::unique_ptr<Scheduler>> Scheduler::create(client::RestClient& client,
                                                           SchedulerOptions options) {
  std::unique_ptr<Scheduler> s(new Scheduler(client, std::move(options)));
  auto registry = plugins::makeInTreeRegistry();
  framework::Handle handle{&s->binder_};
  events::RecorderOptions recorderBase;
  recorderBase.api = discoverEventsApi(client);
  queue::QueueOptions qo;
  recorderBase.clock = &s->clock_;
  for (const config::Profile& profile : s->options_.config.profiles) {
    auto fw = framework::runtime::Framework::create(registry, profile, handle);
    if (!fw.ok()) return fw.error();
    qo.pluginEvents.emplace(profile.schedulerName, (*fw)->pluginEvents());
    events::RecorderOptions ro = recorderBase;
    ro.reportingController = profile.schedulerName;
    ro.reportingInstance = profile.schedulerName + "-" + s->options_.hostname;
    Profile p{std::move(*fw), std::make_unique<events::Recorder>(s->eventSink_, ro)};
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

  informer::ReflectorOptions podOptions;
  podOptions.name = "pods";
  podOptions.clock = &s->clock_;
  s->pods_ = std::make_unique<informer::Informer<api::Pod>>(
      informer::makeListerWatcher(client, client::kPods, "", "", kNonTerminalPods), api::decodePod,
      podOptions);
  informer::ReflectorOptions nodeOptions;
  nodeOptions.name = "nodes";
  nodeOptions.clock = &s->clock_;
  s->nodes_ = std::make_unique<informer::Informer<api::Node>>(
      informer::makeListerWatcher(client, client::kNodes), api::decodeNode, nodeOptions);
  s->addEventHandlers();
  if (s->options_.metrics) {
    s->options_.metrics->setSchedulerState([raw = s.get()] { return raw->state(); });
  }
  return s;
}

Scheduler::Scheduler(client::RestClient& client, SchedulerOptions options)
    : client_(client),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : util::realClock()),
      binder_(client),
      eventSink_(client),
      parallelizer_(static_cast<int>(workerThreads(options_.config.parallelism))),
      algorithm_(parallelizer_,
                 options_.seed
                     ? options_.seed
                     : static_cast<uint64_t>(clock_.systemNow().time_since_epoch().count()),
                 options_.config.percentageOfNodesToScore),
      cache_(clock_),
      sampler_(static_cast<std::minstd_rand::result_type>(options_.seed ? options_.seed
                                                                        : std::random_device{}())) {
  for (size_t i = 0; i < std::max<size_t>(options_.bindConcurrency, 1); ++i) {
    binders_.emplace_back([this] { binderLoop(); });
  }
}

Scheduler::~Scheduler() {
  if (options_.metrics) options_.metrics->setSchedulerState(nullptr);
  stopInformers();
  if (queue_) queue_->close();
  {
    std::lock_guard lock(poolMu_);
    poolStopping_ = true;
  }
  poolCv_.notify_all();
  for (std::thread& t : binders_) t.join();
}

// --- Event handlers (informer threads) -----------------------------------------------------------

bool Scheduler::responsibleFor(const api::Pod& pod) const {
  return profiles_.contains(pod.spec.schedulerName);
}

Scheduler::Profile* Scheduler::profileFor(const api::Pod& pod) {
  auto it = profiles_.find(pod.spec.schedulerName);
  return it == profiles_.end() ? nullptr : &it->second;
}

void Scheduler::addEventHandlers() {
  using PodPtr = std::shared_ptr<const api::Pod>;
  using NodePtr = std::shared_ptr<const api::Node>;
  auto logIfFailed = [](const util::Result<void>& r, std::string_view what, const api::Pod& pod) {
    if (!r.ok()) log::error(r.error().message, what, {{"pod", podRef(pod)}});
  };

  informer::EventHandlers<api::Pod> podHandlers;
  podHandlers.onAdd = [this, logIfFailed](const PodPtr& pod) {
    if (assigned(*pod)) {
      logIfFailed(cache_.addPod(pod), "Scheduler cache AddPod failed", *pod);
    } else if (responsibleFor(*pod)) {
      queue_->add(pod);
    }
  };
  podHandlers.onUpdate = [this, logIfFailed](const PodPtr& oldPod, const PodPtr& newPod) {
    if (assigned(*newPod)) {
      // Bound now (by berth or anyone): no longer pending; the cache confirms or counts it.
      if (!assigned(*oldPod)) queue_->remove(*oldPod);
      logIfFailed(cache_.updatePod(newPod), "Scheduler cache UpdatePod failed", *newPod);
    } else if (responsibleFor(*newPod)) {
      queue_->update(newPod);
    } else if (responsibleFor(*oldPod)) {
      queue_->remove(*oldPod);  // spec.schedulerName cannot change, but be safe
    }
  };
  podHandlers.onDelete = [this, logIfFailed](const PodPtr& pod) {
    if (!assigned(*pod)) {
      queue_->remove(*pod);
      return;
    }
    // A pod leaving the informer because it finished: let the cache see how (kubelet rejections).
    if (terminal(*pod))
      logIfFailed(cache_.updatePod(pod), "Scheduler cache UpdatePod failed", *pod);
    logIfFailed(cache_.removePod(*pod), "Scheduler cache RemovePod failed", *pod);
    queue_->movePodsOnEvent(framework::events::kAssignedPodDelete, {.oldPod = pod.get()});
  };
  pods_->addEventHandlers(std::move(podHandlers));

  informer::EventHandlers<api::Node> nodeHandlers;
  nodeHandlers.onAdd = [this](const NodePtr& node) {
    cache_.addNode(node);
    queue_->movePodsOnEvent(framework::events::kNodeAdd, {.newNode = node.get()});
  };
  nodeHandlers.onUpdate = [this](const NodePtr& oldNode, const NodePtr& newNode) {
    cache_.updateNode(newNode);
    for (const framework::ClusterEvent& event : framework::nodeUpdateEvents(*oldNode, *newNode)) {
      queue_->movePodsOnEvent(event, {.oldNode = oldNode.get(), .newNode = newNode.get()});
    }
  };
  nodeHandlers.onDelete = [this](const NodePtr& node) {
    if (auto r = cache_.removeNode(*node); !r.ok()) {
      log::error(r.error().message, "Scheduler cache RemoveNode failed",
                 {{"node", node->metadata.name}});
    }
  };
  nodes_->addEventHandlers(std::move(nodeHandlers));
}

void Scheduler::startInformers() {
  pods_->start();
  nodes_->start();
}

void Scheduler::stopInformers() {
  if (pods_) pods_->stop();
  if (nodes_) nodes_->stop();
}

bool Scheduler::hasSynced() const { return pods_->hasSynced() && nodes_->hasSynced(); }

bool Scheduler::waitForCacheSync(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  return pods_->waitForSync(timeout) &&
         nodes_->waitForSync(std::max(std::chrono::steady_clock::duration::zero(),
                                      deadline - std::chrono::steady_clock::now()));
}

// --- The scheduling loop
// ---------------------------------------------------------------------------

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
  std::unique_lock lock(poolMu_);
  drainedCv_.wait(lock, [&] { return tasks_.empty() && running_ == 0; });
}

void Scheduler::scheduleOne(const queue::QueuedPod& queued) {
  const api::Pod& pod = queued.pod();
  Profile* profile = profileFor(pod);
  if (profile == nullptr || pod.metadata.deletionTimestamp || assigned(pod)) {
    // Upstream's skipPodSchedule: a pod being deleted is not scheduled.
    queue_->done(pod);
    return;
  }
  log::info(3, "Attempting to schedule pod", {{"pod", podRef(pod)}});
  auto attempt = std::make_shared<Attempt>();
  attempt->queued = queued;
  attempt->profile = profile;
  attempt->started = clock_.monotonicNow();
  // Upstream's pluginMetricsSamplePercent: 10% of cycles time every plugin call.
  attempt->state.setRecordPluginMetrics(options_.metrics != nullptr && sampler_() % 100 < 10);
  const framework::runtime::Framework& fw = *profile->framework;

  cache_.updateSnapshot(snapshot_);
  algorithm::ScheduleOutcome outcome =
      algorithm_.schedulePod(fw, attempt->state, *queued.info.podInfo, snapshot_);
  util::Duration took = clock_.monotonicNow() - attempt->started;
  if (metrics::Metrics* m = options_.metrics) {
    m->schedulingAlgorithm(took);
    for (const auto& point : outcome.extensionPoints) {
      m->extensionPoint(point.point, framework::codeName(point.code), fw.profileName(), point.took);
    }
  }
  if (!outcome.status.isSuccess()) {
    bool fit = outcome.fitError.has_value();
    std::string message = fit ? outcome.fitError->message() : outcome.status.message();
    attempted(pod, fw.profileName(), fit ? "unschedulable" : "error", took);
    queue::QueuedPod failed = queued;
    if (fit) failed.unschedulablePlugins = outcome.fitError->diagnosis.unschedulablePlugins;
    handleFailure(failed, *profile, fit ? outcome.status.code() : Code::Error,
                  fit ? "Unschedulable" : "SchedulerError", message);
    return;
  }
  attempt->node = outcome.node;
  attempt->evaluatedNodes = outcome.evaluatedNodes;
  attempt->feasibleNodes = std::max<size_t>(outcome.feasible.size(), 1);

  // Assume: the next cycle must see this pod's requests on its node before the Binding lands.
  auto bound = std::make_shared<api::Pod>(pod);
  bound->spec.nodeName = outcome.node;
  attempt->assumed = framework::makePodInfo(std::move(bound));
  if (auto r = cache_.assumePod(attempt->assumed); !r.ok()) {
    attempted(pod, fw.profileName(), "error", took);
    handleFailure(queued, *profile, Code::Error, "SchedulerError", r.error().message);
    return;
  }
  const util::MonotonicTime reserveStart = clock_.monotonicNow();
  framework::Status reserved =
      fw.runReservePluginsReserve(attempt->state, *attempt->assumed, attempt->node);
  extensionPoint(config::pointName(config::Point::Reserve), reserved.code(), fw.profileName(),
                 reserveStart);
  if (!reserved.isSuccess()) {
    fw.runReservePluginsUnreserve(attempt->state, *attempt->assumed, attempt->node);
    (void)cache_.forgetPod(*attempt->assumed->pod);
    attempted(pod, fw.profileName(), "error", took);
    handleFailure(queued, *profile, Code::Error, "SchedulerError", reserved.message());
    return;
  }
  // scheduler_schedule_attempts_total counts a "scheduled" attempt once bound (confirmBound).
  if (options_.observer) options_.observer->attempted(pod, fw.profileName(), "scheduled", took);
  // Bind asynchronously: the assumption above lets the next pod be scheduled meanwhile.
  submit([this, attempt] { bindingCycle(attempt); });
}

void Scheduler::bindingCycle(const std::shared_ptr<Attempt>& attempt) {
  ++bindingsInFlight_;
  struct Done {
    std::atomic<int64_t>& n;
    ~Done() { --n; }
  } done{bindingsInFlight_};
  const framework::runtime::Framework& fw = *attempt->profile->framework;
  const api::Pod& pod = *attempt->assumed->pod;
  const util::MonotonicTime bindStart = clock_.monotonicNow();
  framework::Status status = fw.runBindPlugins(attempt->state, *attempt->assumed, attempt->node);
  extensionPoint(config::pointName(config::Point::Bind), status.code(), fw.profileName(),
                 bindStart);
  if (status.isSuccess()) {
    confirmBound(*attempt);
    return;
  }
  // The answer may have been lost after the binding landed, or someone else bound the pod (409):
  // read the pod back rather than sending a second Binding.
  auto current = client_.get(client::kPods, pod.metadata.namespace_, pod.metadata.name);
  if (current.ok()) {
    std::string boundTo = current->value("spec", nlohmann::json::object()).value("nodeName", "");
    if (boundTo == attempt->node) {
      confirmBound(*attempt);
      return;
    }
    if (!boundTo.empty()) {
      fw.runReservePluginsUnreserve(attempt->state, *attempt->assumed, attempt->node);
      (void)cache_.forgetPod(pod);
      queue_->done(pod);
      log::info(2, "Pod was bound by someone else; dropping it",
                {{"pod", podRef(pod)}, {"node", boundTo}});
      return;
    }
  } else if (current.error().isNotFound()) {
    fw.runReservePluginsUnreserve(attempt->state, *attempt->assumed, attempt->node);
    (void)cache_.forgetPod(pod);
    queue_->done(pod);
    return;
  }
  fw.runReservePluginsUnreserve(attempt->state, *attempt->assumed, attempt->node);
  (void)cache_.forgetPod(pod);
  log::error(status.message(), "Failed to bind pod",
             {{"pod", podRef(pod)}, {"node", attempt->node}});
  if (options_.metrics) {
    options_.metrics->scheduleAttempt(fw.profileName(), "error",
                                      clock_.monotonicNow() - attempt->started);
  }
  handleFailure(attempt->queued, *attempt->profile, Code::Error, "SchedulerError",
                "binding rejected: " + status.message());
}

void Scheduler::confirmBound(const Attempt& attempt) {
  const api::Pod& pod = *attempt.assumed->pod;
  cache_.finishBinding(pod);
  queue_->done(pod);
  util::Duration took = clock_.monotonicNow() - attempt.started;
  log::info(2, "Successfully bound pod to node",
            {{"pod", podRef(pod)},
             {"node", attempt.node},
             {"evaluatedNodes", attempt.evaluatedNodes},
             {"feasibleNodes", attempt.feasibleNodes},
             {"duration", std::chrono::duration<double>(took).count()}});
  attempt.profile->recorder->record(events::podReference(pod), "Normal", "Scheduled", "Binding",
                                    "Successfully assigned " + podRef(pod) + " to " + attempt.node);
  if (options_.observer) options_.observer->bound(pod, attempt.node, attempt.queued);
  if (metrics::Metrics* m = options_.metrics) {
    const util::MonotonicTime now = clock_.monotonicNow();
    m->scheduleAttempt(attempt.profile->framework->profileName(), "scheduled", took);
    m->podScheduled(attempt.queued.attempts(), now - attempt.queued.initialEnqueue);
    if (attempt.queued.flushedFromUnschedulable) m->podScheduledAfterFlush();
  }
}

void Scheduler::attempted(const api::Pod& pod, const std::string& profile, std::string_view result,
                          util::Duration took) {
  if (options_.observer) options_.observer->attempted(pod, profile, result, took);
  if (options_.metrics) options_.metrics->scheduleAttempt(profile, result, took);
}

void Scheduler::extensionPoint(std::string_view point, Code code, const std::string& profile,
                               util::MonotonicTime start) {
  if (options_.metrics) {
    options_.metrics->extensionPoint(point, framework::codeName(code), profile,
                                     clock_.monotonicNow() - start);
  }
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
  s.bindingsInFlight = bindingsInFlight_.load();
  s.kubeletRejections = cache_.kubeletRejections();
  // Upstream's histogram has no profile label: series of several profiles are summed.
  std::map<std::tuple<std::string, std::string_view, std::string_view>,
           framework::runtime::PluginDurations::Series>
      merged;
  for (const auto& [name, profile] : profiles_) {
    for (auto& series : profile.framework->pluginDurations().snapshot()) {
      auto [it, fresh] = merged.try_emplace(
          std::tuple(series.plugin, series.extensionPoint, series.status), series);
      if (fresh) continue;
      for (size_t b = 0; b < series.cumulative.size(); ++b)
        it->second.cumulative[b] += series.cumulative[b];
      it->second.count += series.count;
      it->second.sumSeconds += series.sumSeconds;
    }
  }
  const auto& bounds = framework::runtime::PluginDurations::bucketBounds();
  for (const auto& [key, series] : merged) {
    metrics::HistogramSeries h;
    h.labels = {{"extension_point", std::string(series.extensionPoint)},
                {"plugin", series.plugin},
                {"status", std::string(series.status)}};
    h.bounds.assign(bounds.begin(), bounds.end());
    h.cumulative.assign(series.cumulative.begin(), series.cumulative.end());
    h.count = series.count;
    h.sum = series.sumSeconds;
    s.pluginExecutions.push_back(std::move(h));
  }
  return s;
}

void Scheduler::handleFailure(const queue::QueuedPod& queued, const Profile& profile, Code code,
                              const std::string& reason, const std::string& message) {
  const api::Pod& pod = queued.pod();
  // Upstream checks the informer's copy: a pod deleted or bound meanwhile is not requeued.
  std::shared_ptr<const api::Pod> latest =
      pods_->store().get(log::ref(pod.metadata.namespace_, pod.metadata.name));
  if (!latest) {
    queue_->done(pod);
    log::info(3, "Pod doesn't exist in informer cache", {{"pod", podRef(pod)}});
    return;
  }
  if (assigned(*latest)) {
    queue_->done(pod);
    log::info(3, "Pod has been assigned to node. Abort adding it back to queue.",
              {{"pod", podRef(pod)}, {"node", latest->spec.nodeName}});
    return;
  }
  if (auto r = queue_->addUnschedulableIfNotPresent(queued, code); !r.ok()) {
    log::error(r.error().message, "Error occurred", {{"pod", podRef(pod)}});
  }
  log::info(2, "Unable to schedule pod; no fit; waiting", {{"pod", podRef(pod)}, {"err", message}});
  profile.recorder->record(events::podReference(*latest), "Warning", "FailedScheduling",
                           "Scheduling", message);
  if (options_.observer) options_.observer->failed(pod, message);
  auto patch =
      podScheduledConditionPatch(*latest, reason, message, api::toTimestamp(clock_.systemNow()));
  if (!patch) return;
  std::string ns = pod.metadata.namespace_;
  std::string name = pod.metadata.name;
  submit([this, ns, name, patch = std::move(*patch)] {
    auto r =
        client_.patch(client::kPods, ns, name, client::PatchType::StrategicMerge, patch, "status");
    if (!r.ok() && !r.error().isNotFound()) {
      log::error(r.error().toString(), "Error updating pod", {{"pod", log::ref(ns, name)}});
    }
  });
}

// --- Binder pool and timers
// ------------------------------------------------------------------------

void Scheduler::submit(std::function<void()> task) {
  {
    std::lock_guard lock(poolMu_);
    tasks_.push_back(std::move(task));
  }
  // One task, one binder: waking them all would have the rest contend for the lock and sleep again.
  poolCv_.notify_one();
}

void Scheduler::binderLoop() {
  std::unique_lock lock(poolMu_);
  while (true) {
    poolCv_.wait(lock, [&] { return poolStopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping with nothing left
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    ++running_;
    lock.unlock();
    task();
    lock.lock();
    --running_;
    if (running_ == 0 && tasks_.empty()) drainedCv_.notify_all();
  }
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
