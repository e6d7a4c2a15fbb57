#pragma once
// Polling a condition under a deadline, for tests that watch another thread or process: the
// deadline is there against hangs, never to time anything.

#include <chrono>
#include <functional>

namespace berth::test {

// Polls `condition` every 25 ms until it holds or `limit` passes; its value at the deadline.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds limit = std::chrono::seconds(30));

}  // namespace berth::test
