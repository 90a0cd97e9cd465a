// Spine: a keyed trace's recent changes as sorted runs, for a trace written far more often than it
// is read (DBSP's spine; dbsp.md's "trace").
//
// Inserting each row into a hashed trace as it arrives costs a cache miss or two per row (its
// key's slot and record lie anywhere in memory), whether or not anything ever looks the key up.
// The fact side of a join whose other side rarely changes (a dimension table loaded once, an
// aggregate changing a few groups per step) is looked up a handful of times per step while
// thousands of rows are added. A Spine takes a step's rows as they come (appended to a buffer)
// and sorts them into a run when the step seals it: a row costs a copy and its share of a sort
// of the step's rows, all in cache. Runs are not merged as they come (a merge copies every row
// again): only small runs (steps of a few rows), four at a time, so that runs stay few per row.
// The owner merges them all (Merge) when its lookups, each searching every run, come to cost
// more than that merge.
//
// A run holds entries (key, row, weight) sorted by key then row (bytes, memcmp order), equal
// pairs summed and zero weights dropped, as [varint header][key][row][weight]: the header is the
// key's length plus one, or 0 for "the previous entry's key" (a key's rows lie together, so it is
// stored once per run), then the row's length shifted left with a low bit set when a zigzag varint
// weight other than 1 follows. Every 16th entry starts a block whose offset is indexed and which
// always spells its key: a lookup binary-searches the blocks, then reads forward. Each run has a
// Bloom filter of its keys, so a lookup skips, after one word, the runs without its key.
//
// A key's rows may be spread over several runs, and the same row may appear in more than one (a
// retraction in a later run than the insertion): readers sum them. The owner folds a spine into
// its hashed trace (Drain) when lookups come to cost more than the inserts saved,
// and before its state is saved.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fld {

class Spine {
 public:
  // Adds a row to the run being built (the rows since the last Seal).
  void Add(std::string_view key, std::string_view row, int64_t w);
  // Turns the rows added since the last Seal into a run (sorted, equal pairs summed, zero weights
  // dropped), then merges the newest four runs while all of them are small (under kSmallRun rows).
  void Seal();
  // Merges every run into one (equal pairs summed, zero weights dropped).
  void Merge();
  // No rows in runs and none being built.
  bool empty() const { return runs_.empty() && pending_.empty(); }
  size_t runs() const { return runs_.size(); }
  // Entries in the runs (after consolidation within each run).
  size_t rows() const { return rows_; }
  // Bytes held: the runs, their block indexes and the run being built.
  size_t MemoryBytes() const;
  // f(row, weight) for each entry of `key`: run by run, oldest first, each run's in row order. The
  // same row may come more than once (from different runs); the caller sums.
  template <typename F>
  void ForKey(std::string_view key, F f) const {
    const uint64_t h = FilterHash(key);
    for (const Run& run : runs_) {
      if (!MayHave(run, h)) continue;
      Cursor c(run, FirstBlockFor(run, key));
      while (c.Next()) {
        const int cmp = c.key.compare(key);
        if (cmp > 0) break;
        if (cmp == 0) f(c.row, c.w);
      }
    }
  }
  // f(key, row, weight) for every entry of every sealed run, run by run.
  template <typename F>
  void ForEach(F f) const {
    for (const Run& run : runs_) {
      Cursor c(run, 0);
      while (c.Next()) f(c.key, c.row, c.w);
    }
  }
  // f(key, row, weight) for every entry of every sealed run, run by run; after each run,
  // run_done() (the entries' views die next), then the run's memory is given back. The spine is
  // then empty (the run being built dropped too).
  template <typename F, typename D>
  void Drain(F f, D run_done) {
    for (Run& run : runs_) {
      Cursor c(run, 0);
      while (c.Next()) f(c.key, c.row, c.w);
      run_done();
      run = Run{};
    }
    Clear();
  }
  // Drops every run and the run being built.
  void Clear();

 private:
  static constexpr size_t kBlockRows = 16;
  static constexpr size_t kSmallRun = 4096;
  struct Run {
    std::string bytes;
    std::vector<uint32_t> blocks;  // offset of every kBlockRows-th entry
    size_t rows = 0;
    // A Bloom filter of the run's keys, about 8 bits per key, two bits set per key in one word
    // (a lookup of a key the run lacks, as most are, reads one word of it: 5% pass anyway).
    std::vector<uint64_t> filter;
    int filter_shift = 64;  // FilterHash's high bits past it pick the word
  };
  // A key's hash for the filters (its bits mixed, so that any of them may be used).
  static uint64_t FilterHash(std::string_view key);
  static uint64_t FilterBits(uint64_t h) { return (uint64_t{1} << (h & 63)) | (uint64_t{1} << ((h >> 6) & 63)); }
  static size_t FilterWord(const Run& run, uint64_t h) {
    return run.filter_shift >= 64 ? 0 : static_cast<size_t>(h >> run.filter_shift);
  }
  static bool MayHave(const Run& run, uint64_t h) {
    const uint64_t bits = FilterBits(h);
    return (run.filter[FilterWord(run, h)] & bits) == bits;
  }
  // Reads a run's entries from an offset where a block starts.
  struct Cursor {
    Cursor(const Run& run, size_t offset) : p(run.bytes.data() + offset), end(run.bytes.data() + run.bytes.size()) {}
    bool Next();
    const char* p;
    const char* end;
    std::string_view key, row;
    int64_t w = 0;
  };
  // Writes a run's entries in order.
  class Writer {
   public:
    explicit Writer(size_t reserve_bytes);
    void Put(std::string_view key, std::string_view row, int64_t w);
    // The run, its filter built.
    Run Finish();

   private:
    Run run_;
    std::string last_key_;
    std::vector<uint64_t> hashes_;  // FilterHash of each key written
  };
  // The offset of the block from which a run's entries of `key` are read: the last block whose
  // first key sorts before `key` (a key's entries may start in the block before the one it opens).
  static size_t FirstBlockFor(const Run& run, std::string_view key);
  // Merges runs_[first..] into one run.
  void MergeTail(size_t first);

  std::vector<Run> runs_;  // oldest first
  size_t rows_ = 0;
  // The run being built: entries [varint key length][varint row length][key][row][int64 weight],
  // and per entry its key's first 8 bytes (big-endian, zero-padded) and its offset.
  struct Ref {
    uint64_t prefix;
    uint32_t at;
  };
  std::string pending_;
  std::vector<Ref> refs_;
};

}  // namespace fld
