#include "pkg/framework/node_info.h"

#include <algorithm>
#include <atomic>

namespace berth::framework {
namespace {

std::atomic<int64_t> next_generation{0};

bool samePod(const api::Pod& a, const api::Pod& b) {
  if (!a.metadata.uid.empty() || !b.metadata.uid.empty()) return a.metadata.uid == b.metadata.uid;
  return a.metadata.namespace_ == b.metadata.namespace_ && a.metadata.name == b.metadata.name;
}

// Removes `pod` (by identity) from an unordered list, if there.
void eraseAffinityPod(std::vector<PodInfoPtr>& list, const PodInfoPtr& pod) {
  auto it = std::find(list.begin(), list.end(), pod);
  if (it == list.end()) return;
  std::iter_swap(it, list.end() - 1);
  list.pop_back();
}

}  // namespace

std::vector<std::string> podClaimKeys(const api::Pod& pod) {
  std::vector<std::string> keys;
  for (const api::Volume& v : pod.spec.volumes) {
    if (v.source == "persistentVolumeClaim") {
      keys.push_back(pod.metadata.namespace_ + "/" + v.claimName);
    } else if (v.source == "ephemeral") {
      keys.push_back(pod.metadata.namespace_ + "/" + pod.metadata.name + "-" + v.name);
    }
  }
  return keys;
}

void HostPortInfo::add(const HostPort& p) { ports_.push_back(p); }

void HostPortInfo::remove(const HostPort& p) {
  auto it = std::find(ports_.begin(), ports_.end(), p);
  if (it != ports_.end()) ports_.erase(it);
}

bool HostPortInfo::conflicts(const HostPort& p) const {
  constexpr std::string_view kAny = "0.0.0.0";
  return std::any_of(ports_.begin(), ports_.end(), [&](const HostPort& used) {
    return used.port == p.port && used.protocol == p.protocol &&
           (used.ip == p.ip || used.ip == kAny || p.ip == kAny);
  });
}

void NodeInfo::setNode(api::NodePtr node) {
  node_ = std::move(node);
  name_ = node_ ? node_->metadata.name : std::string();
  labels_ = node_ ? labels::LabelSet(node_->metadata.labels) : labels::LabelSet();
  unschedulable_ = node_ && node_->spec.unschedulable;
  taints_ = node_ ? std::span<const api::Taint>(node_->spec.taints) : std::span<const api::Taint>();
  allocatable_ = node_ ? Resource::fromList(node_->status.allocatable) : Resource{};
  bump();
}

void NodeInfo::addPod(PodInfoPtr pod) {
  requested_.add(pod->requests);
  non_zero_requested_.add(pod->nonZeroRequests);
  for (const auto& p : pod->hostPorts) used_ports_.add(p);
  if (pod->hasPodAffinity()) pods_with_affinity_.push_back(pod);
  if (pod->hasRequiredAntiAffinity()) pods_with_required_anti_affinity_.push_back(pod);
  for (std::string& key : podClaimKeys(*pod->pod)) ++pvc_ref_counts_[std::move(key)];
  pods_.push_back(std::move(pod));
  bump();
}

bool NodeInfo::removePod(const api::Pod& pod) {
  auto it = std::find_if(pods_.begin(), pods_.end(),
                         [&](const PodInfoPtr& p) { return samePod(*p->pod, pod); });
  if (it == pods_.end()) return false;
  requested_.subtract((*it)->requests);
  non_zero_requested_.subtract((*it)->nonZeroRequests);
  for (const auto& p : (*it)->hostPorts) used_ports_.remove(p);
  if ((*it)->hasPodAffinity()) eraseAffinityPod(pods_with_affinity_, *it);
  if ((*it)->hasRequiredAntiAffinity()) eraseAffinityPod(pods_with_required_anti_affinity_, *it);
  for (const std::string& key : podClaimKeys(*(*it)->pod)) {
    auto count = pvc_ref_counts_.find(key);
    if (count != pvc_ref_counts_.end() && --count->second <= 0) pvc_ref_counts_.erase(count);
  }
  // Order of pods carries no meaning: swap-and-pop keeps removal O(1) after the search.
  std::iter_swap(it, pods_.end() - 1);
  pods_.pop_back();
  bump();
  return true;
}

PodInfoPtr NodeInfo::findPod(const api::Pod& pod) const {
  auto it = std::find_if(pods_.begin(), pods_.end(),
                         [&](const PodInfoPtr& p) { return samePod(*p->pod, pod); });
  return it == pods_.end() ? nullptr : *it;
}

void NodeInfo::bump() { generation_ = ++next_generation; }

}  // namespace berth::framework
