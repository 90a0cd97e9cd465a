// A fixed pool of worker threads for data-parallel loops. `ParallelFor(n, fn)` runs fn(0..n-1)
// across the pool (the calling thread takes part) and returns when all are done. Which thread
// runs which index is unspecified, so callers write results into slots indexed by task and
// combine them in index order: that keeps every result independent of the number of workers.
// A task that throws does not stop the others; ParallelFor rethrows the first exception once
// every task has finished. Tasks must not call ParallelFor on the same pool.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fld {

class ThreadPool {
 public:
  explicit ThreadPool(size_t workers);  // workers >= 1; workers-1 threads are started
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t workers() const { return threads_.size() + 1; }
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

 private:
  void WorkerLoop();
  void RunTasks();

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t n_ = 0, next_ = 0, done_ = 0;
  uint64_t generation_ = 0;
  std::exception_ptr error_;  // the first task's exception in the current ParallelFor
  bool stop_ = false;
};

}  // namespace fld
