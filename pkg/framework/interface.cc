#include "pkg/framework/interface.h"

#include <algorithm>

namespace berth::framework {

void defaultNormalizeScore(int64_t maxPriority, bool reverse, std::vector<int64_t>& scores) {
  int64_t maxCount = 0;
  for (int64_t s : scores) maxCount = std::max(maxCount, s);
  if (maxCount == 0) {
    if (reverse) std::fill(scores.begin(), scores.end(), maxPriority);
    return;
  }
  for (auto& s : scores) {
    s = maxPriority * s / maxCount;
    if (reverse) s = maxPriority - s;
  }
}

}  // namespace berth::framework
