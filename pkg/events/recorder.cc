#include "pkg/events/recorder.h"

#include <cstdio>
#include <utility>

#include "pkg/api/time.h"
#include "pkg/log/log.h"

namespace berth::events {
namespace {

using json = nlohmann::json;

// events.k8s.io/v1 validation rejects a note longer than 1 kB; kube-scheduler truncates it.
constexpr size_t kNoteLengthLimit = 1024;

std::string truncateNote(std::string note) {
  if (note.size() <= kNoteLengthLimit) return note;
  constexpr std::string_view kSuffix = " ...";
  size_t cut = kNoteLengthLimit - kSuffix.size();
  while (cut > 0 && (static_cast<unsigned char>(note[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  note.resize(cut);
  note += kSuffix;
  return note;
}

}  // namespace

ObjectReference podReference(const api::Pod& pod) {
  return ObjectReference{"Pod",
                         "v1",
                         pod.metadata.namespace_,
                         pod.metadata.name,
                         pod.metadata.uid,
                         pod.metadata.resourceVersion};
}

Recorder::Recorder(Sink& sink, RecorderOptions options)
    : sink_(sink),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : util::realClock()),
      random_(options_.random ? *options_.random : util::defaultRandom()) {
  if (options_.reportingInstance.empty()) options_.reportingInstance = options_.reportingController;
  writer_ = std::thread([this] { writerLoop(); });
}

Recorder::~Recorder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_.request_stop();
  cv_.notify_all();
  writer_.join();
}

void Recorder::record(const ObjectReference& regarding, std::string type, std::string reason,
                      std::string action, std::string note) {
  enqueue(Pending{regarding, std::move(type), std::move(reason), std::move(action),
                  truncateNote(std::move(note)), api::toTimestamp(clock_.systemNow())});
}

void Recorder::record(const ObjectReference& regarding, const ObjectReference& related,
                      std::string type, std::string reason, std::string action, std::string note) {
  enqueue(Pending{regarding, std::move(type), std::move(reason), std::move(action),
                  truncateNote(std::move(note)), api::toTimestamp(clock_.systemNow()), related});
}

void Recorder::enqueue(Pending pending) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= options_.queueLimit) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(pending));
  }
  cv_.notify_all();
}

uint64_t Recorder::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void Recorder::waitIdle() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stopping_ || (queue_.empty() && !busy_); });
}

void Recorder::writerLoop() {
  util::MonotonicTime nextFinish = clock_.monotonicNow() + options_.finishAfter;
  util::MonotonicTime nextRefresh = clock_.monotonicNow() + options_.refreshEvery;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      // A relative wait: the deadlines are on the injected clock, which need not be steady_clock.
      cv_.wait_for(lock, std::min(nextFinish, nextRefresh) - clock_.monotonicNow(),
                   [&] { return stopping_ || !queue_.empty(); });
    }
    if (stopping_) break;
    std::optional<Pending> pending;
    if (!queue_.empty()) {
      pending = std::move(queue_.front());
      queue_.pop_front();
    }
    busy_ = true;
    lock.unlock();
    if (pending) handle(*pending);
    const util::MonotonicTime now = clock_.monotonicNow();
    if (now >= nextFinish) {
      finishSeries();
      nextFinish = now + options_.finishAfter;
    }
    if (now >= nextRefresh) {
      refreshSeries();
      nextRefresh = now + options_.refreshEvery;
    }
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

void Recorder::handle(const Pending& pending) {
  const Cached* toWrite = nullptr;
  {
    std::lock_guard lock(cache_mu_);
    Key key{pending.type, pending.reason, pending.action, pending.regarding, pending.related};
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      it =
          cache_.emplace(std::move(key), Cached{buildEvent(pending), 1, pending.time, pending.time})
              .first;
    } else {
      ++it->second.count;
      it->second.last = pending.time;
      // Only the second occurrence is written at once; later ones wait for refresh or finish.
      if (it->second.count > 2) return;
    }
    toWrite = &it->second;
  }
  // Written in place, not copied: only this thread changes the cache.
  writeWithRetries(*toWrite);
}

json Recorder::buildEvent(const Pending& p) const {
  std::string ns = p.regarding.namespace_.empty() ? "default" : p.regarding.namespace_;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%llx",
                static_cast<unsigned long long>(p.time.micros) * 1000ULL);
  const api::Event event{.name = p.regarding.name + suffix,
                         .namespace_ = std::move(ns),
                         .time = p.time,
                         .reportingController = options_.reportingController,
                         .reportingInstance = options_.reportingInstance,
                         .action = p.action,
                         .reason = p.reason,
                         .regarding = p.regarding,
                         .note = p.note,
                         .type = p.type,
                         .related = p.related};
  return options_.api == Api::EventsV1 ? api::encodeEvent(event) : api::encodeCoreV1Event(event);
}

json Recorder::seriesPatch(const Cached& cached) const {
  if (options_.api == Api::EventsV1) {
    return {
        {"series",
         {{"count", cached.count}, {"lastObservedTime", api::formatMicroTimestamp(cached.last)}}}};
  }
  return {{"count", cached.count}, {"lastTimestamp", api::formatTimestamp(cached.last)}};
}

bool Recorder::write(const Cached& cached) {
  const json& event = cached.event;
  const std::string& ns = event["metadata"]["namespace"].get_ref<const std::string&>();
  Sink::Outcome outcome = Sink::Outcome::NotFound;
  if (cached.series()) {
    const std::string& name = event["metadata"]["name"].get_ref<const std::string&>();
    outcome = sink_.patch(options_.api, ns, name, seriesPatch(cached));
  }
  if (outcome == Sink::Outcome::NotFound) {
    // A new event, or a series whose event expired on the server: create it with the count.
    if (cached.series()) {
      json created = event;
      created.merge_patch(seriesPatch(cached));
      outcome = sink_.create(options_.api, ns, created);
    } else {
      outcome = sink_.create(options_.api, ns, event);
    }
    // A series whose create raced with the first occurrence's create: patch again.
    if (outcome == Sink::Outcome::AlreadyExists && cached.series()) return false;
  }
  switch (outcome) {
    case Sink::Outcome::Ok:
    case Sink::Outcome::AlreadyExists:
      return true;
    case Sink::Outcome::Rejected:
    case Sink::Outcome::NotFound:
      log::error("rejected", "Server rejected event (will not retry!)",
                 {{"event", log::ref(ns, event["metadata"]["name"].get<std::string>())},
                  {"reason", event["reason"]}});
      return true;
    default:
      return false;
  }
}

void Recorder::writeWithRetries(const Cached& cached) {
  for (int tries = 1;; ++tries) {
    if (write(cached)) return;
    if (tries >= options_.maxTries) {
      log::error("retry limit exceeded", "Unable to write event (retry limit exceeded!)",
                 {{"event", cached.event["metadata"]["name"]}});
      return;
    }
    const double jitter = 1.0 + 0.25 * random_.uniform();
    auto wait = std::chrono::milliseconds(
        static_cast<int64_t>(static_cast<double>(options_.retryInterval.count()) * jitter));
    if (!clock_.sleepFor(wait, stop_.get_token())) return;
  }
}

void Recorder::finishSeries() {
  auto cutoff = api::Timestamp{
      api::toTimestamp(clock_.systemNow()).micros -
      std::chrono::duration_cast<std::chrono::microseconds>(options_.finishAfter).count()};
  std::vector<Cached> finals;
  {
    std::lock_guard lock(cache_mu_);
    for (auto it = cache_.begin(); it != cache_.end();) {
      if (it->second.last < cutoff) {
        if (it->second.series()) finals.push_back(std::move(it->second));
        it = cache_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const Cached& cached : finals) writeWithRetries(cached);
}

void Recorder::refreshSeries() {
  std::vector<Cached> open;
  {
    std::lock_guard lock(cache_mu_);
    for (const auto& [key, cached] : cache_) {
      if (cached.series()) open.push_back(cached);
    }
  }
  for (const Cached& cached : open) writeWithRetries(cached);
}

}  // namespace berth::events
