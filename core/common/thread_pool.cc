#include "core/common/thread_pool.h"

#include <utility>

namespace fld {

ThreadPool::ThreadPool(size_t workers) {
  for (size_t i = 1; i < workers; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_work_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::RunTasks() {
  for (;;) {
    size_t i;
    const std::function<void(size_t)>* fn;
    {
      std::lock_guard lk(mu_);
      if (fn_ == nullptr || next_ >= n_) return;
      i = next_++;
      fn = fn_;
    }
    std::exception_ptr error;
    try {
      (*fn)(i);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lk(mu_);
      if (error && !error_) error_ = error;
      if (++done_ == n_) cv_done_.notify_all();
    }
  }
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lk(mu_);
      cv_work_.wait(lk, [&] { return stop_ || (generation_ != seen && fn_ != nullptr); });
      if (stop_) return;
      seen = generation_;
    }
    RunTasks();
  }
}

void ThreadPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (threads_.empty() || n == 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  {
    std::lock_guard lk(mu_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    done_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  cv_work_.notify_all();
  RunTasks();
  std::unique_lock lk(mu_);
  cv_done_.wait(lk, [&] { return done_ == n_; });
  fn_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace fld
