// Spilled runs (wal/spill.h): changes written to sorted runs on disk and merged back with what is
// still in memory give, row for row, the consolidation of all the changes (checked against a map
// of encoding -> summed weight), with rows that cancel across runs left out; a run's file goes
// with it, and a file changed behind its back is an I/O error, not wrong rows.
#include "wal/spill.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/common/temp_dir.h"
#include "core/zset/batch.h"

namespace fld {
namespace {

const std::vector<PhysType> kTypes = {PhysType::kI64, PhysType::kStr};

Batch RandomBatch(std::mt19937* rng, size_t rows) {
  BatchBuilder b(kTypes);
  for (size_t i = 0; i < rows; ++i) {
    // Few distinct keys, so rows repeat within a batch and across runs; texts of many lengths
    // (a length's bytes come before the text in the encoding), some long.
    const int64_t id = static_cast<int64_t>((*rng)() % 50) - 25;
    const size_t len = (*rng)() % 7 == 0 ? 600 + (*rng)() % 3 : (*rng)() % 4;
    std::string text(len, static_cast<char>('a' + (*rng)() % 3));
    std::vector<Value> row = {Value::Int(id), (*rng)() % 11 == 0 ? Value::Null() : Value::String(text)};
    b.AppendRow(row, static_cast<int64_t>((*rng)() % 5) - 2);
  }
  return b.Finish();
}

std::vector<std::pair<std::string, int64_t>> Drain(const RowPull& pull) {
  std::vector<std::pair<std::string, int64_t>> out;
  std::string enc;
  int64_t w;
  while (true) {
    enc.clear();
    if (!pull(&enc, &w)) break;
    out.emplace_back(enc, w);
  }
  return out;
}

TEST_CASE("spill: runs merged with the changes in memory equal the consolidation of all", "[wal]") {
  TempDir dir;
  std::mt19937 rng(11);
  for (int round = 0; round < 20; ++round) {
    std::map<std::string, int64_t> expected;  // the oracle: encoding -> summed weight
    std::vector<std::unique_ptr<SpilledRun>> runs;
    const int nruns = static_cast<int>(rng() % 5);
    for (int r = 0; r <= nruns; ++r) {
      std::vector<Batch> parts;
      for (int p = 0, np = 1 + static_cast<int>(rng() % 3); p < np; ++p)
        parts.push_back(RandomBatch(&rng, rng() % 300));
      for (const Batch& b : parts)
        for (size_t i = 0; i < b.size(); ++i) {
          std::string enc;
          EncodeRow(&enc, b, i);
          expected[enc] += b.weights[i];
        }
      const ConsolidatedRows rows = ConsolidateRows(parts);
      if (r < nruns) {
        runs.push_back(
            SpilledRun::Write(dir.path() + "/" + std::to_string(runs.size()) + ".run", ConsolidatedPull(parts, rows)));
        REQUIRE(runs.back()->rows() == rows.rows.size());
        REQUIRE(std::filesystem::file_size(runs.back()->path()) == runs.back()->bytes());
        continue;
      }
      // The last changes stay in memory, as a checkpoint finds them.
      std::vector<RowPull> sources;
      for (const auto& run : runs) sources.push_back(run->Read());
      sources.push_back(ConsolidatedPull(parts, rows));
      const auto merged = Drain(MergeSorted(std::move(sources)));
      std::vector<std::pair<std::string, int64_t>> want;
      for (const auto& [enc, w] : expected)
        if (w != 0) want.emplace_back(enc, w);
      REQUIRE(merged == want);  // std::map's order is the encodings' byte order
      // The same merge pulled ahead on a thread of its own.
      sources.clear();
      for (const auto& run : runs) sources.push_back(run->Read());
      sources.push_back(ConsolidatedPull(parts, rows));
      REQUIRE(Drain(PullAhead(MergeSorted(std::move(sources)))) == want);
      // A run reads back as often as asked, the same each time.
      for (const auto& run : runs) REQUIRE(Drain(run->Read()) == Drain(run->Read()));
    }
    std::vector<std::string> paths;
    for (const auto& run : runs) paths.push_back(run->path());
    runs.clear();
    for (const std::string& p : paths) REQUIRE_FALSE(std::filesystem::exists(p));
  }
}

TEST_CASE("spill: merging orders short encodings and zero bytes as memcmp does", "[wal]") {
  // The merge compares rows' first 16 bytes as numbers before the rest: encodings shorter than
  // that, or with zero bytes where another one ends, must still come out in byte order. From 1
  // to 17 sources (the tree of matches is not always full), ending at different rows; weights
  // of one row in several sources that cancel leave it out.
  std::mt19937 rng(5);
  for (int round = 0; round < 300; ++round) {
    std::map<std::string, int64_t> expected;
    std::vector<std::map<std::string, int64_t>> inputs(1 + rng() % 17);
    for (auto& in : inputs)
      for (int i = 0, n = static_cast<int>(rng() % 40); i < n; ++i) {
        std::string enc(rng() % 20, '\0');
        for (char& c : enc) c = static_cast<char>(rng() % 3 == 0 ? 0 : rng() % 3 == 0 ? 0xFF : rng() % 4);
        const int64_t w = static_cast<int64_t>(rng() % 4) - 1;
        if (w == 0 || in[enc] + w == 0) continue;  // a source holds no row with weight 0
        in[enc] += w;
        expected[enc] += w;
      }
    std::vector<RowPull> sources;
    for (const auto& in : inputs)
      sources.push_back([it = in.begin(), end = in.end()](std::string* enc, int64_t* w) mutable {
        if (it == end) return false;
        enc->append(it->first);
        *w = it->second;
        ++it;
        return true;
      });
    std::vector<std::pair<std::string, int64_t>> want;
    for (const auto& [enc, w] : expected)
      if (w != 0) want.emplace_back(enc, w);
    REQUIRE(Drain(MergeSorted(std::move(sources))) == want);
  }
  REQUIRE(Drain(MergeSorted({})).empty());  // no sources: no rows
}

TEST_CASE("spill: an empty run, and a run whose file was changed", "[wal]") {
  TempDir dir;
  auto none = SpilledRun::Write(dir.path() + "/e.run", [](std::string*, int64_t*) { return false; });
  REQUIRE(none->rows() == 0);
  REQUIRE(Drain(none->Read()).empty());
  REQUIRE(Drain(MergeSorted({none->Read(), none->Read()})).empty());

  std::mt19937 rng(5);
  std::vector<Batch> parts = {RandomBatch(&rng, 2000)};
  const ConsolidatedRows rows = ConsolidateRows(parts);
  auto run = SpilledRun::Write(dir.path() + "/r.run", ConsolidatedPull(parts, rows));
  REQUIRE(run->rows() > 100);
  const uintmax_t size = std::filesystem::file_size(run->path());
  auto fails_with_io = [&] {
    try {
      Drain(run->Read());
    } catch (const Error& e) {
      REQUIRE(e.kind() == ErrorKind::kIo);
      REQUIRE(std::string(e.what()).find(run->path()) != std::string::npos);
      return true;
    }
    return false;
  };
  std::filesystem::resize_file(run->path(), size - 3);  // cut short
  REQUIRE(fails_with_io());
  std::filesystem::resize_file(run->path(), size + 5);  // longer than written
  REQUIRE(fails_with_io());
}

TEST_CASE("spill: a run that cannot be written is an I/O error naming its file", "[wal]") {
  TempDir dir;
  std::vector<Batch> parts;
  std::mt19937 rng(3);
  parts.push_back(RandomBatch(&rng, 100));
  const ConsolidatedRows rows = ConsolidateRows(parts);
  const std::string path = dir.path() + "/missing/folder/x.run";
  try {
    SpilledRun::Write(path, ConsolidatedPull(parts, rows));
    FAIL("no error");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::kIo);
    REQUIRE(std::string(e.what()).find(path) != std::string::npos);
  }
  if (access("/dev/full", W_OK) == 0) {
    // A full disk (writes to /dev/full fail with ENOSPC): the error says so. Through a link,
    // which is what the failed run deletes.
    const std::string full = dir.path() + "/full.run";
    std::filesystem::create_symlink("/dev/full", full);
    try {
      SpilledRun::Write(full, ConsolidatedPull(parts, rows));
      FAIL("no error");
    } catch (const Error& e) {
      REQUIRE(e.kind() == ErrorKind::kIo);
      REQUIRE(std::string(e.what()).find("No space left") != std::string::npos);
    }
  }
}

// A source of n rows of varied lengths (some past a block's worth of bytes alone); after
// `throw_at` rows it throws an I/O error.
RowPull Numbered(size_t n, size_t throw_at = SIZE_MAX) {
  return [n, throw_at, i = size_t{0}](std::string* enc, int64_t* w) mutable {
    if (i == throw_at) Fail(ErrorKind::kIo, "source failed at row {}", i);
    if (i == n) return false;
    const size_t len = i % 1000 == 999 ? (size_t{3} << 20) : i % 37;
    enc->append(std::to_string(i));
    enc->append(len, static_cast<char>('a' + i % 26));
    *w = static_cast<int64_t>(i) - 7;
    ++i;
    return true;
  };
}

TEST_CASE("spill: rows pulled ahead on a thread are the source's, errors included", "[wal]") {
  for (size_t n : {size_t{0}, size_t{1}, size_t{5000}}) REQUIRE(Drain(PullAhead(Numbered(n))) == Drain(Numbered(n)));
  // The error reaches the caller after the rows before it, with its kind and text.
  const RowPull failing = PullAhead(Numbered(5000, 2500));
  std::string enc;
  int64_t w;
  size_t got = 0;
  try {
    for (;; ++got) {
      enc.clear();
      if (!failing(&enc, &w)) break;
    }
    FAIL("no error");
  } catch (const Error& e) {
    REQUIRE(e.kind() == ErrorKind::kIo);
    REQUIRE(std::string(e.what()).find("source failed at row 2500") != std::string::npos);
  }
  REQUIRE(got == 2500);
  // Left before the end (an endless source): dropping it stops its thread.
  for (int i = 0; i < 3; ++i) {
    RowPull endless = PullAhead(Numbered(SIZE_MAX));
    for (int k = 0; k < 10; ++k) {
      enc.clear();
      REQUIRE(endless(&enc, &w));
      REQUIRE(w == k - 7);
    }
  }
}

}  // namespace
}  // namespace fld
