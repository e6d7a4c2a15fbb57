#pragma once
// The embedded API server's object store: what kube-apiserver's registry, storage and watch cache
// do for the resources a scheduler uses, in memory and with no I/O. Objects are held in their wire
// form (JSON), keyed by (resource, namespace, name), and versioned by one global resourceVersion
// counter, as etcd's revision is. Every error is an ApiError that renders as the Status object
// kube-apiserver writes, so an HTTP layer maps verbs and paths onto these calls and writes what
// they return. Thread-safe: every call takes the store's one mutex; watch queues have their own
// lock so that a reader blocking on a watch never holds the store.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "pkg/api/meta.h"
#include "pkg/api/types.h"
#include "pkg/apiserver/api_error.h"
#include "pkg/apiserver/field_selector.h"
#include "pkg/apiserver/resource_info.h"
#include "pkg/labels/selector.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace berth::apiserver {

// list() reads labelSelector, fieldSelector, limit and continue; watch() reads the selectors, the
// resourceVersion and allowWatchBookmarks (the HTTP layer applies timeoutSeconds).
using ListOptions = api::ListOptions;
using WatchOptions = api::WatchOptions;

struct ListResult {
  std::vector<nlohmann::json> items;  // sorted by namespace, then name (etcd key order)
  std::string resourceVersion{};      // the store's resourceVersion when listed (first page's)
  // Set when more items follow: opaque base64 of {"v":"meta.k8s.io/v1","rv":N,"start":KEY}.
  std::string continueToken{};
  // With a continue token and no selectors: how many items the later pages hold.
  std::optional<int64_t> remainingItemCount{};
  // The wire form: {"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":..,
  // "continue":..,"remainingItemCount":..},"items":[..]} (continue and remainingItemCount only when
  // set).
  nlohmann::json toJson(Resource resource) const;
};

using PatchType = api::PatchType;

// ?resourceVersionMatch= of a list: at least as new as the resourceVersion, or exactly it.
enum class VersionMatch { NotOlderThan, Exact };

// One watch event. `object` carries metadata.resourceVersion; an ERROR event carries a Status.
struct WatchEvent {
  using Type = api::WatchEventType;
  Type type = Type::Added;
  nlohmann::json object;

  std::string_view typeName() const;  // "ADDED", ...
  // {"type":"ADDED","object":{...}}: one line of a watch stream.
  nlohmann::json toJson() const;
};

// A watch event as the store queues it: every watcher that sees one write holds the same
// immutable object, so a watcher that falls behind costs a pointer per event, not a copy.
struct SharedWatchEvent {
  WatchEvent::Type type = WatchEvent::Type::Added;
  std::shared_ptr<const nlohmann::json> object;

  // {"object":{...},"type":"ADDED"}: one line of a watch stream, without the newline.
  std::string line() const;
};

// An open watch: a queue the store fills and one reader drains. Stopping it (or the store closing
// it) ends the stream; the store then forgets it.
class Watch {
 public:
  explicit Watch(size_t limit) : limit_(limit) {}

  // The next event, waiting up to `timeout`; nullopt on timeout or once the watch is closed and
  // drained. A copy, for readers in this process.
  std::optional<WatchEvent> next(std::chrono::milliseconds timeout);
  // Every queued event, without waiting (copies).
  std::vector<WatchEvent> drain();
  // next() and drain() without copies: the objects the store shares (the HTTP server's path).
  std::optional<SharedWatchEvent> nextShared(std::chrono::milliseconds timeout);
  std::vector<SharedWatchEvent> drainShared();
  bool closed() const;
  void stop();

 private:
  friend class Store;
  // Queues an event; false (and closes the watch) when the reader is `limit_` events behind, as
  // the apiserver's cacher ends a watcher that cannot keep up. The events of the initial replay
  // (the state or the history a watch starts from) do not count: the cacher sends those apart.
  bool push(SharedWatchEvent event, bool initial = false);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SharedWatchEvent> queue_;
  size_t initial_ = 0;  // how many of the queue's first events are the initial replay's
  size_t limit_;
  bool closed_ = false;
};
using WatchPtr = std::shared_ptr<Watch>;

using Preconditions = api::Preconditions;

struct StoreOptions {
  size_t historySize = 1000;  // watch events kept per resource for replay (the watch cache)
  // Events a watcher may fall behind before it is closed, as kube-apiserver's cacher closes one
  // that cannot keep up (the initial replay does not count). Each queued event is a pointer to the
  // object every watcher shares; the bound is high because the store's own tests and benchmarks
  // write faster than a loaded reader drains.
  size_t watchQueueLimit = 1 << 20;
  // How long a watch or list from a resourceVersion the store has not reached waits for it
  // before it fails with "Too large resource version" (the watch cache's blockTimeout).
  std::chrono::milliseconds freshnessTimeout{3000};
  util::Clock* clock = nullptr;         // default: the real clock; must outlive the store
  std::function<std::string()> newUid;  // default: random RFC 4122 v4 UIDs
};

class Store {
 public:
  explicit Store(StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // POST. `ns` is the request's namespace (ignored for cluster-scoped resources); the object's own
  // metadata.namespace must be empty or equal to it. Assigns uid, creationTimestamp and
  // resourceVersion (generateName too), then applies the kind's strategy (prepareForCreate in
  // strategy.h: pods start Pending with the default scheduler...). 409 AlreadyExists.
  ApiResult<nlohmann::json> create(Resource resource, std::string_view ns, nlohmann::json object);
  // GET. 404 NotFound.
  ApiResult<nlohmann::json> get(Resource resource, std::string_view ns,
                                std::string_view name) const;
  // PUT. An empty metadata.resourceVersion updates unconditionally; a stale one is 409 Conflict.
  // uid and creationTimestamp stay; every kind with a status subresource keeps its status (use
  // updateStatus), a namespace its finalizers (prepareForUpdate in strategy.h). An update
  // that changes nothing keeps the resourceVersion and sends no watch event, as etcd3 storage.
  ApiResult<nlohmann::json> update(Resource resource, std::string_view ns, std::string_view name,
                                   nlohmann::json object);
  // PUT .../status: only the status of `object` is taken; same concurrency rules as update.
  ApiResult<nlohmann::json> updateStatus(Resource resource, std::string_view ns,
                                         std::string_view name, nlohmann::json object);
  // PATCH (and PATCH .../status with statusOnly). The patch is applied to the current object and
  // the result written as update() (or updateStatus()) writes it: a main-resource patch cannot
  // change the status of a kind with a status subresource, a status patch changes only the status.
  // A metadata.resourceVersion in the result that differs from the current one is 409 Conflict; a
  // patch that changes nothing keeps the resourceVersion and sends no watch event. 404 NotFound; a
  // malformed patch is 400 BadRequest, one that cannot be applied (a failed JSON patch test, a
  // missing path) or whose result no longer decodes as the resource is 422 Invalid.
  ApiResult<nlohmann::json> patch(Resource resource, std::string_view ns, std::string_view name,
                                  PatchType type, const nlohmann::json& patch,
                                  bool statusOnly = false);
  // DELETE (a namespace's objects stay). Returns the object as it was. 403 Forbidden for the
  // namespaces admission protects (isImmortalNamespace). A pod bound to a node and not finished is
  // deleted gracefully, as kube-apiserver does: it gets metadata.deletionTimestamp (now + the grace
  // period: `gracePeriodSeconds`, else its spec.terminationGracePeriodSeconds, else 30) and
  // deletionGracePeriodSeconds, and stays until its kubelet confirms, which here is
  // finalizeGracefulDeletions; a DELETE of a terminating pod may only shorten its period. Any
  // other pod, and a grace period of 0, is deleted at once.
  ApiResult<nlohmann::json> remove(Resource resource, std::string_view ns, std::string_view name,
                                   const Preconditions& preconditions = {},
                                   std::optional<int64_t> gracePeriodSeconds = std::nullopt);
  // The kubelet's part of a graceful deletion: removes every terminating pod whose grace period is
  // over, or (with `bound`) whose deletion began at least `bound` ago. Returns how many. Nothing
  // calls it unless a KubeletStandIn (kubelet_stand_in.h) runs.
  size_t finalizeGracefulDeletions(std::optional<util::Duration> bound = std::nullopt);
  // LIST. An empty `ns` lists every namespace. A resourceVersion of "" or "0" lists the current
  // state; N lists at least as new as N (resourceVersionMatch NotOlderThan: the current state,
  // once the store reaches N within freshnessTimeout, else 504 Timeout "Too large resource
  // version") or, with resourceVersionMatch Exact, the state at N (410 Expired beyond the
  // history).
  ApiResult<ListResult> list(Resource resource, std::string_view ns,
                             const ListOptions& options = {},
                             VersionMatch match = VersionMatch::NotOlderThan) const;
  // WATCH. An empty `ns` watches every namespace. 410 Expired for a resourceVersion older than
  // the history; 400 BadRequest for a malformed one or a bad selector; for one the store has not
  // reached after freshnessTimeout, 504 Timeout "Too large resource version" (the HTTP layer
  // sends both as an ERROR event).
  ApiResult<WatchPtr> watch(Resource resource, std::string_view ns, const WatchOptions& options);

  // POST pods/NAME/binding with a v1 Binding: sets spec.nodeName, merges metadata.annotations and
  // sets condition PodScheduled=True. Binding metadata.uid/resourceVersion are preconditions.
  // Returns the bound pod's resourceVersion (the HTTP layer answers successStatus(201)).
  ApiResult<std::string> bind(std::string_view ns, std::string_view name,
                              const nlohmann::json& binding);

  // Creates the namespaces kube-apiserver's system namespaces controller creates at startup
  // (kSystemNamespaces); a server that stands in for a cluster calls it once.
  void createSystemNamespaces();

  // The current resourceVersion ("0" before the first write).
  std::string resourceVersion() const;
  // Sends a BOOKMARK at the current resourceVersion to every watch that allows bookmarks.
  void sendBookmarks();
  // Test hooks: end every open watch; forget the history so that every watch from an earlier
  // resourceVersion gets 410 Expired.
  void closeWatches();
  void expireHistory();

 private:
  using Key = std::pair<std::string, std::string>;  // (namespace, name)
  // A write as the writers describe it to publish().
  struct HistoryEntry {
    uint64_t rv = 0;
    WatchEvent::Type type = WatchEvent::Type::Added;
    nlohmann::json object;
    std::optional<nlohmann::json> previous;  // the object before a Modified or Deleted
  };
  // A write as the history keeps it: immutable objects the watchers' queues share.
  struct Recorded {
    uint64_t rv = 0;
    WatchEvent::Type type = WatchEvent::Type::Added;
    std::shared_ptr<const nlohmann::json> object;
    std::shared_ptr<const nlohmann::json> previous;  // null for an Added
    // The previous object at this resourceVersion, which a watcher it leaves sees deleted; made
    // on first use, under mu_.
    mutable std::shared_ptr<const nlohmann::json> left;
  };
  struct Watcher {
    std::weak_ptr<Watch> watch;
    std::string ns;
    labels::Selector labels;
    FieldSelector fields;
    bool bookmarks = false;
  };
  struct Table {
    std::map<Key, nlohmann::json> objects;
    std::deque<Recorded> history;
    uint64_t oldest = 1;  // the oldest resourceVersion the history can replay from (+1)
    std::vector<Watcher> watchers;
  };

  Table& table(Resource resource) { return tables_[static_cast<size_t>(resource)]; }
  const Table& table(Resource resource) const { return tables_[static_cast<size_t>(resource)]; }
  uint64_t nextVersion() { return ++rv_; }
  std::string now() const;
  // Records an event, evicting the oldest beyond historySize, and hands it to every watcher.
  void publish(Resource resource, HistoryEntry entry);
  // The event `watcher` sees for `entry`, if any (the watch cache's filtering).
  std::optional<SharedWatchEvent> eventFor(Resource resource, const Watcher& watcher,
                                           const Recorded& entry) const;
  // Waits (releasing `lock`) until the store reaches `rv` or freshnessTimeout passes; the 504
  // "Too large resource version" in the second case.
  std::optional<ApiError> waitUntilFresh(std::unique_lock<std::mutex>& lock, uint64_t rv) const;
  static int64_t podGracePeriod(const nlohmann::json& pod, std::optional<int64_t> requested);
  ApiResult<nlohmann::json> beginGracefulDeletionLocked(const Key& key, nlohmann::json& current,
                                                        int64_t grace);
  // Deletes the object now; returns it as it was.
  nlohmann::json eraseLocked(Resource resource, Table& t,
                             std::map<Key, nlohmann::json>::iterator it);
  ApiResult<nlohmann::json> replace(Resource resource, std::string_view ns, std::string_view name,
                                    nlohmann::json object, bool statusOnly);
  // The write of update(), updateStatus() and patch(), with mu_ held and `current` the stored
  // object: optimistic concurrency, identity and status rules, no-op detection, the watch event.
  ApiResult<nlohmann::json> writeLocked(Resource resource, const Key& key, nlohmann::json& current,
                                        nlohmann::json object, bool statusOnly);

  StoreOptions options_;
  mutable std::mutex mu_;
  mutable std::condition_variable written_;  // notified on every write (rv_ moves)
  uint64_t rv_ = 0;
  Table tables_[kResourceCount];
  // Pods deleted gracefully, by key: when the deletion began and when the grace period ends.
  struct Terminating {
    util::SystemTime started;
    util::SystemTime deadline;
  };
  std::map<Key, Terminating> terminating_;
};

}  // namespace berth::apiserver
