#include "pkg/plugins/volumebinding/assume_cache.h"

#include <charconv>
#include <cstdint>
#include <utility>

#include "pkg/plugins/volumebinding/volume_helpers.h"

namespace berth::plugins::volumebinding {
namespace {

std::optional<uint64_t> parseResourceVersion(std::string_view rv) {
  uint64_t out = 0;
  auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), out);
  if (ec != std::errc() || end != rv.data() + rv.size() || rv.empty()) return std::nullopt;
  return out;
}

std::tuple<std::string, std::string> keyOf(std::string_view ns, std::string_view name) {
  return {std::string(ns), std::string(name)};
}

// The assumed object when the informer's `current` has not overtaken it.
template <typename T>
std::shared_ptr<const T> overlay(const std::shared_ptr<const T>& current,
                                 const std::shared_ptr<const T>& assumed) {
  if (current == nullptr) return nullptr;
  if (assumed == nullptr ||
      newerResourceVersion(current->metadata.resourceVersion, assumed->metadata.resourceVersion)) {
    return current;
  }
  return assumed;
}

}  // namespace

bool newerResourceVersion(std::string_view candidate, std::string_view base) {
  auto c = parseResourceVersion(candidate);
  auto b = parseResourceVersion(base);
  if (c && b) return *c > *b;
  return candidate != base;
}

api::PersistentVolumePtr AssumeCache::pv(std::string_view name) const {
  if (objects_ == nullptr) return nullptr;
  api::PersistentVolumePtr current = objects_->getPersistentVolume(name);
  std::lock_guard lock(mu_);
  auto it = pvs_.find(keyOf("", name));
  return overlay(current, it == pvs_.end() ? nullptr : it->second);
}

api::PersistentVolumeClaimPtr AssumeCache::pvc(std::string_view ns, std::string_view name) const {
  if (objects_ == nullptr) return nullptr;
  api::PersistentVolumeClaimPtr current = objects_->getPersistentVolumeClaim(ns, name);
  std::lock_guard lock(mu_);
  auto it = pvcs_.find(keyOf(ns, name));
  return overlay(current, it == pvcs_.end() ? nullptr : it->second);
}

std::vector<api::PersistentVolumePtr> AssumeCache::listPVs(std::string_view className) const {
  std::vector<api::PersistentVolumePtr> out;
  if (objects_ == nullptr) return out;
  std::vector<api::PersistentVolumePtr> all = objects_->listPersistentVolumes();
  std::lock_guard lock(mu_);
  for (auto& current : all) {
    auto it = pvs_.find(keyOf("", current->metadata.name));
    api::PersistentVolumePtr pv = overlay(current, it == pvs_.end() ? nullptr : it->second);
    if (persistentVolumeClass(*pv) == className) out.push_back(std::move(pv));
  }
  return out;
}

void AssumeCache::assume(api::PersistentVolumePtr obj) {
  std::lock_guard lock(mu_);
  pruneLocked();
  pvs_[keyOf("", obj->metadata.name)] = std::move(obj);
}

void AssumeCache::assume(api::PersistentVolumeClaimPtr obj) {
  std::lock_guard lock(mu_);
  pruneLocked();
  pvcs_[keyOf(obj->metadata.namespace_, obj->metadata.name)] = std::move(obj);
}

void AssumeCache::restorePV(std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto it = pvs_.find(keyOf("", name)); it != pvs_.end()) pvs_.erase(it);
}

void AssumeCache::restorePVC(std::string_view ns, std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto it = pvcs_.find(keyOf(ns, name)); it != pvcs_.end()) pvcs_.erase(it);
}

void AssumeCache::pruneLocked() {
  if (objects_ == nullptr) return;
  std::erase_if(pvs_, [&](const auto& entry) {
    auto current = objects_->getPersistentVolume(entry.second->metadata.name);
    return overlay(current, entry.second) != entry.second;
  });
  std::erase_if(pvcs_, [&](const auto& entry) {
    const auto& meta = entry.second->metadata;
    auto current = objects_->getPersistentVolumeClaim(meta.namespace_, meta.name);
    return overlay(current, entry.second) != entry.second;
  });
}

}  // namespace berth::plugins::volumebinding
