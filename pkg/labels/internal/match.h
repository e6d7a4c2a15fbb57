#pragma once
// Matching one label requirement against a label map, shared by Selector and the node-selector
// helpers. Validation of the requirement is the caller's job; this is upstream's
// Requirement.Matches on already-valid input and never allocates.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/labels/validation.h"

namespace berth::labels::internal {

enum class MatchOp { In, NotIn, Exists, DoesNotExist, Gt, Lt };

inline bool containsValue(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

inline bool matchLabels(MatchOp op, const std::string& key, const std::vector<std::string>& values,
                        const api::StringMap& labels) {
  auto it = labels.find(key);
  const bool present = it != labels.end();
  switch (op) {
    case MatchOp::In:
      return present && containsValue(values, it->second);
    case MatchOp::NotIn:
      return !present || !containsValue(values, it->second);
    case MatchOp::Exists:
      return present;
    case MatchOp::DoesNotExist:
      return !present;
    case MatchOp::Gt:
    case MatchOp::Lt: {
      if (!present || values.size() != 1) {
        return false;
      }
      std::optional<int64_t> have = parseInt64(it->second);
      std::optional<int64_t> want = parseInt64(values.front());
      if (!have || !want) {
        return false;
      }
      return op == MatchOp::Gt ? *have > *want : *have < *want;
    }
  }
  return false;
}

}  // namespace berth::labels::internal
