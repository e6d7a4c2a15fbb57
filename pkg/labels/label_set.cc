#include "pkg/labels/label_set.h"

#include <algorithm>

namespace berth::labels {

LabelSet::LabelSet(const api::StringMap& labels) {
  size_t total = 0;
  for (const auto& [k, v] : labels) total += k.size() + v.size();
  chars_.reserve(total);
  entries_.reserve(labels.size());
  // std::map iterates in key order, so entries come out sorted.
  for (const auto& [k, v] : labels) {
    Entry e{};
    e.keyOffset = static_cast<uint32_t>(chars_.size());
    e.keyLength = static_cast<uint32_t>(k.size());
    chars_ += k;
    e.valueOffset = static_cast<uint32_t>(chars_.size());
    e.valueLength = static_cast<uint32_t>(v.size());
    chars_ += v;
    entries_.push_back(e);
  }
}

std::optional<std::string_view> LabelSet::find(std::string_view k) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), k,
                             [this](const Entry& e, std::string_view x) { return key(e) < x; });
  if (it == entries_.end() || key(*it) != k) return std::nullopt;
  return std::string_view(chars_.data() + it->valueOffset, it->valueLength);
}

}  // namespace berth::labels
