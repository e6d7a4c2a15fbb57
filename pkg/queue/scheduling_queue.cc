#include "pkg/queue/scheduling_queue.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "pkg/api/decode.h"

namespace berth::queue {
namespace {

std::string keyOf(const api::Pod& pod) { return api::podKey(pod); }

const nlohmann::json& field(const nlohmann::json& object, const char* name) {
  static const nlohmann::json kNull;
  auto it = object.find(name);
  return it == object.end() ? kNull : *it;
}

// Upstream's isPodUpdated: anything but status and bookkeeping metadata (resourceVersion,
// generation, managed fields) changed. Rare enough (updates of parked pods) to compare encodings.
bool isPodUpdated(const api::Pod& oldPod, const api::Pod& newPod) {
  if (oldPod.metadata.labels != newPod.metadata.labels ||
      oldPod.metadata.annotations != newPod.metadata.annotations) {
    return true;
  }
  return field(api::encodePod(oldPod), "spec") != field(api::encodePod(newPod), "spec");
}

}  // namespace

std::string_view locationName(Location location) {
  switch (location) {
    case Location::Active:
      return "active";
    case Location::Backoff:
      return "backoff";
    case Location::Unschedulable:
      return "unschedulable";
    case Location::Gated:
      return "gated";
    case Location::InFlight:
      return "in-flight";
  }
  return "unknown";
}

bool SchedulingQueue::ActiveOrder::operator()(const Entry* a, const Entry* b) const {
  if (queue->less_(a->queued.info, b->queued.info)) return true;
  if (queue->less_(b->queued.info, a->queued.info)) return false;
  return a->seq < b->seq;
}

bool SchedulingQueue::BackoffOrder::operator()(const Entry* a, const Entry* b) const {
  if (a->backoffExpiry != b->backoffExpiry) return a->backoffExpiry < b->backoffExpiry;
  return a->seq < b->seq;
}

SchedulingQueue::SchedulingQueue(Less less, util::Clock& clock, QueueOptions options)
    : less_(std::move(less)),
      clock_(clock),
      options_(std::move(options)),
      active_(ActiveOrder{this}) {}

// --- Pod events ----------------------------------------------------------------------------------

void SchedulingQueue::add(api::PodPtr pod) {
  if (!pod || api::isAssigned(*pod)) return;
  if (options_.nominator) options_.nominator->updateFromStatus(pod);
  std::lock_guard lock(mu_);
  upsertLocked(std::move(pod));
}

void SchedulingQueue::update(api::PodPtr newPod) {
  if (!newPod) return;
  if (Nominator* n = options_.nominator) {
    if (api::isAssigned(*newPod)) {
      n->remove(*newPod);
    } else {
      n->updateFromStatus(newPod);
    }
  }
  std::lock_guard lock(mu_);
  if (api::isAssigned(*newPod)) {
    removeLocked(keyOf(*newPod));
  } else {
    upsertLocked(std::move(newPod));
  }
}

void SchedulingQueue::remove(const api::Pod& pod) {
  if (options_.nominator) options_.nominator->remove(pod);
  std::lock_guard lock(mu_);
  removeLocked(keyOf(pod));
}

void SchedulingQueue::upsertLocked(api::PodPtr pod) {
  std::string key = keyOf(*pod);
  if (auto flying = in_flight_.find(key); flying != in_flight_.end() && !flying->second.deleted) {
    InFlight& f = flying->second;
    f.updated = f.updated || isPodUpdated(*f.latest->pod, *pod);
    f.latest = framework::makePodInfo(std::move(pod));
    return;
  }
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    auto entry = std::make_unique<Entry>();
    entry->queued.info.podInfo = framework::makePodInfo(std::move(pod));
    entry->queued.info.timestamp = queueTimestamp();
    entry->queued.initialEnqueue = entry->queued.enqueued = clock_.monotonicNow();
    const bool gated = !entry->queued.pod().spec.schedulingGates.empty();
    insertLocked(std::move(entry), gated ? Location::Gated : Location::Active, "PodAdd");
    return;
  }
  Entry& entry = *it->second;
  const bool changed = isPodUpdated(entry.queued.pod(), *pod);
  const bool ungated = entry.where == Location::Gated && pod->spec.schedulingGates.empty();
  // The sets order by the pod (its priority), so take the entry out before changing it.
  const Location where = entry.where;
  detachLocked(entry);
  entry.queued.info.podInfo = framework::makePodInfo(std::move(pod));
  if (ungated) {
    attachLocked(entry, Location::Active, "PodUpdate");
  } else if (where == Location::Unschedulable && changed) {
    attachLocked(entry, retryLocation(entry.queued), "PodUpdate");
  } else {
    attachLocked(entry, where);
  }
}

void SchedulingQueue::removeLocked(const std::string& key) {
  if (auto it = entries_.find(key); it != entries_.end()) {
    detachLocked(*it->second);
    entries_.erase(it);
  }
  if (auto flying = in_flight_.find(key); flying != in_flight_.end()) {
    flying->second.deleted = true;
  }
}

// --- Scheduling cycle ----------------------------------------------------------------------------

std::optional<QueuedPod> SchedulingQueue::pop() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return closed_ || !active_.empty(); });
  return popLocked();
}

std::optional<QueuedPod> SchedulingQueue::tryPop() {
  std::lock_guard lock(mu_);
  return popLocked();
}

std::optional<QueuedPod> SchedulingQueue::popLocked() {
  if (closed_ || active_.empty()) return std::nullopt;
  Entry* best = *active_.begin();
  std::string key = keyOf(best->queued.pod());
  auto it = entries_.find(key);
  detachLocked(*best);
  QueuedPod popped = std::move(best->queued);
  entries_.erase(it);
  popped.info.attempts++;
  popped.cycle = ++scheduling_cycle_;
  // A namesake deleted while in flight is replaced: its late failure will not match this uid.
  in_flight_[key] = InFlight{popped, popped.info.podInfo, false, false};
  return popped;
}

util::Result<void> SchedulingQueue::addUnschedulableIfNotPresent(const QueuedPod& pod,
                                                                 framework::Code code) {
  std::string key = keyOf(pod.pod());
  std::lock_guard lock(mu_);
  auto entry = std::make_unique<Entry>();
  entry->queued = pod;
  bool retry = code == framework::Code::Error || move_request_cycle_ >= pod.cycle;
  if (auto flying = in_flight_.find(key); flying != in_flight_.end()) {
    // A different uid: this attempt was for a deleted incarnation of a since recreated pod.
    if (flying->second.queued.pod().metadata.uid != pod.pod().metadata.uid) return {};
    const InFlight f = std::move(flying->second);
    in_flight_.erase(flying);
    if (f.deleted) return {};
    retry = retry || f.updated;
    entry->queued.info.podInfo = f.latest;
  }
  if (auto it = entries_.find(key); it != entries_.end()) {
    const char* queue = it->second->where == Location::Active    ? "the active queue"
                        : it->second->where == Location::Backoff ? "the backoff queue"
                                                                 : "unschedulable queue";
    return util::Error{util::ErrorCode::AlreadyExists,
                       "Pod " + key + " is already present in " + queue};
  }
  entry->queued.info.timestamp = queueTimestamp();
  entry->queued.enqueued = clock_.monotonicNow();
  Location where = retry ? retryLocation(entry->queued) : Location::Unschedulable;
  insertLocked(std::move(entry), where, "ScheduleAttemptFailure");
  return {};
}

void SchedulingQueue::done(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  auto flying = in_flight_.find(keyOf(pod));
  if (flying != in_flight_.end() && flying->second.queued.pod().metadata.uid == pod.metadata.uid) {
    in_flight_.erase(flying);
  }
}

// --- Moves ---------------------------------------------------------------------------------------

void SchedulingQueue::movePodsOnEvent(const ClusterEvent& event,
                                      const framework::EventObjects& objects,
                                      const PreEnqueueCheck& check) {
  if (!eventOfInterest(event)) return;
  std::lock_guard lock(mu_);
  // Pods popped up to now are being scheduled against a cluster without this change.
  move_request_cycle_ = scheduling_cycle_;
  std::vector<Entry*> moving;
  for (Entry* e : unschedulable_) {
    if ((!check || check(e->queued.pod())) && worthRequeuing(e->queued, event, objects)) {
      moving.push_back(e);
    }
  }
  for (Entry* e : moving) requeueLocked(*e, event.label);
}

void SchedulingQueue::flushBackoffQCompleted() {
  std::lock_guard lock(mu_);
  const auto now = clock_.monotonicNow();
  while (!backoff_.empty() && (*backoff_.begin())->backoffExpiry <= now) {
    Entry& e = **backoff_.begin();
    detachLocked(e);
    attachLocked(e, Location::Active, "BackoffComplete");
  }
}

void SchedulingQueue::flushUnschedulablePodsLeftover() {
  std::lock_guard lock(mu_);
  const auto now = clock_.monotonicNow();
  std::vector<Entry*> moving;
  for (Entry* e : unschedulable_) {
    if (now - e->queued.enqueued > options_.podMaxInUnschedulablePodsDuration) moving.push_back(e);
  }
  for (Entry* e : moving) {
    e->queued.flushedFromUnschedulable = true;
    requeueLocked(*e, "UnschedulableTimeout");
  }
}

void SchedulingQueue::activate(const api::Pod& pod) {
  const std::string key = keyOf(pod);
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    Entry& e = *it->second;
    if (e.where == Location::Unschedulable || e.where == Location::Backoff) {
      detachLocked(e);
      attachLocked(e, Location::Active, "Activate");
    }
  } else if (auto flying = in_flight_.find(key); flying != in_flight_.end()) {
    flying->second.updated = true;
  }
}

void SchedulingQueue::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

// --- Introspection -------------------------------------------------------------------------------

PendingPods SchedulingQueue::pendingPods() const {
  std::lock_guard lock(mu_);
  return PendingPods{active_.size(), backoff_.size(), unschedulable_.size(), gated_,
                     in_flight_.size()};
}

std::optional<Location> SchedulingQueue::locate(const api::Pod& pod) const {
  std::string key = keyOf(pod);
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) return it->second->where;
  if (auto flying = in_flight_.find(key); flying != in_flight_.end() && !flying->second.deleted) {
    return Location::InFlight;
  }
  return std::nullopt;
}

std::optional<QueuedPod> SchedulingQueue::get(const api::Pod& pod) const {
  std::string key = keyOf(pod);
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) return it->second->queued;
  if (auto flying = in_flight_.find(key); flying != in_flight_.end() && !flying->second.deleted) {
    return flying->second.queued;
  }
  return std::nullopt;
}

std::map<std::pair<std::string, std::string>, int64_t> SchedulingQueue::unschedulablePlugins()
    const {
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  std::lock_guard lock(mu_);
  for (const Entry* e : unschedulable_) {
    for (const std::string& plugin : e->queued.unschedulablePlugins) {
      ++counts[{plugin, e->queued.pod().spec.schedulerName}];
    }
  }
  return counts;
}

void SchedulingQueue::forEachRejected(
    const std::function<void(const api::Pod&, const std::set<std::string>&)>& fn) const {
  std::lock_guard lock(mu_);
  for (const auto& [key, e] : entries_) {
    if (!e->queued.unschedulablePlugins.empty())
      fn(e->queued.pod(), e->queued.unschedulablePlugins);
  }
  for (const auto& [key, f] : in_flight_) {
    if (f.deleted || f.queued.unschedulablePlugins.empty()) continue;
    fn(f.latest ? *f.latest->pod : f.queued.pod(), f.queued.unschedulablePlugins);
  }
}

int64_t SchedulingQueue::schedulingCycle() const {
  std::lock_guard lock(mu_);
  return scheduling_cycle_;
}

// --- Internals (mu_ held) ------------------------------------------------------------------------

void SchedulingQueue::insertLocked(std::unique_ptr<Entry> entry, Location where,
                                   std::string_view event) {
  Entry& e = *entry;
  entries_[keyOf(e.queued.pod())] = std::move(entry);
  attachLocked(e, where, event);
}

void SchedulingQueue::attachLocked(Entry& entry, Location where, std::string_view event) {
  entry.seq = next_seq_++;
  entry.where = where;
  if (!event.empty() && options_.onIncoming) options_.onIncoming(locationName(where), event);
  switch (where) {
    case Location::Active:
      active_.insert(&entry);
      cv_.notify_one();
      break;
    case Location::Backoff:
      entry.backoffExpiry = backoffExpiry(entry.queued);
      backoff_.insert(&entry);
      break;
    case Location::Unschedulable:
      unschedulable_.insert(&entry);
      break;
    case Location::Gated:
      gated_++;
      break;
    case Location::InFlight:
      break;  // in-flight pods live in in_flight_, not in entries_
  }
}

void SchedulingQueue::detachLocked(Entry& entry) {
  switch (entry.where) {
    case Location::Active:
      active_.erase(&entry);
      break;
    case Location::Backoff:
      backoff_.erase(&entry);
      break;
    case Location::Unschedulable:
      unschedulable_.erase(&entry);
      break;
    case Location::Gated:
      gated_--;
      break;
    case Location::InFlight:
      break;
  }
}

void SchedulingQueue::requeueLocked(Entry& entry, std::string_view event) {
  detachLocked(entry);
  attachLocked(entry, retryLocation(entry.queued), event);
}

Location SchedulingQueue::retryLocation(const QueuedPod& pod) const {
  return backoffExpiry(pod) > clock_.monotonicNow() ? Location::Backoff : Location::Active;
}

bool SchedulingQueue::eventOfInterest(const ClusterEvent& event) const {
  if (event.isWildCard()) return true;
  for (const auto& [profile, plugins] : options_.pluginEvents) {
    for (const auto& [plugin, registrations] : plugins) {
      for (const auto& r : registrations) {
        if (r.event.matches(event)) return true;
      }
    }
  }
  return false;
}

bool SchedulingQueue::worthRequeuing(const QueuedPod& pod, const ClusterEvent& event,
                                     const framework::EventObjects& objects) const {
  if (pod.unschedulablePlugins.empty() || event.isWildCard()) return true;
  auto profile = options_.pluginEvents.find(pod.pod().spec.schedulerName);
  if (profile == options_.pluginEvents.end()) return true;
  for (const std::string& plugin : pod.unschedulablePlugins) {
    auto registered = profile->second.find(plugin);
    // Not a plugin of the profile (a rejection the runtime reported for it): assume it may help.
    if (registered == profile->second.end()) return true;
    for (const auto& r : registered->second) {
      if (r.hint(event, pod.pod(), objects) == framework::QueueingHint::Queue) return true;
    }
  }
  return false;
}

util::Duration SchedulingQueue::backoffDuration(int attempts) const {
  if (attempts <= 0) return util::Duration::zero();
  util::Duration d = options_.podInitialBackoff;
  for (int i = 1; i < attempts && d < options_.podMaxBackoff; i++) d *= 2;
  return std::min(d, options_.podMaxBackoff);
}

util::MonotonicTime SchedulingQueue::backoffExpiry(const QueuedPod& pod) const {
  return pod.enqueued + backoffDuration(pod.info.attempts);
}

api::Timestamp SchedulingQueue::queueTimestamp() const {
  return api::toTimestamp(clock_.systemNow());
}

}  // namespace berth::queue
