// Tests of Spine (core/zset/spine.h) against a std::map model of the summed weights: random rows
// over many seals and merges, retractions cancelling rows across runs, keys with many rows
// spanning blocks, empty keys and NUL bytes; which runs are merged.
#include "core/zset/spine.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace fld {
namespace {

using Model = std::map<std::pair<std::string, std::string>, int64_t>;

// The spine's rows summed per (key, row), zero sums dropped, read both ways: every entry, and
// key by key (ForKey must give a key's entries run by run in row order).
void CheckSame(const Spine& s, const Model& model, const std::vector<std::string>& keys) {
  Model all;
  s.ForEach([&](std::string_view k, std::string_view r, int64_t w) {
    REQUIRE(w != 0);
    all[{std::string(k), std::string(r)}] += w;
  });
  std::erase_if(all, [](const auto& e) { return e.second == 0; });
  REQUIRE(all == model);
  for (const std::string& key : keys) {
    std::map<std::string, int64_t> got;
    s.ForKey(key, [&](std::string_view r, int64_t w) { got[std::string(r)] += w; });
    std::erase_if(got, [](const auto& e) { return e.second == 0; });
    std::map<std::string, int64_t> want;
    for (auto it = model.lower_bound({key, ""}); it != model.end() && it->first.first == key; ++it)
      want[it->first.second] = it->second;
    REQUIRE(got == want);
  }
}

TEST_CASE("Spine matches a model of summed weights over random runs", "[spine]") {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    const int keyspace = seed % 2 ? 50 : 5000;  // many rows per key (spanning blocks), or few
    auto rand_str = [&](size_t max_len) {
      std::string s(rng() % (max_len + 1), '\0');
      for (char& c : s) c = static_cast<char>(rng() % 3);  // shared prefixes, NUL bytes
      return s;
    };
    std::vector<std::string> keys;
    for (int i = 0; i < keyspace; ++i) keys.push_back(rand_str(6));  // the empty key among them
    keys.push_back("absent");
    Spine s;
    Model model;
    std::vector<std::pair<std::string, std::string>> added;  // for retractions
    const int seals = 60 + static_cast<int>(rng() % 60);
    for (int step = 0; step < seals; ++step) {
      const int n = static_cast<int>(rng() % (seed <= 4 ? 3000 : 40));  // large steps, or tiny ones
      for (int i = 0; i < n; ++i) {
        std::string key, row;
        int64_t w;
        if (!added.empty() && rng() % 4 == 0) {  // retract an earlier row (maybe in an older run)
          std::tie(key, row) = added[rng() % added.size()];
          w = -1;
        } else {
          key = keys[rng() % keyspace];
          row = rand_str(5);
          w = rng() % 5 == 0 ? static_cast<int64_t>(rng() % 1000) - 500 : 1;  // mostly 1; some 0
          added.emplace_back(key, row);
        }
        s.Add(key, row, w);
        if (w != 0 && (model[{key, row}] += w) == 0) model.erase({key, row});
      }
      s.Seal();
      if (rng() % 16 == 0) {
        s.Merge();
        REQUIRE(s.runs() <= 1);
      }
      if (step % 20 == 19) CheckSame(s, model, keys);
    }
    CheckSame(s, model, keys);
    // Tiny steps (seeds 5 to 8: under 5000 rows in all) leave few runs: small ones merge.
    if (seed > 4) REQUIRE(s.runs() <= 6);
    s.Merge();
    REQUIRE(s.runs() <= 1);
    CheckSame(s, model, keys);
    s.Clear();
    REQUIRE(s.empty());
    REQUIRE(s.rows() == 0);
  }
}

TEST_CASE("Spine leaves large runs apart until Merge, and merges small ones as they come", "[spine]") {
  Spine s;
  std::mt19937 rng(7);
  size_t added = 0;
  auto check_all = [&] {
    size_t entries = 0;
    s.ForEach([&](std::string_view, std::string_view, int64_t w) {
      REQUIRE(w == 1);
      ++entries;
    });
    REQUIRE(entries == added);
  };
  for (int step = 0; step < 100; ++step) {
    const int n = 4096 + static_cast<int>(rng() % 3000);  // every run large
    for (int i = 0; i < n; ++i) s.Add(std::to_string(rng() % 1000000), std::to_string(step * 10000 + i), 1);
    added += n;
    s.Seal();
  }
  REQUIRE(s.runs() == 100);    // a large run is not copied again as others come
  REQUIRE(s.rows() == added);  // distinct rows: nothing consolidated away
  check_all();
  s.Merge();
  REQUIRE(s.runs() == 1);
  REQUIRE(s.rows() == added);
  check_all();
  for (int step = 0; step < 1000; ++step) {
    for (int i = 0; i < 10; ++i) s.Add(std::to_string(rng() % 1000000), std::to_string(2000000 + step * 10 + i), 1);
    added += 10;
    s.Seal();
  }
  // 10000 rows in runs of 10: merged four at a time while under 4096 rows, so a few runs remain.
  INFO(s.runs() << " runs");
  REQUIRE(s.runs() <= 8);
  REQUIRE(s.rows() == added);
  check_all();
  // Drain: every entry once, run by run, then nothing left.
  const size_t runs = s.runs();
  size_t drained = 0, done = 0, at_done = 0;
  s.Drain(
      [&](std::string_view, std::string_view, int64_t w) {
        REQUIRE(w == 1);
        ++drained;
      },
      [&] {
        REQUIRE(drained > at_done);  // each run had entries
        at_done = drained;
        ++done;
      });
  REQUIRE(drained == added);
  REQUIRE(done == runs);
  REQUIRE(s.empty());
  REQUIRE(s.MemoryBytes() == 0);
}

TEST_CASE("Spine drops rows whose weights cancel within and across runs", "[spine]") {
  Spine s;
  s.Add("k", "a", 1);
  s.Add("k", "a", -1);  // cancels within the run
  s.Add("k", "b", 2);
  s.Seal();
  REQUIRE(s.rows() == 1);
  for (int i = 0; i < 3; ++i) {
    s.Add("k", "b", -2);
    s.Seal();
    s.Add("k", "b", 2);
    s.Seal();
  }
  s.Add("k", "b", -2);
  s.Seal();  // runs of one row each, merged four at a time: the sum cancels
  int64_t sum = 0;
  s.ForKey("k", [&](std::string_view r, int64_t w) {
    REQUIRE(r == "b");
    sum += w;
  });
  REQUIRE(sum == 0);
  s.Seal();          // nothing pending: no run
  s.Add("", "", 5);  // the empty key and row
  s.Seal();
  int64_t got = 0;
  s.ForKey("", [&](std::string_view r, int64_t w) {
    REQUIRE(r.empty());
    got += w;
  });
  REQUIRE(got == 5);
}

}  // namespace
}  // namespace fld
