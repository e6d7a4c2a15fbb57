#include "pkg/framework/inter_pod_index.h"

#include "pkg/framework/node_info.h"

namespace berth::framework {
namespace {

// Lengths before strings: no two different tuples print the same.
void putString(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

void putSelector(std::string& out, const std::optional<labels::Selector>& selector) {
  if (!selector) {
    out += 'N';
    return;
  }
  out += 'S';
  out += std::to_string(selector->requirements().size());
  for (const labels::Selector::Requirement& r : selector->requirements()) {
    putString(out, r.key);
    out += static_cast<char>('a' + static_cast<int>(r.op));
    out += std::to_string(r.values.size());
    for (const std::string& v : r.values) putString(out, v);
  }
}

std::string labelEntryKey(std::string_view ns, std::string_view key, std::string_view value) {
  std::string out;
  out.reserve(ns.size() + key.size() + value.size() + 12);
  putString(out, ns);
  putString(out, key);
  putString(out, value);
  return out;
}

void addCount(DomainCounts& counts, std::string_view value, int64_t delta) {
  auto it = counts.find(value);
  if (it == counts.end()) {
    if (delta != 0) counts.emplace(std::string(value), delta);
    return;
  }
  it->second += delta;
  if (it->second == 0) counts.erase(it);
}

}  // namespace

std::string affinityTermKey(const AffinityTerm& term) {
  std::string out;
  out += std::to_string(term.namespaces.size());
  for (const std::string& ns : term.namespaces) putString(out, ns);
  putSelector(out, term.namespaceSelector);
  putSelector(out, term.selector);
  putString(out, term.topologyKey);
  return out;
}

InterPodIndex::InterPodIndex(const InterPodIndex& other) { *this = other; }

InterPodIndex& InterPodIndex::operator=(const InterPodIndex& other) {
  if (this == &other) return *this;
  std::lock_guard lock(*other.mu_);
  for (size_t k = 0; k < kTermKinds; ++k) groups_[k] = other.groups_[k];
  labels_ = other.labels_;
  return *this;
}

void InterPodIndex::addNode(const NodeInfo& node) {
  for (const PodInfoPtr& pod : node.pods()) update(node, *pod, 1);
}

void InterPodIndex::removeNode(const NodeInfo& node) {
  for (const PodInfoPtr& pod : node.pods()) update(node, *pod, -1);
}

void InterPodIndex::addPod(const NodeInfo& node, const PodInfo& pod) { update(node, pod, 1); }

void InterPodIndex::removePod(const NodeInfo& node, const PodInfo& pod) { update(node, pod, -1); }

void InterPodIndex::update(const NodeInfo& node, const PodInfo& pod, int64_t delta) {
  const std::string& ns = pod->metadata.namespace_;
  for (const auto& [key, value] : pod->metadata.labels) {
    const std::string entryKey = labelEntryKey(ns, key, value);
    auto it = labels_.find(entryKey);
    if (it == labels_.end()) {
      if (delta < 0) continue;
      it = labels_.emplace(entryKey, LabelEntry{}).first;
    }
    LabelEntry& e = it->second;
    auto n = e.nodes.try_emplace(&node, 0).first;
    n->second += delta;
    if (n->second == 0) e.nodes.erase(n);
    for (auto& [topologyKey, counts] : e.byTopology) {
      if (auto v = node.labels().find(topologyKey)) addCount(counts, *v, delta);
    }
    if (e.nodes.empty()) labels_.erase(it);
  }
  if (!pod.affinity) return;
  const PodAffinityTerms& terms = *pod.affinity;
  for (const AffinityTerm& t : terms.requiredAffinity) {
    updateTerms(node, TermKind::RequiredAffinity, t, 0, delta);
  }
  for (const AffinityTerm& t : terms.requiredAntiAffinity) {
    updateTerms(node, TermKind::RequiredAntiAffinity, t, 0, delta);
  }
  for (const WeightedAffinityTerm& t : terms.preferredAffinity) {
    updateTerms(node, TermKind::Preferred, t.term, t.weight, delta);
  }
  for (const WeightedAffinityTerm& t : terms.preferredAntiAffinity) {
    updateTerms(node, TermKind::PreferredAnti, t.term, t.weight, delta);
  }
}

void InterPodIndex::updateTerms(const NodeInfo& node, TermKind kind, const AffinityTerm& term,
                                int32_t weight, int64_t delta) {
  std::string key = std::to_string(weight) + '/' + affinityTermKey(term);
  Groups& groups = groups_[static_cast<size_t>(kind)];
  auto it = groups.find(key);
  if (it == groups.end()) {
    if (delta < 0) return;
    it = groups.emplace(std::move(key), TermGroup{term, weight, {}, 0}).first;
  }
  TermGroup& g = it->second;
  g.terms += delta;
  if (auto v = node.labels().find(term.topologyKey)) addCount(g.counts, *v, delta);
  if (g.terms <= 0) groups.erase(it);
}

const DomainCounts& InterPodIndex::labelCounts(std::string_view ns, std::string_view key,
                                               std::string_view value,
                                               std::string_view topologyKey) const {
  static const DomainCounts kNone;
  auto it = labels_.find(labelEntryKey(ns, key, value));
  if (it == labels_.end()) return kNone;
  const LabelEntry& e = it->second;
  std::lock_guard lock(*mu_);
  auto [t, inserted] = e.byTopology.try_emplace(std::string(topologyKey));
  if (inserted) {
    for (const auto& [node, count] : e.nodes) {
      if (auto v = node->labels().find(topologyKey)) addCount(t->second, *v, count);
    }
  }
  return t->second;
}

}  // namespace berth::framework
