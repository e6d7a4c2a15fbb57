// Watches: the per-reader queues, the history they replay from, the events each watcher sees,
// and bookmarks.

#include "pkg/apiserver/object_meta.h"
#include "pkg/apiserver/store.h"
#include "pkg/util/quote.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;

}  // namespace

std::string_view WatchEvent::typeName() const { return api::watchEventTypeName(type); }

json WatchEvent::toJson() const { return {{"type", typeName()}, {"object", object}}; }

std::optional<WatchEvent> Watch::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || closed_; });
  if (queue_.empty()) {
    return std::nullopt;
  }
  WatchEvent event = std::move(queue_.front());
  queue_.pop_front();
  return event;
}

std::vector<WatchEvent> Watch::drain() {
  std::lock_guard lock(mu_);
  std::vector<WatchEvent> out(std::make_move_iterator(queue_.begin()),
                              std::make_move_iterator(queue_.end()));
  queue_.clear();
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

bool Watch::push(WatchEvent event) {
  {
    std::lock_guard lock(mu_);
    if (closed_) {
      return false;
    }
    if (queue_.size() >= limit_) {
      closed_ = true;
    } else {
      queue_.push_back(std::move(event));
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

  std::lock_guard lock(mu_);
  Table& t = table(resource);
  if (!from) {
    // "Any" resourceVersion: the current state as synthetic ADDED events.
    for (const auto& [key, object] : t.objects) {
      HistoryEntry entry{0, WatchEvent::Type::Added, object, std::nullopt};
      if (auto event = eventFor(resource, watcher, entry)) {
        watch->push(std::move(*event));
      }
    }
  } else {
    if (*from < t.oldest - 1) {
      return apiError(410, "Expired",
                      "too old resource version: " + std::to_string(*from) + " (" +
                          std::to_string(t.oldest - 1) + ")");
    }
    for (const HistoryEntry& entry : t.history) {
      if (entry.rv <= *from) {
        continue;
      }
      if (auto event = eventFor(resource, watcher, entry)) {
        watch->push(std::move(*event));
      }
    }
  }
  t.watchers.push_back(std::move(watcher));
  return watch;
}

std::optional<WatchEvent> Store::eventFor(Resource resource, const Watcher& watcher,
                                          const HistoryEntry& entry) const {
  auto passes = [&](const json& object) {
    if (!watcher.ns.empty() && stringAt(object, {"metadata", "namespace"}) != watcher.ns) {
      return false;
    }
    return watcher.labels.matches(labelsOf(object)) && watcher.fields.matches(resource, object);
  };
  const bool current = entry.type != WatchEvent::Type::Deleted && passes(entry.object);
  const bool previous = entry.previous && passes(*entry.previous);
  if (current && !previous) {
    return WatchEvent{WatchEvent::Type::Added, entry.object};
  }
  if (current && previous) {
    return WatchEvent{WatchEvent::Type::Modified, entry.object};
  }
  if (previous) {
    // Leaving the selection (or deleted): the previous content at the event's resourceVersion.
    WatchEvent event{WatchEvent::Type::Deleted, *entry.previous};
    setVersion(event.object, entry.rv);
    return event;
  }
  return std::nullopt;
}

void Store::publish(Resource resource, HistoryEntry entry) {
  Table& t = table(resource);
  t.history.push_back(std::move(entry));
  if (t.history.size() > options_.historySize) {
    t.history.pop_front();
    t.oldest = t.history.front().rv;
  }
  const HistoryEntry& last = t.history.back();
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
    json object = {{"kind", info.kind},
                   {"apiVersion", info.apiVersion()},
                   {"metadata", {{"resourceVersion", std::to_string(rv_)}}}};
    for (const Watcher& w : tables_[i].watchers) {
      if (WatchPtr watch = w.watch.lock(); watch && w.bookmarks) {
        watch->push(WatchEvent{WatchEvent::Type::Bookmark, object});
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
