#include "pkg/informer/reflector.h"

#include <optional>
#include <string>
#include <utility>

#include "pkg/api/status.h"
#include "pkg/log/log.h"

namespace berth::informer {
namespace {

using client::ApiFailure;
using client::WatchEvent;

// A watch that ends this soon without an event is treated as a failure (client-go: "very short
// watch"), so a server that closes every watch at once is not hammered.
constexpr auto kShortWatch = std::chrono::seconds(1);

// The failure an ERROR event reports, read from its Status without copying or dumping it: the
// object came from a peer and may be deep.
ApiFailure errorEventFailure(const nlohmann::json& object) {
  ApiFailure f;
  if (std::optional<api::Status> status = api::decodeStatus(object)) {
    f.status = *std::move(status);
  } else if (const auto c = object.find("code"); c != object.end() && c->is_number_integer()) {
    f.status.code = c->get<int>();
  }
  if (f.status.code < 400) {
    f.status.code = 500;  // client-go: an ERROR without a usable Status is an internal error
  }
  if (f.status.message.empty()) {
    f.status.message = "watch ERROR event with code " + std::to_string(f.status.code);
  }
  return f;
}

}  // namespace

Reflector::Reflector(ListerWatcher& listerWatcher, ReflectorSink& sink, ReflectorOptions options)
    : lw_(listerWatcher),
      sink_(sink),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : util::realClock()),
      random_(options_.random ? *options_.random : util::defaultRandom()),
      backoff_(options_.backoff, clock_, random_) {}

std::string Reflector::lastSyncResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

void Reflector::setResourceVersion(std::string rv) {
  std::lock_guard<std::mutex> lock(mu_);
  resource_version_ = std::move(rv);
}

void Reflector::run(std::stop_token stop) {
  bool needList = true;
  while (!stop.stop_requested()) {
    if (needList) {
      if (!listAndReplace(stop)) {
        if (!clock_.sleepFor(backoff_.next(), stop)) {
          return;
        }
        continue;
      }
      needList = false;
    }
    WatchEnd end = watchOnce(stop);
    switch (end) {
      case WatchEnd::Stopped:
        return;
      case WatchEnd::Rewatch:
        break;
      case WatchEnd::Relist:
        needList = true;
        break;
      case WatchEnd::RelistAfterBackoff:
      case WatchEnd::RewatchAfterBackoff:
        needList = end == WatchEnd::RelistAfterBackoff;
        if (!clock_.sleepFor(backoff_.next(), stop)) {
          return;
        }
        break;
    }
  }
}

bool Reflector::listAndReplace(std::stop_token stop) {
  client::ListOptions options;
  options.limit = options_.pageSize;
  client::ApiResult<client::ObjectList> list = client::listAllPages(
      [&](const client::ListOptions& page) { return lw_.list(page, stop); }, options, stop);
  if (!list.ok()) {
    if (list.error().kind != ApiFailure::Kind::Cancelled) {
      // At the default verbosity on every failure, as client-go's reflector: an unreachable
      // server, a wrong CA or missing RBAC must show at once.
      log::error(list.error().toString(), "Failed to list", {{"resource", options_.name}});
    }
    return false;
  }
  log::info(4, "Listed",
            {{"resource", options_.name},
             {"items", list->items.size()},
             {"resourceVersion", list->resourceVersion}});
  setResourceVersion(list->resourceVersion);
  sink_.replace(std::move(list->items), list->resourceVersion);
  return true;
}

Reflector::WatchEnd Reflector::watchOnce(std::stop_token stop) {
  client::WatchOptions options;
  options.resourceVersion = lastSyncResourceVersion();
  options.allowWatchBookmarks = true;
  options.timeoutSeconds = static_cast<int64_t>(
      static_cast<double>(options_.minWatchTimeout.count()) * (1.0 + random_.uniform()));
  client::ApiResult<client::WatchStreamPtr> stream = lw_.watch(options, stop);
  if (!stream.ok()) {
    const ApiFailure& f = stream.error();
    if (f.kind == ApiFailure::Kind::Cancelled) {
      return WatchEnd::Stopped;
    }
    if (f.isGone()) {
      log::info(2, "Watch resourceVersion is too old, listing again",
                {{"resource", options_.name}, {"err", f.toString()}});
      return WatchEnd::Relist;
    }
    log::error(f.toString(), "Failed to watch", {{"resource", options_.name}});
    // client-go retries the watch itself when the server is merely unreachable or busy.
    return f.isTransient() ? WatchEnd::RewatchAfterBackoff : WatchEnd::RelistAfterBackoff;
  }
  return drain(**stream, stop);
}

Reflector::WatchEnd Reflector::drain(client::WatchStream& stream, std::stop_token stop) {
  const util::MonotonicTime started = clock_.monotonicNow();
  size_t events = 0;
  bool warnedUnknown = false;
  while (true) {
    client::ApiResult<std::optional<WatchEvent>> next = stream.next();
    if (stop.stop_requested()) {
      return WatchEnd::Stopped;
    }
    if (!next.ok()) {
      const ApiFailure& f = next.error();
      switch (f.kind) {
        case ApiFailure::Kind::Cancelled:
          return WatchEnd::Stopped;
        case ApiFailure::Kind::BadResponse:
          // After backoff: a server that keeps sending what berth cannot read must not get a
          // LIST per line.
          log::warning("Malformed watch event, listing again after backoff",
                       {{"resource", options_.name}, {"err", f.toString()}});
          return WatchEnd::RelistAfterBackoff;
        default:
          log::warning("Watch failed", {{"resource", options_.name}, {"err", f.toString()}});
          return WatchEnd::RewatchAfterBackoff;
      }
    }
    if (!next->has_value()) {
      if (events == 0 && clock_.monotonicNow() - started < kShortWatch) {
        log::info(4, "Watch closed at once without events", {{"resource", options_.name}});
        return WatchEnd::RewatchAfterBackoff;
      }
      log::info(4, "Watch closed", {{"resource", options_.name}, {"events", events}});
      return WatchEnd::Rewatch;
    }
    WatchEvent& event = **next;
    ++events;
    if (!event.unknownType.empty()) {
      // Skipped, as client-go's reflector; logged once per watch, not once per event.
      if (!warnedUnknown) {
        warnedUnknown = true;
        log::warning("Skipping watch events of an unknown type",
                     {{"resource", options_.name}, {"type", event.unknownType}});
      }
      continue;
    }
    switch (event.type) {
      case WatchEvent::Type::Error: {
        const ApiFailure f = errorEventFailure(event.object);
        if (f.isGone()) {
          log::info(2, "Watch resourceVersion is too old, listing again",
                    {{"resource", options_.name}, {"err", f.toString()}});
          return WatchEnd::Relist;
        }
        log::warning("Watch error event, listing again",
                     {{"resource", options_.name}, {"err", f.toString()}});
        return WatchEnd::RelistAfterBackoff;
      }
      case WatchEvent::Type::Bookmark:
        if (std::string rv = event.resourceVersion(); !rv.empty()) {
          setResourceVersion(std::move(rv));
        }
        break;
      default: {
        if (std::string rv = event.resourceVersion(); !rv.empty()) {
          setResourceVersion(std::move(rv));
        }
        sink_.apply(event);
      }
    }
  }
}

}  // namespace berth::informer
