#include "core/common/thread_pool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>

namespace fld {

TEST_CASE("thread pool: a throwing task lets the others finish, then ParallelFor rethrows it", "[thread_pool]") {
  for (size_t workers : {1, 2, 4}) {
    ThreadPool pool(workers);
    std::atomic<int> ran{0};
    auto task = [&](size_t i) {
      if (i == 37) throw std::runtime_error("task 37");
      ++ran;
    };
    REQUIRE_THROWS_WITH(pool.ParallelFor(100, task), "task 37");
    if (workers > 1) CHECK(ran == 99);  // (serially the loop stops at the throw)
    // The pool is still usable.
    std::atomic<int> again{0};
    pool.ParallelFor(50, [&](size_t) { ++again; });
    CHECK(again == 50);
  }
}

}  // namespace fld
