#include "pkg/util/random.h"

#include <algorithm>

namespace berth::util {

double SeededRandom::uniform() {
  std::lock_guard lock(mu_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine_);
}

Random& defaultRandom() {
  static SeededRandom random{(static_cast<uint64_t>(std::random_device{}()) << 32) |
                             std::random_device{}()};
  return random;
}

double FakeRandom::uniform() {
  std::lock_guard lock(mu_);
  if (draws_.empty()) return 0.0;
  const double draw = draws_[std::min(next_, draws_.size() - 1)];
  if (next_ < draws_.size()) ++next_;
  return draw;
}

}  // namespace berth::util
