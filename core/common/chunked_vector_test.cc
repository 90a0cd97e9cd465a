// Tests of ChunkedVector (core/common/chunked_vector.h): elements keep their addresses as it
// grows past chunks, are value-initialized, and are each destroyed once by clear and by the
// destructor; a move leaves the source empty.
#include "core/common/chunked_vector.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace fld {
namespace {

int live = 0;
struct Counted {
  Counted() { ++live; }
  ~Counted() { --live; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  std::string s;
  int64_t n = 0;
};

TEST_CASE("ChunkedVector keeps elements in place and destroys each once", "[chunked_vector]") {
  {
    ChunkedVector<Counted, 8> v;
    std::vector<Counted*> at;
    for (int i = 0; i < 100; ++i) {
      Counted& c = v.emplace_back();
      REQUIRE(c.n == 0);
      REQUIRE(c.s.empty());
      c.n = i;
      c.s = std::string(40, static_cast<char>('a' + i % 26));  // on the heap: a leak would show
      at.push_back(&c);
    }
    REQUIRE(v.size() == 100);
    REQUIRE(live == 100);
    REQUIRE(v.MemoryBytes() == 100 * sizeof(Counted));
    for (int i = 0; i < 100; ++i) {
      REQUIRE(&v[static_cast<size_t>(i)] == at[static_cast<size_t>(i)]);
      REQUIRE(v[static_cast<size_t>(i)].n == i);
    }
    ChunkedVector<Counted, 8> moved = std::move(v);
    REQUIRE(v.empty());
    REQUIRE(moved.size() == 100);
    REQUIRE(&moved[99] == at[99]);
    REQUIRE(live == 100);
    moved.clear();
    REQUIRE(live == 0);
    REQUIRE(moved.empty());
    for (int i = 0; i < 20; ++i) moved.emplace_back().n = i;
    REQUIRE(moved[19].n == 19);
    REQUIRE(live == 20);
  }
  REQUIRE(live == 0);  // the destructor
}

}  // namespace
}  // namespace fld
