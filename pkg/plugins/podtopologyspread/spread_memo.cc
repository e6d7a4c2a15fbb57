#include "pkg/plugins/podtopologyspread/spread_memo.h"

#include <algorithm>

namespace berth::plugins::podtopologyspread {
namespace {

// Recomputes, through `recompute(position, info)`, the positions whose NodeInfo is not the one
// (pointer and generation) the memo last saw there; all of them when the node count changed.
template <typename Entry, typename F>
void refreshChangedNodes(Entry& e, const framework::Snapshot& snapshot, bool all, F&& recompute) {
  const std::vector<framework::NodeInfoPtr>& infos = snapshot.nodeInfos();
  const std::vector<int64_t>& generations = snapshot.generations();
  const size_t n = infos.size();
  if (all || e.infos.size() != n) {
    e.infos.assign(n, nullptr);
    e.generations.assign(n, -1);
  }
  for (size_t i = 0; i < n; ++i) {
    const framework::NodeInfo* info = infos[i].get();
    if (e.infos[i] == info && e.generations[i] == generations[i]) continue;
    recompute(i, *info);
    e.infos[i] = info;
    e.generations[i] = generations[i];
  }
}

// An unambiguous string for a selector's requirements: lengths before every string.
void appendSelectorKey(std::string& out, const SpreadSelector& selector) {
  auto put = [&out](std::string_view s) {
    out += std::to_string(s.size());
    out += ':';
    out += s;
  };
  out += selector.countsPods() ? 'S' : 'N';
  for (const labels::Selector& part : selector.parts()) {
    out += '(';
    for (const labels::Selector::Requirement& r : part.requirements()) {
      put(r.key);
      out += static_cast<char>('a' + static_cast<int>(r.op));
      out += std::to_string(r.values.size());
      for (const std::string& v : r.values) put(v);
      out += ';';
    }
    out += ')';
  }
}

}  // namespace

SpreadMemo::Session::Session(SpreadMemo& memo, const framework::Snapshot& snapshot)
    : memo_(memo), lock_(memo.mu_), snapshot_(snapshot) {
  ++memo_.tick_;
}

SpreadMemo::Session::~Session() { memo_.evict(); }

const TopologyColumn& SpreadMemo::Session::topology(const std::string& key) {
  Entry& e = memo_.entry("t" + key);
  // Values of nodes long gone would pile up: start over when there are many more than nodes.
  const bool restart = e.interned.size() > 2 * snapshot_.numNodes() + 16;
  if (restart) e.interned.clear();
  const size_t n = snapshot_.numNodes();
  if (restart || e.column.ids.size() != n) {
    e.column.ids.assign(n, 0);
    e.column.presence.assign(n, TopologyColumn::kNoNode);
  }
  refreshChangedNodes(e, snapshot_, restart, [&](size_t i, const framework::NodeInfo& info) {
    std::optional<std::string_view> value = info.labels().find(key);
    e.column.presence[i] = info.node() == nullptr ? TopologyColumn::kNoNode
                           : value                ? TopologyColumn::kHasKey
                                                  : TopologyColumn::kMissingKey;
    const std::string_view v = value.value_or("");
    auto it = e.interned.find(std::string(v));
    if (it == e.interned.end()) {
      it = e.interned.emplace(std::string(v), static_cast<int32_t>(e.interned.size())).first;
    }
    e.column.ids[i] = it->second;
  });
  e.column.numIds = e.interned.size();
  return e.column;
}

const std::vector<int64_t>& SpreadMemo::Session::podCounts(const std::string& ns,
                                                           const SpreadSelector& selector) {
  std::string key = "c";
  key += std::to_string(ns.size());
  key += ':';
  key += ns;
  appendSelectorKey(key, selector);
  Entry& e = memo_.entry(std::move(key));
  e.counts.resize(snapshot_.numNodes());
  refreshChangedNodes(e, snapshot_, false, [&](size_t i, const framework::NodeInfo& info) {
    e.counts[i] = countMatchingPods(info.pods(), selector, ns);
  });
  return e.counts;
}

int64_t SpreadMemo::Session::positionOf(const framework::NodeInfo* info) {
  const std::vector<framework::NodeInfoPtr>& infos = snapshot_.nodeInfos();
  if (!indexed_) {
    indexed_ = true;
    auto& seen = memo_.index_infos_;
    auto& index = memo_.index_;
    if (seen.size() != infos.size()) {
      seen.assign(infos.size(), nullptr);
      index.clear();
    }
    for (size_t i = 0; i < infos.size(); ++i) {
      const framework::NodeInfo* now = infos[i].get();
      if (seen[i] == now) continue;
      if (auto it = index.find(seen[i]); it != index.end() && it->second == i) index.erase(it);
      index[now] = static_cast<uint32_t>(i);
      seen[i] = now;
    }
  }
  auto it = memo_.index_.find(info);
  if (it == memo_.index_.end() || it->second >= infos.size() || infos[it->second].get() != info) {
    return -1;
  }
  return it->second;
}

size_t SpreadMemo::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

SpreadMemo::Entry& SpreadMemo::entry(std::string key) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&key](const Entry& e) { return e.key == key; });
  if (it == entries_.end()) {
    entries_.emplace_front();
    it = entries_.begin();
    it->key = std::move(key);
  } else if (it != entries_.begin()) {
    entries_.splice(entries_.begin(), entries_, it);  // most recently used first
  }
  it->used = tick_;
  return *it;
}

void SpreadMemo::evict() {
  // The least recently used go first; never one the ending session handed out.
  while (entries_.size() > capacity_ && entries_.back().used != tick_) entries_.pop_back();
}

}  // namespace berth::plugins::podtopologyspread
