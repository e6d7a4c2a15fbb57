#pragma once
// SchedulingQueue: the pods waiting to be scheduled (upstream's PriorityQueue in
// backend/queue/scheduling_queue.go). A pending pod is in exactly one place, keyed by
// namespace/name:
//
//   add ──> gated ──(update removes the last gate)──> activeQ
//   add ──> activeQ ──pop()──> in flight ──done() (bound), or remove()──> gone
//   in flight ──Unschedulable──> unschedulable
//   in flight ──Error, or an event/update during the attempt──> backoffQ | activeQ
//   unschedulable ──relevant cluster event, or parked 5 min──> backoffQ | activeQ
//   backoffQ ──backoff over (flushBackoffQCompleted)──> activeQ
//
// activeQ is ordered by the profile's QueueSort less (priority, then queue timestamp); backoffQ by
// backoff expiry, where backoff is podInitialBackoff doubled per attempt up to podMaxBackoff,
// measured from the last failure. A pod that leaves unschedulable goes to backoffQ while its
// backoff runs, else to activeQ. A cluster event is relevant to an unschedulable pod when one of
// the plugins that rejected it registered the event and its hint says Queue (upstream's
// isPodWorthRequeuing); a pod no plugin rejected (it failed with an error) takes any event some
// plugin registered. Events that arrive while a pod is in flight are remembered
// (upstream's moveRequestCycle), so a pod failing after such an event is retried instead of parked.
//
// No I/O and no threads: pop() blocks on a condition variable, and the daemon calls the flushes
// from timers every kBackoffFlushInterval / kUnschedulableFlushInterval. Time comes from the
// injected Clock. Every method is thread-safe.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "pkg/api/types.h"
#include "pkg/framework/events.h"
#include "pkg/framework/pod_info.h"
#include "pkg/framework/status.h"
#include "pkg/queue/nominator.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace berth::queue {

using framework::ClusterEvent;

// The profile's QueueSort: true when a is scheduled before b (runtime::Framework::less).
using Less =
    std::function<bool(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b)>;

// Upstream's PreEnqueueCheck: a cheap test, per unschedulable pod, of whether an event can help it
// (e.g. does the pod tolerate the added node's taints). Empty: every pod moves.
using PreEnqueueCheck = std::function<bool(const api::Pod& pod)>;

// Upstream's defaults (DefaultPodInitialBackoffDuration, DefaultPodMaxBackoffDuration,
// DefaultPodMaxInUnschedulablePodsDuration).
struct QueueOptions {
  util::Duration podInitialBackoff = std::chrono::seconds(1);
  util::Duration podMaxBackoff = std::chrono::seconds(10);
  util::Duration podMaxInUnschedulablePodsDuration = std::chrono::minutes(5);
  // A pod entered `queue` (locationName) because of `event` ("PodAdd", "BackoffComplete", a
  // ClusterEvent's label...): scheduler_queue_incoming_pods_total. Called under the queue's lock.
  std::function<void(std::string_view queue, std::string_view event)> onIncoming{};
  // The events each profile's plugins registered (runtime::Framework::pluginEvents), by profile
  // name (spec.schedulerName). An event no profile registered moves no pod; a pod of a profile
  // missing here moves on every event.
  std::map<std::string, framework::PluginEvents, std::less<>> pluginEvents{};
  // Kept current with the queue's pods: add and update take each version's
  // status.nominatedNodeName, remove (or the pod bound) ends its nomination. Null: none. Not owned.
  Nominator* nominator = nullptr;
};

// How often the daemon should call the flushes (upstream's PriorityQueue.Run).
inline constexpr std::chrono::seconds kBackoffFlushInterval{1};
inline constexpr std::chrono::seconds kUnschedulableFlushInterval{30};

// Where a pod is. The names are the `queue` label of scheduler_pending_pods.
enum class Location : uint8_t { Active, Backoff, Unschedulable, Gated, InFlight };
std::string_view locationName(Location location);

// A pod as the queue tracks it; pop() hands a copy to the scheduling cycle, which gives it back on
// failure.
struct QueuedPod {
  // The pod, its queue timestamp (QueueSort's tie-break: when the pod last entered the queue, on
  // the system clock) and the number of scheduling attempts so far (pop() counts them).
  framework::QueuedPodInfo info;
  util::MonotonicTime initialEnqueue{};  // first time the pod entered the queue (latency metrics)
  util::MonotonicTime enqueued{};        // last (re)queue; backoff and leftover time count from it
  int64_t cycle = 0;                     // the scheduling cycle that popped the pod
  // The plugins that rejected the pod in its last attempt (scheduler_unschedulable_pods).
  std::set<std::string> unschedulablePlugins{};
  bool flushedFromUnschedulable = false;  // moved by the leftover flush at some point

  const api::Pod& pod() const { return *info.podInfo->pod; }
  int attempts() const { return info.attempts; }
};

struct PendingPods {
  size_t active = 0;
  size_t backoff = 0;
  size_t unschedulable = 0;
  size_t gated = 0;
  size_t inFlight = 0;  // popped and not yet done or requeued
};

class SchedulingQueue {
 public:
  SchedulingQueue(Less less, util::Clock& clock, QueueOptions options = {});
  SchedulingQueue(const SchedulingQueue&) = delete;
  SchedulingQueue& operator=(const SchedulingQueue&) = delete;

  // A new pending pod: activeQ, or gated while spec.schedulingGates is not empty. A pod already in
  // the queue (or in flight) is updated instead, so no pod is ever queued twice. Pods with
  // spec.nodeName set are not pending and are ignored.
  void add(api::PodPtr pod);
  // A newer version of a pending pod, applied wherever the pod is. An unschedulable pod whose
  // labels, annotations or spec changed moves to backoffQ/activeQ; a gated pod whose last gate is
  // gone moves to activeQ; an in-flight pod is requeued with this version if its attempt fails. A
  // pod unknown to the queue is added; a pod now bound (spec.nodeName set) is removed.
  void update(api::PodPtr newPod);
  // The pod was deleted (or bound by someone): drop it from every queue; if it is in flight, its
  // failure will not requeue it.
  void remove(const api::Pod& pod);

  // The best pod in activeQ, marked in flight; blocks while activeQ is empty. nullopt once closed.
  std::optional<QueuedPod> pop();
  // Same without blocking: nullopt when activeQ is empty or the queue is closed.
  std::optional<QueuedPod> tryPop();

  // The scheduling attempt of a popped pod failed. Unschedulable/UnschedulableAndUnresolvable park
  // it in unschedulable unless a relevant event arrived or the pod was updated since pop(); Error,
  // and those cases, send it to backoffQ (activeQ if its backoff is already over). The latest
  // version seen by update() is the one requeued; a pod removed meanwhile is dropped. Fails, with
  // upstream's message, if the pod is already queued.
  util::Result<void> addUnschedulableIfNotPresent(const QueuedPod& pod, framework::Code code);
  // The popped pod's cycle ended without a requeue (it was bound, or given up): forget it.
  void done(const api::Pod& pod);

  // Moves the unschedulable pods (not gated ones) the event is relevant to and that `check`
  // accepts to backoffQ/activeQ, and records the event for pods in flight. `objects` are what the
  // plugins' hints judge; an event without them is judged by its registrations alone. An event no
  // plugin registered is ignored.
  void movePodsOnEvent(const ClusterEvent& event, const framework::EventObjects& objects,
                       const PreEnqueueCheck& check = {});
  void movePodsOnEvent(const ClusterEvent& event, const PreEnqueueCheck& check = {}) {
    movePodsOnEvent(event, framework::EventObjects{}, check);
  }
  // Moves pods whose backoff has expired from backoffQ to activeQ.
  void flushBackoffQCompleted();
  // Moves pods unschedulable for longer than podMaxInUnschedulablePodsDuration to backoffQ/activeQ.
  void flushUnschedulablePodsLeftover();

  // Moves the pod, if it waits in unschedulable or backoffQ, to activeQ now (upstream's Activate);
  // a pod in flight is requeued rather than parked if its attempt fails.
  void activate(const api::Pod& pod);

  // Wakes every pop(), which returns nullopt from now on.
  void close();

  PendingPods pendingPods() const;
  // Where the pod (by namespace/name) is; nullopt when the queue does not hold it.
  std::optional<Location> locate(const api::Pod& pod) const;
  // Snapshot of a queued or in-flight pod's record (attempts, enqueue times).
  std::optional<QueuedPod> get(const api::Pod& pod) const;
  // How many pods pop() has handed out.
  int64_t schedulingCycle() const;
  // Pods in the unschedulable pool by (rejecting plugin, spec.schedulerName).
  std::map<std::pair<std::string, std::string>, int64_t> unschedulablePlugins() const;
  // Calls fn(pod, plugins that rejected it last) for every pending pod that was rejected at least
  // once, queued or in flight (the newest version of the pod), under the queue's lock: fn must be
  // quick and must not call the queue.
  void forEachRejected(
      const std::function<void(const api::Pod&, const std::set<std::string>&)>& fn) const;

 private:
  struct Entry {
    QueuedPod queued;
    Location where = Location::Active;
    uint64_t seq = 0;                     // insertion order: a strict tie-break for the sets
    util::MonotonicTime backoffExpiry{};  // while in backoffQ
  };
  struct ActiveOrder {
    const SchedulingQueue* queue;
    bool operator()(const Entry* a, const Entry* b) const;
  };
  struct BackoffOrder {
    bool operator()(const Entry* a, const Entry* b) const;
  };
  // A popped pod: what happened to it while it was being scheduled.
  struct InFlight {
    QueuedPod queued;
    framework::PodInfoPtr latest;  // the newest version update() saw
    bool updated = false;          // a change that may make it schedulable
    bool deleted = false;
  };

  std::optional<QueuedPod> popLocked();
  // add/update: records the version for an in-flight pod, else queues or replaces it.
  void upsertLocked(api::PodPtr pod);
  void removeLocked(const std::string& key);
  // Into entries_ and a queue; a non-empty event is reported to onIncoming.
  void insertLocked(std::unique_ptr<Entry> entry, Location where, std::string_view event);
  void attachLocked(Entry& entry, Location where, std::string_view event = {});
  void detachLocked(Entry& entry);  // out of its structure, still in entries_
  void requeueLocked(Entry& entry, std::string_view event);  // to retryLocation()
  // backoffQ while the pod's backoff runs, else activeQ.
  Location retryLocation(const QueuedPod& pod) const;
  util::Duration backoffDuration(int attempts) const;
  // Whether some plugin of some profile registered the event (upstream's isEventOfInterest).
  bool eventOfInterest(const ClusterEvent& event) const;
  // Whether the event may make the unschedulable pod schedulable (upstream's isPodWorthRequeuing).
  bool worthRequeuing(const QueuedPod& pod, const ClusterEvent& event,
                      const framework::EventObjects& objects) const;
  util::MonotonicTime backoffExpiry(const QueuedPod& pod) const;
  api::Timestamp queueTimestamp() const;

  const Less less_;
  util::Clock& clock_;
  const QueueOptions options_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  uint64_t next_seq_ = 0;
  int64_t scheduling_cycle_ = 0;
  int64_t move_request_cycle_ = -1;
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;  // every queued pod by key
  std::set<Entry*, ActiveOrder> active_;
  std::set<Entry*, BackoffOrder> backoff_;
  std::unordered_set<Entry*> unschedulable_;
  size_t gated_ = 0;
  std::unordered_map<std::string, InFlight> in_flight_;
};

}  // namespace berth::queue
