#pragma once
// Parallelizer: runs a function over index ranges [0, n) on a fixed set of worker threads
// (upstream's parallelize.Until). Filter and Score fan out over nodes with it; with one thread it
// runs inline.

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace berth::util {

class Parallelizer {
 public:
  // threads <= 1 runs everything on the calling thread.
  explicit Parallelizer(int threads = 1);
  ~Parallelizer();
  Parallelizer(const Parallelizer&) = delete;
  Parallelizer& operator=(const Parallelizer&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over disjoint chunks covering [0, n) and returns when all are done. The
  // calling thread works too. fn must not throw.
  void forEachChunk(size_t n, const std::function<void(size_t, size_t)>& fn);

 private:
  void workerLoop();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const std::function<void(size_t, size_t)>* job_ = nullptr;  // guarded by mu_
  size_t n_ = 0;
  size_t chunk_ = 0;
  size_t next_ = 0;     // next chunk start, guarded by mu_
  int busy_ = 0;        // workers inside the current job, guarded by mu_
  uint64_t epoch_ = 0;  // bumped per job so each worker joins each job once
  bool stopping_ = false;
};

}  // namespace berth::util
