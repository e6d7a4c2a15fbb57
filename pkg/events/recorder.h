#pragma once
// Recorder: writes Kubernetes Events about pods (Scheduled, FailedScheduling) the way client-go's
// events broadcaster does (tools/events), so `kubectl describe pod` and `kubectl events` read them
// as they read kube-scheduler's.
//
// Repeats are aggregated instead of flooding the API server: events with the same type, reason,
// action, reporter and regarding object (the note is not part of the key, as upstream) form a
// series. The first occurrence is created; the second patches in series {count: 2}; later ones
// only count locally until the series is refreshed (every 30 minutes) or finished (6 minutes after
// its last occurrence, writing the final count). Writes happen on the recorder's own thread, from a
// bounded queue that drops when full, so recording never blocks a scheduling cycle.
//
// Both APIs are served: events.k8s.io/v1 (preferred) and core/v1 for API servers without it. The
// recorder builds the objects and patches; a Sink sends them.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>

#include "pkg/api/event.h"
#include "pkg/api/types.h"
#include "pkg/util/clock.h"
#include "pkg/util/random.h"

namespace berth::events {

using ObjectReference = api::ObjectReference;

ObjectReference podReference(const api::Pod& pod);

enum class Api { EventsV1, CoreV1 };

// Sends event writes to the API server. Implementations map the API's answer onto an Outcome.
class Sink {
 public:
  enum class Outcome {
    Ok,
    NotFound,       // a patched event no longer exists (events expire after an hour): create it
    AlreadyExists,  // a created event exists already
    Rejected,       // any other API error: retrying the same write will not help
    Unavailable,    // no answer (connection error, 5xx, 429): retry later
  };
  virtual ~Sink() = default;
  // POST the event object in `ns`.
  virtual Outcome create(Api api, const std::string& ns, const nlohmann::json& event) = 0;
  // PATCH (strategic merge) the named event in `ns`.
  virtual Outcome patch(Api api, const std::string& ns, const std::string& name,
                        const nlohmann::json& patch) = 0;
};

struct RecorderOptions {
  Api api = Api::EventsV1;
  std::string reportingController = "berth";  // the scheduler name, as kube-scheduler reports
  std::string reportingInstance;              // "<controller>-<hostname>"
  size_t queueLimit = 1000;
  int maxTries = 12;
  std::chrono::milliseconds retryInterval{10000};  // jittered by 25%
  std::chrono::minutes finishAfter{6};
  std::chrono::minutes refreshEvery{30};
  // Stamps events, times finish/refresh and sleeps between retries; the random source jitters
  // the retries. Both default to the real ones and must outlive the recorder.
  util::Clock* clock = nullptr;
  util::Random* random = nullptr;
};

class Recorder {
 public:
  Recorder(Sink& sink, RecorderOptions options);
  ~Recorder();  // stops the writer thread; queued events are dropped
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Queues an event; never blocks. `type` is "Normal" or "Warning".
  void record(const ObjectReference& regarding, std::string type, std::string reason,
              std::string action, std::string note);
  // The same with a related object (a Preempted victim's preemptor).
  void record(const ObjectReference& regarding, const ObjectReference& related, std::string type,
              std::string reason, std::string action, std::string note);

  // Writes the final count of series whose last occurrence is older than finishAfter and forgets
  // them and old singletons; refreshSeries re-writes every open series. The writer thread calls
  // both on their periods; tests call them directly.
  void finishSeries();
  void refreshSeries();

  // Blocks until every queued event has been written (or given up); for tests and shutdown.
  void waitIdle();
  // Events dropped because the queue was full.
  uint64_t dropped() const;

 private:
  struct Pending {
    ObjectReference regarding;
    std::string type, reason, action, note;
    api::Timestamp time;
    std::optional<ObjectReference> related{};
  };
  using Key = std::tuple<std::string, std::string, std::string, ObjectReference,
                         std::optional<ObjectReference>>;
  void enqueue(Pending pending);
  // clang-tidy cannot see that nlohmann::json's move constructor never throws.
  // NOLINTNEXTLINE(bugprone-exception-escape)
  struct Cached {
    nlohmann::json event;  // as created (events.k8s.io/v1 or core/v1 form)
    int64_t count = 1;
    api::Timestamp first;
    api::Timestamp last;
    bool series() const { return count > 1; }
  };

  void writerLoop();
  void handle(const Pending& pending);
  nlohmann::json buildEvent(const Pending& pending) const;
  nlohmann::json seriesPatch(const Cached& cached) const;
  // Creates the event, or patches its series; true when done (written or abandoned).
  bool write(const Cached& cached);
  void writeWithRetries(const Cached& cached);

  Sink& sink_;
  RecorderOptions options_;
  util::Clock& clock_;
  util::Random& random_;
  std::stop_source stop_;  // cancels retry waits when the recorder is destroyed

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  uint64_t dropped_ = 0;

  std::map<Key, Cached> cache_;  // only the writer thread (or a test, with it idle) touches it
  std::mutex cache_mu_;
  std::thread writer_;
};

}  // namespace berth::events
