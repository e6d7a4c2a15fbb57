#pragma once
// Informer<T>: a Reflector feeding a Store<T> of decoded objects and calling event handlers, as
// client-go's SharedIndexInformer with one consumer. It runs on its own thread; handlers are
// called on that thread, in the order the changes happened.
//
// Delivery is exactly-once per change: a LIST (the first, or a relist after 410 Gone or a broken
// stream) is reconciled against the store, giving onAdd for new objects, onUpdate for those whose
// resourceVersion changed, onDelete for those gone (with the last known object) and nothing for
// the unchanged; a watch event repeating the stored resourceVersion is dropped. An object that
// does not decode is skipped (the store keeps the previous version, if any) and logged with its
// namespace/name: one line per watch event, one line per list (a count and the first names);
// everything else keeps flowing.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pkg/informer/lister_watcher.h"
#include "pkg/informer/reflector.h"
#include "pkg/informer/store.h"
#include "pkg/util/result.h"

namespace berth::informer {

// client-go's MetaNamespaceKeyFunc of a wire object: "namespace/name" or "name"; "" when the
// object has no metadata.name.
std::string objectKey(const nlohmann::json& object);
std::string objectResourceVersion(const nlohmann::json& object);
// Logs a skipped object: what, which (key), why.
void logUndecodable(std::string_view resource, std::string_view key, const util::Error& error);

// The objects of one list that do not decode, logged as one line (a count, the first few keys and
// the first error) rather than one line per object, so a broken list cannot flood the log.
class SkippedObjects {
 public:
  void add(std::string_view key, const util::Error& error);
  // Nothing when no object was skipped.
  void log(std::string_view resource) const;
  size_t count() const { return count_; }

 private:
  static constexpr size_t kNamed = 3;
  size_t count_ = 0;
  std::vector<std::string> first_;  // up to kNamed keys
  std::string first_error_;
};

template <typename T>
struct EventHandlers {
  using Ptr = std::shared_ptr<const T>;
  std::function<void(const Ptr&)> onAdd;
  std::function<void(const Ptr& oldObj, const Ptr& newObj)> onUpdate;
  std::function<void(const Ptr&)> onDelete;
};

template <typename T>
class Informer final : private ReflectorSink {
 public:
  using Ptr = std::shared_ptr<const T>;
  using Decode = std::function<util::Result<T>(const nlohmann::json&)>;

  Informer(ListerWatcherPtr listerWatcher, Decode decode, ReflectorOptions options = {})
      : lw_(std::move(listerWatcher)),
        decode_(std::move(decode)),
        name_(options.name),
        reflector_(*lw_, *this, std::move(options)) {}
  ~Informer() override { stop(); }
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Handlers must be added before start().
  void addEventHandlers(EventHandlers<T> handlers) { handlers_.push_back(std::move(handlers)); }

  void start() {
    thread_ = std::jthread([this](std::stop_token stop) { reflector_.run(stop); });
  }
  // Cancels the open watch or list and joins the thread. Idempotent.
  void stop() {
    if (thread_.joinable()) {
      thread_.request_stop();
      thread_.join();
    }
  }

  // True once the first list has been delivered to the handlers.
  bool hasSynced() const { return synced_.load(); }
  // Waits for hasSynced() up to `timeout`; false on timeout.
  template <typename Rep, typename Period>
  bool waitForSync(std::chrono::duration<Rep, Period> timeout) const {
    std::unique_lock<std::mutex> lock(sync_mu_);
    return sync_cv_.wait_for(lock, timeout, [this] { return synced_.load(); });
  }

  const Store<T>& store() const { return store_; }
  std::string lastSyncResourceVersion() const { return reflector_.lastSyncResourceVersion(); }

 private:
  void replace(std::vector<nlohmann::json> items, const std::string&) override {
    std::set<std::string> listed;
    SkippedObjects skipped;
    for (const nlohmann::json& item : items) {
      const std::string key = objectKey(item);
      if (key.empty()) {
        skipped.add("", util::invalidArgument("metadata.name: missing"));
        continue;
      }
      listed.insert(key);
      if (std::optional<util::Error> error = upsert(key, item)) {
        skipped.add(key, *error);
      }
    }
    skipped.log(name_);
    for (const std::string& key : store_.keys()) {
      if (!listed.contains(key)) {
        const Ptr old = store_.get(key);
        store_.erase(key);
        for (const auto& h : handlers_) {
          if (h.onDelete) {
            h.onDelete(old);
          }
        }
      }
    }
    if (!synced_.load()) {
      std::lock_guard<std::mutex> lock(sync_mu_);
      synced_.store(true);
      sync_cv_.notify_all();
    }
  }

  void apply(const client::WatchEvent& event) override {
    const std::string key = objectKey(event.object);
    if (key.empty()) {
      logUndecodable(name_, "", util::invalidArgument("metadata.name: missing"));
      return;
    }
    if (event.type != client::WatchEvent::Type::Deleted) {
      if (std::optional<util::Error> error = upsert(key, event.object)) {
        logUndecodable(name_, key, *error);
      }
      return;
    }
    const Ptr old = store_.get(key);
    if (old == nullptr) {
      return;  // never seen, or already deleted
    }
    // The final state from the event when it decodes, else the last one known.
    Ptr last = old;
    if (util::Result<T> decoded = decode_(event.object); decoded.ok()) {
      last = std::make_shared<const T>(*std::move(decoded));
    }
    store_.erase(key);
    for (const auto& h : handlers_) {
      if (h.onDelete) {
        h.onDelete(last);
      }
    }
  }

  // Adds or updates `key` from `object` unless its resourceVersion is already stored; the
  // decoding error when the object is skipped.
  std::optional<util::Error> upsert(const std::string& key, const nlohmann::json& object) {
    const std::string rv = objectResourceVersion(object);
    typename Store<T>::Entry existing = store_.entry(key);
    if (existing.object != nullptr && !rv.empty() && existing.resourceVersion == rv) {
      return std::nullopt;
    }
    util::Result<T> decoded = decode_(object);
    if (!decoded.ok()) {
      return decoded.error();
    }
    Ptr now = std::make_shared<const T>(*std::move(decoded));
    store_.put(key, {now, rv});
    for (const auto& h : handlers_) {
      if (existing.object == nullptr) {
        if (h.onAdd) {
          h.onAdd(now);
        }
      } else if (h.onUpdate) {
        h.onUpdate(existing.object, now);
      }
    }
    return std::nullopt;
  }

  ListerWatcherPtr lw_;
  Decode decode_;
  std::string name_;
  Reflector reflector_;
  Store<T> store_;
  std::vector<EventHandlers<T>> handlers_;
  std::atomic<bool> synced_{false};
  mutable std::mutex sync_mu_;
  mutable std::condition_variable sync_cv_;
  std::jthread thread_;  // last: joined before the rest is destroyed
};

}  // namespace berth::informer
