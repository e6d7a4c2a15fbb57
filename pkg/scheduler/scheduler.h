#pragma once
// Scheduler: the daemon's scheduling loop, kube-scheduler's Scheduler wired from berth's parts.
//
//   feeds ──pods/nodes──> event handlers ──bound pods, nodes──> Cache ──snapshot──┐
//                              └──pending pods of berth's profiles──> SchedulingQueue
//   run(): pop ─> schedulingCycle: snapshot ─> filter/score (GenericScheduler) ─> assume ─> Reserve
//          └─> bindingCycle on the binder pool: [PreBind] ─> Bind ─> confirm, or undoAssume and
//              requeue
//
// A pod some PreBind plugin has work for (VolumeBinding writes its claims and waits up to
// bindTimeoutSeconds for the PV controller) binds on a pool of its own, the volume binder pool
// (bindConcurrency threads): its waits never hold up the bindings of other pods; pods whose
// volumes wait queue behind each other there, in order. Shutdown, or the pod's deletion, ends its
// wait at once (the CycleState's stop token); the pod is then unreserved, forgotten and, unless it
// is gone, requeued.
//   a pod that fits nowhere: PostFilter (preemption), FailedScheduling event, PodScheduled=False,
//   unschedulable queue
//
// Preemption is asynchronous (upstream's SchedulerAsyncPreemption, on by default since v1.33):
// the scheduling cycle that finds victims nominates the preemptor in memory at once, so that the
// next cycles keep its room, and hands the API writes to the preemption pool: per victim the
// DisruptionTarget condition, the DELETE and the Preempted event, then the lower-priority pods
// nominated to that node lose their nomination, then the preemptor's FailedScheduling event and
// its one status patch (PodScheduled=False, nominatedNodeName). Until those writes are done the
// preemptor is not scheduled again (upstream's PreEnqueue gate); then it is activated, and its
// victims' delete events retry it until it fits on the nominated node.
//
// The files follow upstream's: event_handlers.cc routes feed notifications, schedule_one.cc holds
// the two cycles and the failure handler, this file's .cc builds the scheduler and runs it.
//
// Pods whose spec.nodeName is set (by anyone) only count in the cache; berth writes nothing about
// pods of other schedulers. Exactly one Binding is sent per decision: when its answer is lost or a
// conflict, the pod is read back before deciding whether to requeue it.

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>

#include "pkg/algorithm/generic_scheduler.h"
#include "pkg/api/types.h"
#include "pkg/cache/cache.h"
#include "pkg/config/config.h"
#include "pkg/events/recorder.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/metrics/metrics.h"
#include "pkg/queue/scheduling_queue.h"
#include "pkg/scheduler/cluster_api.h"
#include "pkg/scheduler/feeds.h"
#include "pkg/util/clock.h"
#include "pkg/util/parallel.h"
#include "pkg/util/worker_pool.h"

namespace berth::scheduler {

// What the daemon reports as it goes: `berth demo` prints it, metrics count it. Called from the
// scheduling thread and the binder threads; implementations must be thread-safe.
class Observer {
 public:
  virtual ~Observer() = default;
  // Every scheduling attempt: result is "scheduled", "unschedulable" or "error" (the labels of
  // scheduler_schedule_attempts_total), measured from pop to the decision.
  virtual void attempted(const api::Pod& /*pod*/, const std::string& /*profile*/,
                         std::string_view /*result*/, util::Duration /*took*/) {}
  virtual void bound(const api::Pod& /*pod*/, const std::string& /*node*/,
                     const queue::QueuedPod& /*queued*/) {}
  // The pod could not be placed (FitError or error text) and waits for a change.
  virtual void failed(const api::Pod& /*pod*/, const std::string& /*message*/) {}
};

struct SchedulerOptions {
  config::Configuration config;
  std::string hostname = "localhost";  // reportingInstance is "<scheduler name>-<hostname>"
  size_t bindConcurrency = 16;         // bindings (and status writes) in flight at once
  events::Api eventsApi = events::Api::EventsV1;  // the events API the server serves
  util::Clock* clock = nullptr;                   // default: the real clock
  Observer* observer = nullptr;
  // When set, the scheduler records kube-scheduler's metrics into it and serves it its state
  // (queues, cache, bindings in flight) at scrape time. Must outlive the scheduler.
  metrics::Metrics* metrics = nullptr;
  // Tie-break randomness (0 seeds it from the clock) and the plugin-metrics sampler (0 seeds it
  // from std::random_device).
  uint64_t seed = 0;
  // The plugins the profiles are built from; null: the in-tree registry. Must outlive create().
  const framework::runtime::Registry* registry = nullptr;
  size_t preemptionConcurrency = 4;  // preemptions whose API writes run at once
  // How long a pod waits in unschedulablePods before it is retried without an event
  // (--pod-max-in-unschedulable-pods-duration).
  util::Duration podMaxInUnschedulablePodsDuration = std::chrono::minutes(5);
  // Not owned; PreBind's PV and PVC updates (VolumeBinding). Null: claims are assumed, never
  // written. Must outlive the scheduler.
  framework::VolumeWriter* volumes = nullptr;
};

class Scheduler {
 public:
  // Builds a framework per profile (errors name the profile and field). `api` must outlive it.
  static util::Result<std::unique_ptr<Scheduler>> create(ClusterApi& api, Feeds feeds,
                                                         SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts the pod and node feeds; they may warm up before this replica leads.
  void startInformers();
  // True once both feeds delivered their first list (readyz).
  bool hasSynced() const;
  bool waitForCacheSync(std::chrono::milliseconds timeout) const;

  // Schedules until `stop` is requested, then stops taking pods, finishes the bindings in flight
  // and returns. Waits for the feeds' first lists first.
  void run(std::stop_token stop);

  // Stops the feeds (after run() returned).
  void stopInformers();

  queue::PendingPods pendingPods() const { return queue_->pendingPods(); }
  cache::CacheSize cacheSize() const { return cache_.size(); }
  std::map<std::string, int64_t> kubeletRejections() const { return cache_.kubeletRejections(); }
  // What /metrics reports of the queues, the cache and the binder pool.
  metrics::SchedulerState state() const;

 private:
  struct Profile {
    std::unique_ptr<framework::runtime::Framework> framework;
    std::unique_ptr<events::Recorder> recorder;
  };
  struct Attempt;  // one pod's way from pop to bound or requeued
  // Why a scheduling cycle placed no pod: the attempt's result and what handleFailure writes.
  struct Failure {
    std::string_view result;  // "unschedulable" or "error"
    framework::Code code = framework::Code::Error;
    std::string reason;  // of PodScheduled=False: Unschedulable or SchedulerError
    std::string message;
    std::set<std::string> unschedulablePlugins;
    util::Duration took{};
    // PostFilter nominated a node and chose the victims to evict from it.
    std::optional<framework::PostFilterResult> preemption{};
    // PostFilter found no candidate: the pod's nomination from an earlier attempt goes.
    bool clearNomination = false;
  };
  // One preemption's API writes, carried out on the preemption pool (preemption.cc).
  struct Preemption {
    api::PodPtr preemptor;  // as the informer last saw it
    const Profile* profile = nullptr;
    framework::PostFilterResult result;
    std::string reason;   // of the preemptor's PodScheduled=False
    std::string message;  // the FitError, with "preemption: ..."
  };

  Scheduler(ClusterApi& api, Feeds feeds, SchedulerOptions options);

  // event_handlers.cc
  void addEventHandlers();
  Profile* profileFor(const api::Pod& pod);
  bool responsibleFor(const api::Pod& pod) const;

  // schedule_one.cc
  void scheduleOne(const queue::QueuedPod& queued);
  util::Result<std::shared_ptr<Attempt>, Failure> schedulingCycle(const queue::QueuedPod& queued,
                                                                  Profile& profile);
  void bindingCycle(const std::shared_ptr<Attempt>& attempt);
  // Registers the attempt's PreBind wait so that shutdown or the pod's deletion cancels it.
  void trackVolumeWait(Attempt& attempt);
  void untrackVolumeWait(const Attempt& attempt);
  // Cancels the wait of the pod's binding cycle, if one waits.
  void cancelVolumeWait(const api::Pod& pod);
  // Cancels every wait, and the waits of bindings that start from now on.
  void cancelVolumeWaits();
  void confirmBound(const Attempt& attempt);
  // The one undo of an assumed pod: Unreserve, then forget it so its node's resources are free.
  void undoAssume(Attempt& attempt);
  // Requeues a failed pod (unless it is gone or bound meanwhile) and writes the failure back:
  // FailedScheduling event and PodScheduled=False, the latter off the scheduling thread.
  // With `preemption`, the event and the status patch (with nominatedNodeName) follow the victims'
  // writes on the preemption pool instead. With `clearNomination`, the status patch also sets
  // nominatedNodeName to null (if one was set).
  void handleFailure(const queue::QueuedPod& queued, const Profile& profile, framework::Code code,
                     const std::string& reason, const std::string& message,
                     std::optional<framework::PostFilterResult> preemption = std::nullopt,
                     bool clearNomination = false);

  // preemption.cc
  // True (and the pod parked) while the pod's preemption writes are in flight.
  bool parkIfPreempting(const queue::QueuedPod& queued);
  void startPreemption(Preemption preemption);
  void executePreemption(const Preemption& preemption);
  // A victim's condition patch, DELETE and Preempted event; false when an API call failed.
  bool preemptVictim(const Preemption& preemption, const framework::PodInfo& victim);
  // Clears the nominations of pods of lower priority than the preemptor nominated to its node.
  void clearLowerPriorityNominations(const Preemption& preemption);
  // Until the profile's recorder has written what it was given (not once shutting down).
  void waitForEvents(const Profile& profile);
  // Reports an attempt's result to the observer and the metrics.
  void attempted(const api::Pod& pod, const std::string& profile, std::string_view result,
                 util::Duration took);
  void extensionPoint(std::string_view point, framework::Code code, const std::string& profile,
                      util::MonotonicTime start);

  // berth_unsupported_pods: pending pods the profiles' FieldGates refused, by field.
  void countUnsupportedPods(std::map<std::string, int64_t>& counts) const;
  void timerLoop(std::stop_token stop);

  ClusterApi& api_;
  Feeds feeds_;
  SchedulerOptions options_;
  util::Clock& clock_;
  std::map<std::string, Profile> profiles_;  // by scheduler name
  util::Parallelizer parallelizer_;
  algorithm::GenericScheduler algorithm_;
  cache::Cache cache_;
  queue::Nominator nominator_;  // the queue keeps it current; every profile's Filter reads it
  std::unique_ptr<queue::SchedulingQueue> queue_;
  framework::Snapshot snapshot_;  // the scheduling thread's own
  std::minstd_rand sampler_;      // the scheduling thread's own; seeded from options.seed
  std::atomic<int64_t> bindings_in_flight_{0};
  std::mutex preempting_mu_;
  std::set<std::string> preempting_;  // preemptors (namespace/name) whose writes are in flight
  // Victims (uid) deleted by a preemption whose deletion the pod informer has not shown yet: a
  // preemptor retried before then may choose them again, and must not evict them twice.
  std::set<std::string> evicted_;
  std::stop_source preemption_stop_;  // cancels the retry waits at shutdown
  // Destroyed second: preemptions still queued finish while what they use is alive.
  util::WorkerPool preemptors_;
  std::mutex volume_waits_mu_;
  bool volume_waits_cancelled_ = false;  // guarded by volume_waits_mu_
  // Pods (namespace/name) whose PreBind may wait, to the source that cancels it.
  std::map<std::string, std::stop_source> volume_waits_;  // guarded by volume_waits_mu_
  // Destroyed after the volume binder pool: a failed volume binding still writes its status
  // through it.
  util::WorkerPool binders_;
  // Last member: destroyed first (after its waits were cancelled), so queued bindings finish
  // while everything they use is alive.
  util::WorkerPool volume_binders_;
};

}  // namespace berth::scheduler
