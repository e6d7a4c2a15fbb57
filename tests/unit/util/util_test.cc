#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "pkg/util/parallel.h"
#include "pkg/util/result.h"
#include "pkg/util/sleep.h"

namespace berth::util {
namespace {

TEST(Parallelizer, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE(threads);
    Parallelizer p(threads);
    for (size_t n : {0u, 1u, 63u, 64u, 1000u, 5000u}) {
      std::vector<std::atomic<int>> hits(n);
      p.forEachChunk(n, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) hits[i]++;
      });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
    }
  }
}

TEST(Parallelizer, RunsManyJobsBackToBack) {
  Parallelizer p(2);
  std::atomic<size_t> total{0};
  for (int job = 0; job < 500; ++job) {
    p.forEachChunk(200, [&](size_t begin, size_t end) { total += end - begin; });
  }
  EXPECT_EQ(total.load(), 500u * 200u);
}

TEST(SleepFor, ReturnsFalseAtOnceWhenStopped) {
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(sleepFor(std::chrono::hours(1), stop.get_token()));
  EXPECT_TRUE(sleepFor(std::chrono::steady_clock::duration::zero(), {}));
}

TEST(WaitForStop, ReturnsWhenAnotherThreadStops) {
  std::stop_source stop;
  std::jthread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.request_stop();
  });
  waitForStop(stop.get_token());
  EXPECT_TRUE(stop.stop_requested());
}

TEST(Result, HoldsValueOrError) {
  Result<int> ok = 5;
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  Result<int> bad = invalidArgument("nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::InvalidArgument);
  EXPECT_EQ(bad.error().wrap("pod default/x").message, "pod default/x: nope");
  Result<void> v;
  EXPECT_TRUE(v.ok());
  Result<void> e = Error{ErrorCode::Unavailable, "later"};
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(errorCodeName(e.error().code), "Unavailable");
}

// A richer error type, as the embedded API server's ApiError.
struct StatusError {
  int code = 0;
  std::string reason;
};

TEST(Result, TakesAnErrorTypeParameter) {
  Result<std::string, StatusError> ok = std::string("pod");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 3u);
  EXPECT_EQ(std::move(ok).value(), "pod");
  Result<std::string, StatusError> bad = StatusError{404, "NotFound"};
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, 404);
  EXPECT_EQ(bad.error().reason, "NotFound");
  Result<void, StatusError> done;
  EXPECT_TRUE(done.ok());
  Result<void, StatusError> failed = StatusError{409, "Conflict"};
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().reason, "Conflict");
  static_assert(std::is_same_v<Result<int>, Result<int, Error>>, "Error is the default");
}

}  // namespace
}  // namespace berth::util
