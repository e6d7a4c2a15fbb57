#pragma once
// Reflector: keeps a sink in step with one resource on the API server, as client-go's
// cache.Reflector. It LISTs (by pages) and hands the sink the whole set, then WATCHes from the
// list's resourceVersion with bookmarks and hands the sink each change:
//  - a watch that ends normally (timeoutSeconds, server restart of the stream) is reopened from
//    the last resourceVersion seen, bookmarks included, so nothing is missed or repeated;
//  - 410 Gone (as the watch's HTTP answer or an ERROR event) leads to a new LIST at once, which
//    the sink reconciles; any other ERROR event and a watch line that is not a JSON event lead to
//    one after backoff, so a server that keeps sending them is not listed in a loop;
//  - events of an unknown type are skipped (logged once per watch), as client-go does;
//  - an unreachable or failing server is retried with jittered exponential backoff (800 ms
//    doubling to 30 s, as client-go), re-watching from the same resourceVersion when only the
//    watch failed to open.
// run() blocks on the caller's thread until the stop token is requested; the sink is called on
// that thread only.

#include <mutex>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <vector>

#include "pkg/client/backoff.h"
#include "pkg/client/request.h"
#include "pkg/informer/lister_watcher.h"
#include "pkg/util/clock.h"
#include "pkg/util/random.h"

namespace berth::informer {

class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // The complete current set, from a LIST at `resourceVersion`.
  virtual void replace(std::vector<nlohmann::json> items, const std::string& resourceVersion) = 0;
  // One ADDED, MODIFIED or DELETED event (bookmarks and errors are the reflector's business).
  virtual void apply(const client::WatchEvent& event) = 0;
};

struct ReflectorOptions {
  std::string name = "objects";  // for logs: "pods", "nodes"
  int64_t pageSize = client::kDefaultPageSize;
  client::BackoffOptions backoff{};  // client-go's 800 ms .. 30 s, jitter 1.0
  // Each watch asks the server to end it after a random time in [min, 2*min), as client-go, so
  // that informers do not all reconnect together.
  std::chrono::seconds minWatchTimeout = std::chrono::minutes(5);
  // Measures watches and sleeps the backoff waits; the random source jitters backoff and watch
  // timeouts. Both default to the real ones and must outlive the reflector.
  util::Clock* clock = nullptr;
  util::Random* random = nullptr;
};

class Reflector {
 public:
  Reflector(ListerWatcher& listerWatcher, ReflectorSink& sink, ReflectorOptions options = {});

  void run(std::stop_token stop);

  // The resourceVersion of the last list, event or bookmark handed over ("" before the first).
  std::string lastSyncResourceVersion() const;

 private:
  enum class WatchEnd { Rewatch, RewatchAfterBackoff, Relist, RelistAfterBackoff, Stopped };

  // Lists everything and hands it to the sink; false on failure.
  bool listAndReplace(std::stop_token stop);
  // Opens one watch and drains it into the sink.
  WatchEnd watchOnce(std::stop_token stop);
  WatchEnd drain(client::WatchStream& stream, std::stop_token stop);
  void setResourceVersion(std::string rv);

  ListerWatcher& lw_;
  ReflectorSink& sink_;
  ReflectorOptions options_;
  util::Clock& clock_;
  util::Random& random_;
  client::Backoff backoff_;
  mutable std::mutex mu_;
  std::string resource_version_;
};

}  // namespace berth::informer
