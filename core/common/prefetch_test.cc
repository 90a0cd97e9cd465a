// Tests of BurstPrefetch (core/common/prefetch.h): every stage of every item runs exactly once,
// before the item is visited, each stage of an item after the one before it, and in bursts of
// whole blocks a block further ahead per stage (never past the last item).
#include "core/common/prefetch.h"

#include <catch2/catch.hpp>
#include <cstddef>
#include <utility>
#include <vector>

namespace fld {
namespace {

struct Event {
  size_t stage, item;
};

// The stage calls a loop over n items makes (visits recorded as stage = SIZE_MAX), in order.
std::vector<Event> Trace(size_t n, size_t stages) {
  std::vector<Event> events;
  BurstPrefetch ahead(n, stages, [&](size_t s, size_t j) { events.push_back({s, j}); });
  for (size_t i = 0; i < n; ++i) {
    ahead.Before(i);
    events.push_back({SIZE_MAX, i});
  }
  return events;
}

TEST_CASE("burst prefetch: each stage of each item once, in stage order, before the item", "[prefetch]") {
  for (size_t stages : {1, 2, 4}) {
    for (size_t n : {0, 1, 15, 16, 17, 100, 257}) {
      INFO("stages " << stages << ", items " << n);
      const std::vector<Event> events = Trace(n, stages);
      std::vector<std::vector<size_t>> when(n, std::vector<size_t>(stages, SIZE_MAX));
      std::vector<size_t> visited(n, SIZE_MAX);
      for (size_t t = 0; t < events.size(); ++t) {
        const Event& e = events[t];
        REQUIRE(e.item < n);
        if (e.stage == SIZE_MAX) {
          visited[e.item] = t;
          continue;
        }
        REQUIRE(e.stage < stages);
        REQUIRE(when[e.item][e.stage] == SIZE_MAX);  // once
        when[e.item][e.stage] = t;
      }
      for (size_t j = 0; j < n; ++j) {
        for (size_t s = 0; s < stages; ++s) {
          REQUIRE(when[j][s] != SIZE_MAX);
          REQUIRE(when[j][s] < visited[j]);
          if (s > 0) REQUIRE(when[j][s - 1] < when[j][s]);
        }
      }
    }
  }
}

TEST_CASE("burst prefetch: a block's stage runs as one burst, a block further ahead per stage", "[prefetch]") {
  constexpr size_t B = BurstPrefetch<void (*)(size_t, size_t)>::kBlock;
  const size_t n = 10 * B, stages = 3;
  const std::vector<Event> events = Trace(n, stages);
  // Between visiting item B - 1 and item B (block 1 starts): each stage over a whole block, the
  // last one block ahead: stage 0 over block 4, stage 1 over block 3, stage 2 over block 2.
  size_t at = 0;
  while (!(events[at].stage == SIZE_MAX && events[at].item == B - 1)) ++at;
  ++at;
  for (size_t s = 0; s < stages; ++s) {
    const size_t block = 1 + stages - s;
    for (size_t k = 0; k < B; ++k, ++at) {
      REQUIRE(events[at].stage == s);
      REQUIRE(events[at].item == block * B + k);
    }
  }
  REQUIRE(events[at].stage == SIZE_MAX);
  REQUIRE(events[at].item == B);
  // No stage runs between the visits of items inside a block.
  for (size_t t = 0; t + 1 < events.size(); ++t)
    if (events[t].stage == SIZE_MAX && (events[t].item + 1) % B != 0 && events[t].item + 1 < n)
      REQUIRE(events[t + 1].stage == SIZE_MAX);
}

}  // namespace
}  // namespace fld
