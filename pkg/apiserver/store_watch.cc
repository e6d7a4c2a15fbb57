// Watches: the per-reader queues, the history they replay from, the events each watcher sees,
// and bookmarks.

#include "pkg/apiserver/http_handler.h"
#include "pkg/apiserver/object_meta.h"
#include "pkg/apiserver/store.h"
#include "pkg/util/quote.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

WatchEvent copyOf(const SharedWatchEvent& event) { return {event.type, *event.object}; }

}  // namespace

std::string SharedWatchEvent::line() const {
  // The bytes toJsonText(toJson()) writes (nlohmann orders keys), without copying the object.
  return R"({"object":)" + toJsonText(*object) + R"(,"type":")" +
         std::string(api::watchEventTypeName(type)) + "\"}";
}

std::string_view WatchEvent::typeName() const { return api::watchEventTypeName(type); }

json WatchEvent::toJson() const { return {{"type", typeName()}, {"object", object}}; }

std::optional<SharedWatchEvent> Watch::nextShared(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || closed_; });
  if (queue_.empty()) {
    return std::nullopt;
  }
  SharedWatchEvent event = std::move(queue_.front());
  queue_.pop_front();
  initial_ -= initial_ > 0 ? 1 : 0;
  return event;
}

std::vector<SharedWatchEvent> Watch::drainShared() {
  std::lock_guard lock(mu_);
  std::vector<SharedWatchEvent> out(std::make_move_iterator(queue_.begin()),
                                    std::make_move_iterator(queue_.end()));
  queue_.clear();
  initial_ = 0;
  return out;
}

std::optional<WatchEvent> Watch::next(std::chrono::milliseconds timeout) {
  std::optional<SharedWatchEvent> event = nextShared(timeout);
  return event ? std::optional<WatchEvent>(copyOf(*event)) : std::nullopt;
}

std::vector<WatchEvent> Watch::drain() {
  std::vector<WatchEvent> out;
  for (const SharedWatchEvent& event : drainShared()) out.push_back(copyOf(event));
  return out;
}

bool Watch::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

void Watch::stop() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool Watch::push(SharedWatchEvent event, bool initial) {
  {
    std::lock_guard lock(mu_);
    if (closed_) {
      return false;
    }
    if (!initial && queue_.size() - initial_ >= limit_) {
      closed_ = true;
    } else {
      queue_.push_back(std::move(event));
      initial_ += initial ? 1 : 0;
    }
  }
  cv_.notify_all();
  return !closed();
}

ApiResult<WatchPtr> Store::watch(Resource resource, std::string_view ns,
                                 const WatchOptions& options) {
  auto selector = labels::Selector::parse(options.labelSelector);
  if (!selector) {
    return badRequest(selector.error().message);
  }
  auto fields = FieldSelector::parse(resource, options.fieldSelector);
  if (!fields) {
    return fields.error();
  }
  std::optional<uint64_t> from;
  if (!options.resourceVersion.empty() && options.resourceVersion != "0") {
    from = parseVersion(options.resourceVersion);
    if (!from) {
      return badRequest("invalid resource version: " + util::quoteGo(options.resourceVersion));
    }
  }
  Watcher watcher{{},
                  resourceInfo(resource).namespaced ? std::string(ns) : "",
                  std::move(*selector),
                  std::move(*fields),
                  options.allowWatchBookmarks};
  auto watch = std::make_shared<Watch>(options_.watchQueueLimit);
  watcher.watch = watch;

  std::unique_lock lock(mu_);
  if (from && *from > rv_) {
    if (auto error = waitUntilFresh(lock, *from)) {
      return *error;
    }
  }
  Table& t = table(resource);
  if (!from) {
    // "Any" resourceVersion: the current state as synthetic ADDED events.
    for (const auto& [key, object] : t.objects) {
      Recorded entry{0, WatchEvent::Type::Added, std::make_shared<const json>(object), nullptr,
                     nullptr};
      if (auto event = eventFor(resource, watcher, entry)) {
        watch->push(std::move(*event), /*initial=*/true);
      }
    }
  } else {
    if (*from < t.oldest - 1) {
      return apiError(410, "Expired",
                      "too old resource version: " + std::to_string(*from) + " (" +
                          std::to_string(t.oldest - 1) + ")");
    }
    for (const Recorded& entry : t.history) {
      if (entry.rv <= *from) {
        continue;
      }
      if (auto event = eventFor(resource, watcher, entry)) {
        watch->push(std::move(*event), /*initial=*/true);
      }
    }
  }
  t.watchers.push_back(std::move(watcher));
  return watch;
}

std::optional<ApiError> Store::waitUntilFresh(std::unique_lock<std::mutex>& lock,
                                              uint64_t rv) const {
  written_.wait_for(lock, options_.freshnessTimeout, [&] { return rv_ >= rv; });
  if (rv_ >= rv) {
    return std::nullopt;
  }
  return tooLargeResourceVersion(rv, rv_);
}

std::optional<SharedWatchEvent> Store::eventFor(Resource resource, const Watcher& watcher,
                                                const Recorded& entry) const {
  auto passes = [&](const json& object) {
    if (!watcher.ns.empty() && stringAt(object, {"metadata", "namespace"}) != watcher.ns) {
      return false;
    }
    return watcher.labels.matches(labelsOf(object)) && watcher.fields.matches(resource, object);
  };
  const bool current = entry.type != WatchEvent::Type::Deleted && passes(*entry.object);
  const bool previous = entry.previous && passes(*entry.previous);
  if (current && !previous) {
    return SharedWatchEvent{WatchEvent::Type::Added, entry.object};
  }
  if (current && previous) {
    return SharedWatchEvent{WatchEvent::Type::Modified, entry.object};
  }
  if (previous) {
    // Leaving the selection (or deleted): the previous content at the event's resourceVersion,
    // which a deletion records as its object.
    if (!entry.left) {
      if (entry.type == WatchEvent::Type::Deleted) {
        entry.left = entry.object;
      } else {
        json left = *entry.previous;
        setVersion(left, entry.rv);
        entry.left = std::make_shared<const json>(std::move(left));
      }
    }
    return SharedWatchEvent{WatchEvent::Type::Deleted, entry.left};
  }
  return std::nullopt;
}

void Store::publish(Resource resource, HistoryEntry entry) {
  Table& t = table(resource);
  t.history.push_back(
      Recorded{entry.rv, entry.type, std::make_shared<const json>(std::move(entry.object)),
               entry.previous ? std::make_shared<const json>(std::move(*entry.previous)) : nullptr,
               nullptr});
  if (t.history.size() > options_.historySize) {
    t.history.pop_front();
    t.oldest = t.history.front().rv;
  }
  written_.notify_all();
  const Recorded& last = t.history.back();
  std::erase_if(t.watchers, [&](const Watcher& w) {
    WatchPtr watch = w.watch.lock();
    if (!watch || watch->closed()) {
      return true;
    }
    auto event = eventFor(resource, w, last);
    return event && !watch->push(std::move(*event));
  });
}

void Store::sendBookmarks() {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < std::size(tables_); ++i) {
    const ResourceInfo& info = resourceInfo(static_cast<Resource>(i));
    auto object = std::make_shared<const json>(
        json{{"kind", info.kind},
             {"apiVersion", info.apiVersion()},
             {"metadata", {{"resourceVersion", std::to_string(rv_)}}}});
    for (const Watcher& w : tables_[i].watchers) {
      if (WatchPtr watch = w.watch.lock(); watch && w.bookmarks) {
        watch->push(SharedWatchEvent{WatchEvent::Type::Bookmark, object});
      }
    }
  }
}

void Store::closeWatches() {
  std::lock_guard lock(mu_);
  for (Table& t : tables_) {
    for (const Watcher& w : t.watchers) {
      if (WatchPtr watch = w.watch.lock()) {
        watch->stop();
      }
    }
    t.watchers.clear();
  }
}

void Store::expireHistory() {
  std::lock_guard lock(mu_);
  for (Table& t : tables_) {
    t.history.clear();
    t.oldest = rv_ + 1;
  }
}

}  // namespace berth::apiserver
