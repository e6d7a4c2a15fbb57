#include "pkg/util/worker_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

namespace berth::util {
namespace {

TEST(WorkerPool, DrainWaitsForQueuedAndRunningTasks) {
  WorkerPool pool(2);
  std::atomic<int> done{0};
  for (int i = 0; i < 50; ++i) pool.submit([&] { ++done; });
  pool.drain();
  EXPECT_EQ(done.load(), 50);
}

TEST(WorkerPool, DrainWaitsForTasksSubmittedByTasks) {
  WorkerPool pool(1);
  std::atomic<bool> inner{false};
  pool.submit([&] { pool.submit([&] { inner = true; }); });
  pool.drain();
  EXPECT_TRUE(inner.load());
}

TEST(WorkerPool, RunsAtMostThreadsTasksAtOnce) {
  WorkerPool pool(2);
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
  int peak = 0;
  bool release = false;
  for (int i = 0; i < 4; ++i) {
    pool.submit([&] {
      std::unique_lock lock(mu);
      peak = std::max(peak, ++running);
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      --running;
    });
  }
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return running == 2; });
    release = true;
  }
  cv.notify_all();
  pool.drain();
  EXPECT_EQ(peak, 2);
}

TEST(WorkerPool, DestructionFinishesQueuedTasks) {
  std::atomic<int> done{0};
  {
    WorkerPool pool(1);
    for (int i = 0; i < 20; ++i) pool.submit([&] { ++done; });
  }
  EXPECT_EQ(done.load(), 20);
}

}  // namespace
}  // namespace berth::util
