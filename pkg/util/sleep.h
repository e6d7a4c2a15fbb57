#pragma once

#include <chrono>
#include <stop_token>

namespace berth::util {

// Sleeps for `d` unless `stop` is requested first; false when stopped. Every wait of berth's own
// threads goes through this, so SIGTERM or a lost lease never waits out a timer.
bool sleepFor(std::chrono::steady_clock::duration d, std::stop_token stop);

// Blocks until `stop` is requested.
void waitForStop(std::stop_token stop);

}  // namespace berth::util
