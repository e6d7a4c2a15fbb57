#pragma once
// Store<T>: an informer's local copy of one resource, keyed as client-go's MetaNamespaceKeyFunc
// ("namespace/name", or "name" for cluster-scoped objects). Objects are immutable and shared
// (std::shared_ptr<const T>): readers on any thread get snapshots, the informer replaces entries.
// Each entry remembers its resourceVersion so that an unchanged object is never delivered twice.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace berth::informer {

template <typename T>
class Store {
 public:
  using Ptr = std::shared_ptr<const T>;

  // The object under `key`, or null.
  Ptr get(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second.object;
  }
  // Every object, in key order.
  std::vector<Ptr> list() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Ptr> out;
    out.reserve(items_.size());
    for (const auto& [key, entry] : items_) {
      out.push_back(entry.object);
    }
    return out;
  }
  std::vector<std::string> keys() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    out.reserve(items_.size());
    for (const auto& [key, entry] : items_) {
      out.push_back(key);
    }
    return out;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.size();
  }

  // --- Written by the informer's thread only ---

  struct Entry {
    Ptr object;
    std::string resourceVersion;
  };
  // The entry under `key` (object null when absent).
  Entry entry(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = items_.find(key);
    return it == items_.end() ? Entry{} : it->second;
  }
  void put(const std::string& key, Entry entry) {
    std::lock_guard<std::mutex> lock(mu_);
    items_[key] = std::move(entry);
  }
  void erase(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    items_.erase(key);
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, Entry> items_;
};

}  // namespace berth::informer
