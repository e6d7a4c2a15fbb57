#include "pkg/util/sleep.h"

#include <condition_variable>
#include <mutex>

namespace berth::util {

bool sleepFor(std::chrono::steady_clock::duration d, std::stop_token stop) {
  // Nothing else ever notifies this condition variable: only the stop token wakes it early, so the
  // mutex is local by design.
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);  // cppcheck-suppress localMutex
  cv.wait_for(lock, stop, d, [] { return false; });
  return !stop.stop_requested();
}

void waitForStop(std::stop_token stop) {
  // An hour at a time: wait_for computes now() + d, which a duration::max() would overflow.
  while (sleepFor(std::chrono::hours(1), stop)) {
  }
}

}  // namespace berth::util
