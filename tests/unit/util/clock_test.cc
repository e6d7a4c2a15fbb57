#include "pkg/util/clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>
#include <vector>

#include "pkg/util/random.h"

namespace berth::util {
namespace {

using std::chrono::seconds;

TEST(FakeClock, SleepsAdvanceBothReadingsAtOnceAndAreRecorded) {
  FakeClock clock;
  const MonotonicTime mono = clock.monotonicNow();
  const SystemTime sys = clock.systemNow();
  EXPECT_TRUE(clock.sleepFor(seconds(30), {}));
  clock.advance(seconds(5));
  EXPECT_EQ(clock.monotonicNow() - mono, seconds(35));
  EXPECT_EQ(clock.systemNow() - sys, seconds(35));
  EXPECT_EQ(clock.sleeps(), std::vector<Duration>{seconds(30)});
}

TEST(FakeClock, AStoppedSleepReturnsFalseWithoutAdvancing) {
  FakeClock clock;
  const MonotonicTime before = clock.monotonicNow();
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(clock.sleepFor(std::chrono::hours(1), stop.get_token()));
  EXPECT_EQ(clock.monotonicNow(), before);
  EXPECT_TRUE(clock.sleeps().empty());
}

TEST(FakeClock, StartsAtTheGivenSystemTime) {
  const SystemTime start{seconds(1'796'025'600)};
  FakeClock clock(start);
  EXPECT_EQ(clock.systemNow(), start);
  clock.advance(seconds(1));
  EXPECT_EQ(clock.systemNow(), start + seconds(1));
  EXPECT_EQ(FakeClock().systemNow(), SystemTime(seconds(1'704'067'200 + 3600)));
}

TEST(RealClock, SleepIsCancelledByItsStopToken) {
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(realClock().sleepFor(std::chrono::hours(1), stop.get_token()));
  EXPECT_TRUE(realClock().sleepFor(Duration::zero(), {}));
}

TEST(SeededRandom, TheSameSeedGivesTheSameDrawsInRange) {
  SeededRandom a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const double u = a.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    EXPECT_EQ(u, b.uniform());
    differs = differs || u != c.uniform();
  }
  EXPECT_TRUE(differs);
}

TEST(FakeRandom, ReturnsItsDrawsThenRepeatsTheLast) {
  FakeRandom random({0.25, 0.5});
  EXPECT_EQ(random.uniform(), 0.25);
  EXPECT_EQ(random.uniform(), 0.5);
  EXPECT_EQ(random.uniform(), 0.5);
}

}  // namespace
}  // namespace berth::util
