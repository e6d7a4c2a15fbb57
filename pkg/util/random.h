#pragma once
// Random: chance as a dependency, next to Clock. Jitter (backoff, retry and acquire waits, watch
// timeouts) draws from an injected Random, so production seeds it once and tests fix the draws.

#include <cstdint>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

namespace berth::util {

class Random {
 public:
  virtual ~Random() = default;
  // A uniform draw in [0, 1). Thread-safe.
  virtual double uniform() = 0;
};

// A Mersenne Twister behind a mutex: the same seed gives the same draws.
class SeededRandom final : public Random {
 public:
  explicit SeededRandom(uint64_t seed) : engine_(seed) {}
  double uniform() override;

 private:
  std::mutex mu_;
  std::mt19937_64 engine_;
};

// The process-wide source, seeded once from std::random_device.
Random& defaultRandom();

// Returns `draws` in turn, then repeats the last one; for tests.
class FakeRandom final : public Random {
 public:
  explicit FakeRandom(std::vector<double> draws) : draws_(std::move(draws)) {}
  explicit FakeRandom(double draw) : draws_{draw} {}
  double uniform() override;

 private:
  std::mutex mu_;
  std::vector<double> draws_;
  size_t next_ = 0;
};

}  // namespace berth::util
