#include "pkg/framework/inter_pod_index.h"

#include <algorithm>

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

void addCountById(CountsById& counts, int32_t id, int64_t delta) {
  if (id < 0) return;
  const auto at = static_cast<size_t>(id);
  if (at >= counts.size()) counts.resize(at + 1, 0);
  counts[at] = static_cast<int32_t>(counts[at] + delta);
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
  nodes_ = other.nodes_;
  columns_ = other.columns_;
  return *this;
}

int32_t InterPodIndex::Column::idOf(const NodeInfo& node, std::string_view key) {
  std::optional<std::string_view> value = node.labels().find(key);
  if (!value) return -1;
  auto it = interned.find(*value);
  if (it == interned.end()) {
    int32_t id = static_cast<int32_t>(nodes.size());
    if (!free.empty()) {
      id = free.back();
      free.pop_back();
    } else {
      nodes.push_back(0);
    }
    it = interned.emplace(std::string(*value), id).first;
  }
  ++nodes[static_cast<size_t>(it->second)];
  return it->second;
}

void InterPodIndex::Column::release(int32_t id) {
  if (id < 0 || --nodes[static_cast<size_t>(id)] > 0) return;
  // No node has the value any more, so no pod is counted under it: the id can name another.
  auto it = std::find_if(interned.begin(), interned.end(),
                         [id](const auto& e) { return e.second == id; });
  if (it != interned.end()) interned.erase(it);
  free.push_back(id);
}

InterPodIndex::Column& InterPodIndex::column(std::string_view topologyKey) const {
  auto [it, inserted] = columns_.try_emplace(std::string(topologyKey));
  if (inserted) {
    Column& c = it->second;
    c.ids.reserve(nodes_.size());
    for (const NodeInfo* node : nodes_) c.ids.push_back(c.idOf(*node, topologyKey));
  }
  return it->second;
}

int32_t InterPodIndex::idAt(std::string_view topologyKey, size_t position) const {
  const std::vector<int32_t>& ids = column(topologyKey).ids;
  return position < ids.size() ? ids[position] : -1;
}

size_t InterPodIndex::positionOf(const NodeInfo& node) const {
  const size_t hint = node.snapshotPosition();
  if (hint < nodes_.size() && nodes_[hint] == &node) return hint;
  // A NodeInfo also held by another snapshot may carry that one's position.
  return static_cast<size_t>(std::find(nodes_.begin(), nodes_.end(), &node) - nodes_.begin());
}

void InterPodIndex::addNode(const NodeInfo& node) {
  const size_t position = nodes_.size();
  nodes_.push_back(&node);
  for (auto& [key, c] : columns_) c.ids.push_back(c.idOf(node, key));
  for (const PodInfoPtr& pod : node.pods()) update(position, node, *pod, 1);
}

void InterPodIndex::replaceNode(size_t position, const NodeInfo& old, const NodeInfo& now) {
  for (const PodInfoPtr& pod : old.pods()) update(position, old, *pod, -1);
  nodes_[position] = &now;
  for (auto& [key, c] : columns_) {
    // The new id first: a value both nodes have keeps its id.
    const int32_t id = c.idOf(now, key);
    c.release(c.ids[position]);
    c.ids[position] = id;
  }
  for (const PodInfoPtr& pod : now.pods()) update(position, now, *pod, 1);
}

void InterPodIndex::removeNode(size_t position, const NodeInfo& node) {
  for (const PodInfoPtr& pod : node.pods()) update(position, node, *pod, -1);
  const auto at = static_cast<std::ptrdiff_t>(position);
  nodes_.erase(nodes_.begin() + at);
  for (auto& [key, c] : columns_) {
    c.release(c.ids[position]);
    c.ids.erase(c.ids.begin() + at);
  }
}

void InterPodIndex::addPod(size_t position, const NodeInfo& node, const PodInfo& pod) {
  update(position, node, pod, 1);
}

void InterPodIndex::removePod(size_t position, const NodeInfo& node, const PodInfo& pod) {
  update(position, node, pod, -1);
}

void InterPodIndex::update(size_t position, const NodeInfo& node, const PodInfo& pod,
                           int64_t delta) {
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
      if (auto v = node.labels().find(topologyKey)) addCount(counts.byValue, *v, delta);
      addCountById(counts.byId, idAt(topologyKey, position), delta);
    }
    if (e.nodes.empty()) labels_.erase(it);
  }
  if (!pod.affinity) return;
  const PodAffinityTerms& terms = *pod.affinity;
  for (const AffinityTerm& t : terms.requiredAffinity) {
    updateTerms(position, node, TermKind::RequiredAffinity, t, 0, delta);
  }
  for (const AffinityTerm& t : terms.requiredAntiAffinity) {
    updateTerms(position, node, TermKind::RequiredAntiAffinity, t, 0, delta);
  }
  for (const WeightedAffinityTerm& t : terms.preferredAffinity) {
    updateTerms(position, node, TermKind::Preferred, t.term, t.weight, delta);
  }
  for (const WeightedAffinityTerm& t : terms.preferredAntiAffinity) {
    updateTerms(position, node, TermKind::PreferredAnti, t.term, t.weight, delta);
  }
}

void InterPodIndex::updateTerms(size_t position, const NodeInfo& node, TermKind kind,
                                const AffinityTerm& term, int32_t weight, int64_t delta) {
  std::string key = std::to_string(weight) + '/' + affinityTermKey(term);
  Groups& groups = groups_[static_cast<size_t>(kind)];
  auto it = groups.find(key);
  if (it == groups.end()) {
    if (delta < 0) return;
    it = groups.emplace(std::move(key), TermGroup{term, weight, {}, {}, 0}).first;
  }
  TermGroup& g = it->second;
  g.terms += delta;
  if (auto v = node.labels().find(term.topologyKey)) addCount(g.counts, *v, delta);
  addCountById(g.countsById, idAt(term.topologyKey, position), delta);
  if (g.terms <= 0) groups.erase(it);
}

const DomainCounts& InterPodIndex::labelCounts(std::string_view ns, std::string_view key,
                                               std::string_view value,
                                               std::string_view topologyKey) const {
  return labelKeyCounts(ns, key, value, topologyKey).byValue;
}

const KeyCounts& InterPodIndex::labelKeyCounts(std::string_view ns, std::string_view key,
                                               std::string_view value,
                                               std::string_view topologyKey) const {
  static const KeyCounts kNone;
  auto it = labels_.find(labelEntryKey(ns, key, value));
  if (it == labels_.end()) return kNone;
  const LabelEntry& e = it->second;
  std::lock_guard lock(*mu_);
  auto [t, inserted] = e.byTopology.try_emplace(std::string(topologyKey));
  if (inserted) {
    const std::vector<int32_t>& ids = column(topologyKey).ids;
    for (const auto& [node, count] : e.nodes) {
      if (auto v = node->labels().find(topologyKey)) addCount(t->second.byValue, *v, count);
      const size_t p = positionOf(*node);
      addCountById(t->second.byId, p < ids.size() ? ids[p] : -1, count);
    }
  }
  return t->second;
}

const std::vector<int32_t>& InterPodIndex::topologyIds(std::string_view topologyKey) const {
  std::lock_guard lock(*mu_);
  return column(topologyKey).ids;
}

}  // namespace berth::framework
