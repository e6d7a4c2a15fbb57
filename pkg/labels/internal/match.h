#pragma once
// Matching one label requirement against a label map, shared by Selector and the node-selector
// helpers. Validation of the requirement is the caller's job; this is upstream's
// Requirement.Matches on already-valid input and never allocates.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/labels/validation.h"

namespace berth::labels::internal {

enum class MatchOp { In, NotIn, Exists, DoesNotExist, Gt, Lt };

// `have` is the label's value, or nullopt when the node does not have the label.
inline bool matchValue(MatchOp op, std::optional<std::string_view> have,
                       const std::vector<std::string>& values) {
  switch (op) {
    case MatchOp::In:
      return have && std::find(values.begin(), values.end(), *have) != values.end();
    case MatchOp::NotIn:
      return !have || std::find(values.begin(), values.end(), *have) == values.end();
    case MatchOp::Exists:
      return have.has_value();
    case MatchOp::DoesNotExist:
      return !have;
    case MatchOp::Gt:
    case MatchOp::Lt: {
      if (!have || values.size() != 1) {
        return false;
      }
      std::optional<int64_t> mine = parseInt64(*have);
      std::optional<int64_t> want = parseInt64(values.front());
      if (!mine || !want) {
        return false;
      }
      return op == MatchOp::Gt ? *mine > *want : *mine < *want;
    }
  }
  return false;
}

inline bool matchLabels(MatchOp op, const std::string& key, const std::vector<std::string>& values,
                        const api::StringMap& labels) {
  auto it = labels.find(key);
  return matchValue(
      op, it == labels.end() ? std::nullopt : std::optional<std::string_view>(it->second), values);
}

}  // namespace berth::labels::internal
