#pragma once
// WorkerPool: a fixed set of threads running queued tasks in submission order, at most `threads`
// at once. The scheduler's binding cycles and status writes run on one, so a slow API call never
// holds up the scheduling thread. Destruction finishes every task already queued, then joins.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace berth::util {

class WorkerPool {
 public:
  // threads == 0 is taken as 1.
  explicit WorkerPool(size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task`; never blocks on running tasks. Tasks must not throw.
  void submit(std::function<void()> task);
  // Blocks until no task is queued or running, including tasks those tasks submitted.
  void drain();

 private:
  void workerLoop();

  std::mutex mu_;
  std::condition_variable work_cv_;     // a task was queued, or the pool stops
  std::condition_variable drained_cv_;  // no task queued or running
  std::deque<std::function<void()>> tasks_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace berth::util
