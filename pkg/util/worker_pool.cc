#include "pkg/util/worker_pool.h"

#include <algorithm>
#include <utility>

namespace berth::util {

WorkerPool::WorkerPool(size_t threads) {
  for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i) {
    workers_.emplace_back([this] { workerLoop(); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  // One task, one worker: waking them all would have the rest contend for the lock and sleep again.
  work_cv_.notify_one();
}

void WorkerPool::drain() {
  std::unique_lock lock(mu_);
  drained_cv_.wait(lock, [&] { return tasks_.empty() && running_ == 0; });
}

void WorkerPool::workerLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping with nothing left
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    ++running_;
    lock.unlock();
    task();
    lock.lock();
    --running_;
    if (running_ == 0 && tasks_.empty()) drained_cv_.notify_all();
  }
}

}  // namespace berth::util
