#include "pkg/util/parallel.h"

#include <algorithm>

namespace berth::util {

Parallelizer::Parallelizer(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { workerLoop(); });
}

Parallelizer::~Parallelizer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void Parallelizer::forEachChunk(size_t n, const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  if (workers_.empty() || n < 64) {
    fn(0, n);
    return;
  }
  std::unique_lock lock(mu_);
  job_ = &fn;
  n_ = n;
  // Several chunks per thread so a slow chunk does not leave the others idle.
  chunk_ = std::max<size_t>(16, n / (static_cast<size_t>(threads()) * 8));
  next_ = 0;
  ++epoch_;
  lock.unlock();
  work_cv_.notify_all();

  lock.lock();
  while (next_ < n_) {
    size_t begin = next_;
    size_t end = std::min(n_, begin + chunk_);
    next_ = end;
    lock.unlock();
    fn(begin, end);
    lock.lock();
  }
  done_cv_.wait(lock, [this] { return busy_ == 0; });
  job_ = nullptr;
}

void Parallelizer::workerLoop() {
  uint64_t seen = 0;
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || (job_ != nullptr && epoch_ != seen); });
    if (stopping_) return;
    seen = epoch_;
    ++busy_;
    while (next_ < n_) {
      size_t begin = next_;
      size_t end = std::min(n_, begin + chunk_);
      next_ = end;
      const auto* fn = job_;
      lock.unlock();
      (*fn)(begin, end);
      lock.lock();
    }
    if (--busy_ == 0) done_cv_.notify_all();
  }
}

}  // namespace berth::util
