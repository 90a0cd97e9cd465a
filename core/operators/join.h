// Equi-join, incremental (bilinear):
//   Δ(L ⋈ R) = ΔL ⋈ R_old + L_new ⋈ ΔR
//
//        ΔL ──┬──────────────► ⋈ ◄── I(R) (before ΔR)
//             └─► I(L) ──────► ⋈ ◄── ΔR
//
// Output rows are the left columns followed by the right columns; weights multiply. A row whose
// key has a NULL never matches (SQL equality). With no key columns this is a cross join.
// Outer variants (pad_left: LEFT JOIN, pad_right: RIGHT JOIN, both: FULL JOIN) also emit the
// rows of a side that have no match, padded with NULLs: per key touched by the step, the padded
// rows before (when the other side's count was 0) are retracted and the padded rows after are
// emitted, so the output stays the change of the outer join.
// State: both sides integrated, indexed by key (key encoding -> row encoding -> weight), in an
// ArenaMap (core/zset/arena_map.h) per side, keyed by the key in the compact encoding (an
// integer in 1 to 9 bytes; stored keys, shards and an aggregate's groups use the row encoding): a key's rows and
// weights packed into one record, sorted by row encoding; a key whose record outgrows 4 KiB moves to an ordered map of
// its own, so a change to a key with many rows costs O(log rows) rather than a record rewrite.
// With a ThreadPool of more than one worker and join keys, both traces are sharded by join key
// (core/zset/exchange.h): a step partitions both changes by key, each worker joins its shard,
// and the outputs are put back in the order one shard gives (the order of the input rows), so
// outputs and saved state do not depend on the number of workers.
// A side whose rows are looked up far less often than they are added (the fact side of a join
// with a dimension table that stopped changing; the bids of a join with an aggregate of them,
// which changes a few groups per step) takes a step's rows into a Spine (core/zset/spine.h) of
// sorted runs instead of its hashed trace: its lookups read both. Once the lookups since the
// spine was last merged would have cost more than its rows (a run search is taken as 8 trace
// inserts), its runs are merged into one; or, when lookups have become dense (a step's lookups
// of a side, times 8, at least the rows it adds there), it is folded into the trace, row by row,
// and the rows of such steps go to the trace directly. A spine is folded before the state is
// saved. Which rows sit where never changes an output: a key's rows are
// summed and read in row order either way. Inner joins only, on sides with no waterline and not
// reading an aggregate.
// With waterlines on both sides of key column i, the rows of both sides whose key column i lies
// below the smaller one are discarded after each step: no future change of either side can
// have that key, so such rows neither match nor change padding again.
// Set by the planner's pass over the compiled circuit (core/plan/join_pushdown.h), neither
// changing what any consumer reads: output columns no consumer reads are not stored (a NULL
// takes their place in the trace's row encodings, so rows differing only there share one entry)
// and come out NULL; an inner join whose only consumer filters on one side's columns drops that
// side's rows failing the filter on entry (the consumer still applies it).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/circuit/operator.h"
#include "core/circuit/waterline.h"
#include "core/common/thread_pool.h"
#include "core/expr/expr.h"
#include "core/operators/aggregate.h"
#include "core/zset/arena_map.h"
#include "core/zset/exchange.h"
#include "core/zset/spine.h"

namespace fld {

class JoinOp : public Operator {
 public:
  JoinOp(std::vector<PhysType> left_types, std::vector<PhysType> right_types, std::vector<int> left_keys,
         std::vector<int> right_keys, bool pad_left, bool pad_right, ThreadPool* pool = nullptr);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override;
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  bool HasKeyedState() const override { return true; }
  void TrackChanges() override;
  void SaveChanges(StateWriter& w, StateDelta& d) override;
  void BeginRestore(StateReader& r) override;
  void RestoreEntry(std::string_view key, std::string_view value) override;
  void EndRestore() override;
  bool CanBackState() const override { return !shards_[0].left.gc.active() && !shards_[0].right.gc.active(); }
  void BackState(StateSource* source, uint32_t node, bool all_stored) override;
  void StateCommitted(bool evict) override;
  size_t StateMemoryBytes() const override;
  const std::vector<int>& left_keys() const { return shards_[0].left.keys; }
  const std::vector<int>& right_keys() const { return shards_[0].right.keys; }
  // Key column `key` (an index into the key lists) has waterline `w` on both sides (their minimum).
  void SetWaterline(int key, WaterlineRef w);
  size_t left_width() const { return shards_[0].left.types.size(); }
  bool outer() const { return pad_left_ || pad_right_; }
  // needed[c], c over the output columns (left then right): whether a consumer reads column c.
  // Key columns are always kept.
  void SetNeededColumns(const std::vector<bool>& needed);
  // Inner joins only: `pred` over the columns of the left (or right) side, TRUE for the rows kept.
  void SetSideFilter(bool left, BoundExprPtr pred);
  // Set by the planner's pass (core/plan/join_pushdown.h): this inner join's left (or right)
  // input is the output of `agg`, grouped by exactly that side's key columns in order, so the
  // aggregate's groups are that side's integrated input, one row per key. The side then keeps no
  // trace and reads the aggregate's groups instead (a view joining two aggregates on their keys,
  // as the bank's balances do, holds each group once, not three times). The old rows a step
  // needs (ΔL ⋈ R_old when the right side reads an aggregate, which has already stepped) are
  // the group's row minus the side's change for that key; outputs are the same rows in the same
  // order as with a trace, but for columns no consumer reads (these carry their values, not
  // NULL). Returns false, changing nothing, for an outer join, a side with a filter or a
  // waterline, or an aggregate sharded differently.
  bool ReadSideFrom(bool left, AggregateOp* agg);
  // The record size from which a key's rows move to an ordered map (tests lower it).
  void set_big_key_bytes(size_t n) { big_key_bytes_ = n; }
  // What a lookup in a spine's run counts for, in trace inserts (0: lookups never fold a spine;
  // tests set it so).
  void set_spine_lookup_cost(size_t n) { spine_lookup_cost_ = n; }

 private:
  using Rows = std::map<std::string, int64_t, std::less<>>;  // row encoding -> weight
  // A key's record: kOne then the row when the key has exactly one row, of weight 1 (most keys
  // of a join on a unique key: no length, no weight); else kPacked then its rows in row order
  // (none: the key emptied this step), each [varint (row length << 1) | heavy][row][int64 weight,
  // only when heavy], heavy meaning a weight other than 1 (most rows have weight 1: one byte of
  // framing, where a length and an 8-byte weight took nine); or kBig then the uint32 index of its
  // Rows in `big`. A key whose rows are one row of weight 1 always has the kOne form, whatever its
  // history, unless it is kBig.
  //
  // Rows are in the compact encoding (CompactRow, core/zset/batch.h: integers in 1 to 9 bytes),
  // their order that of those bytes, except that the side's integer key columns hold NULL: the
  // key has their values (equal keys are equal values), and decoding a row (DecodeTraceRow) puts
  // them back. A join on an integer key thus does not store the key once per row.
  //
  // A key that grows past two rows takes the kSlack form instead of kPacked: kSlack, the rows'
  // bytes as a uint32, the rows as in kPacked, then free bytes (half as many again as the rows
  // took when it was last written whole), so that adding a row moves the record in the arena
  // only once in a while, not at every row (a trace of 10M rows on 1M keys rewrote each key's
  // record once per row, and compacting the arena's garbage then took a fifth of the join).
  //
  // Stored (keyed state), a record is the kOne or kPacked record as it is (kSlack as kPacked), or
  // kBigRows then WriteKeyRows's bytes. Older stores hold forms that loading converts: kOneFull
  // and kPackedWide (rows with their key columns; kPackedWide with a length and an 8-byte weight
  // per row), and, from before rows were compact, kOneOld, kPackedOld and kBig records of rows in
  // the row encoding.
  static constexpr char kPackedOld = 0, kBig = 1, kOneOld = 2, kPackedWide = 3, kOneFull = 4, kBigRows = 5, kSlack = 6,
                        kOne = 7, kPacked = 8;
  // A kPacked or kSlack record's rows.
  static std::string_view PackedRows(std::string_view rec);
  // A side's configuration (the same in every shard) and its trace (the shard's keys).
  struct Side {
    std::vector<PhysType> types;
    std::vector<int> keys;
    // Per column: for an integer key column, its index in keys (its value is the key's: the
    // trace's rows hold NULL there); else -1. int_keys: whether any column is one.
    std::vector<int> key_at;
    bool int_keys = false;
    ArenaMap trace;                  // key encoding -> record
    std::vector<Rows> big;           // rows of the big keys
    std::vector<uint32_t> free_big;  // unused entries of big
    size_t big_bytes = 0;            // heap bytes big's rows hold (RowBytes)
    WaterlineIndex gc;               // keys of the trace by the key column with a waterline
    std::vector<bool> needed;        // per column; empty: all
    BoundExprPtr filter;             // null: every row
    StoredEntries stored;            // backed state (core/circuit/operator.h): keys 'L'/'R' + key
    // Keys whose rows all cancelled during this step: their records stay, empty, until the step
    // ends (EraseEmptied), so a key updated by a retraction and then an insertion (an aggregate's
    // -old/+new) is rewritten in place rather than erased and inserted again, and is neither
    // remembered as erased nor saved as an erasure followed by a put.
    std::vector<std::string> emptied;
    AggregateOp* source = nullptr;  // ReadSideFrom: the aggregate whose groups are this side
    std::string scratch;            // Add's buffer for a new key's record
    Spine spine;                    // rows added but not yet in the trace (see the top of this file)
    size_t spine_cost = 0;          // lookups in the spine since it was last merged, in trace inserts
  };
  struct alignas(64) Shard {  // (cache-line aligned: see AggregateOp::Shard)
    Side left, right;
  };
  // One shard's step over its rows of both changes. With counts: the number of output rows of
  // each left row, then of each right row, in row order (inner joins).
  void StepShard(Shard& sh, const Batch& dl, const Batch& dr, BatchBuilder* out, std::vector<uint32_t>* counts);
  Shard& ShardOf(std::string_view key) { return shards_[KeyShard(key, static_cast<uint32_t>(shards_.size()))]; }
  // The rows of a step's change of a side, by key: the rows with a non-NULL key, sorted by key
  // (an aggregate emits its changes in key order, so the sort is usually a check).
  struct ChangeIndex {
    bool built = false;
    std::vector<std::string> keys;  // per row of the change
    std::vector<uint32_t> rows;     // rows with a key, in key order
    size_t at = 0;                  // where the last lookup's key belongs in rows
  };
  // The rows of `key` (whose ArenaMap::Hash is `hash`) before the step on a side reading an
  // aggregate (ReadSideFrom), which has stepped already: the group's row now, minus the side's
  // change `d` for that key (indexed in *index at the first call), consolidated in row order,
  // into the first entries of *out (returns how many: the others keep their buffers for the next
  // call). Keys asked in ascending order (an aggregate's changes are) walk the index once.
  using KeyRows = std::vector<std::pair<std::string, int64_t>>;
  size_t OldRows(const Side& side, uint32_t shard, const Batch& d, const std::string& key, uint32_t hash,
                 ChangeIndex* index, KeyRows* out);
  // Whether a side takes its rows into its spine: an inner join's side that keeps a trace and
  // has no waterline.
  bool SpineSide(const Side& side) const { return !side.source && !side.gc.active() && !outer(); }
  // Whether a step's `lookups` of a side's keys are many for the `rows` it adds to the side: its
  // rows then go to its trace, not its spine.
  bool Dense(size_t lookups, size_t rows) const;
  // Before a step's `lookups` of side's keys (it adds `rows` rows to the side): once they and
  // the lookups since the spine was last merged or folded cost more than its rows, merges its
  // runs, or folds it into the trace when the step's lookups are dense.
  void BeforeLookups(Side* side, size_t lookups, size_t rows);
  // Adds every row of side's spine to its trace and empties the spine.
  void FoldSpine(Side* side);
  void FoldSpines();
  // f(row, weight) for each row of `key` (in the trace's form) with a non-zero weight, in row
  // order: those of the trace's slot (kNone: none) summed with those of the spine. `buf` is
  // scratch space.
  using RowViews = std::vector<std::pair<std::string_view, int64_t>>;
  template <typename F>
  static void ForEachKeyRow(const Side& side, uint32_t slot, std::string_view key, RowViews* buf, F f);
  // Erases the keys of side.emptied whose records are still empty.
  void EraseEmptied(Side* side);
  void SaveTrace(StateWriter& w, bool left) const;
  // Appends row r of b (a side's batch) to out's columns from `first`, NULL where not needed.
  static void AppendSide(const Side& side, const Batch& b, size_t r, BatchBuilder* out, size_t first);
  static void EncodeSide(const Side& side, const Batch& b, size_t r, std::string* out);
  // A row of the side's trace (or one stored in any older form) in the trace's form: compact,
  // integer key columns NULL. Fails (corruption) on an invalid row encoding.
  static std::string TraceRow(const Side& side, std::string_view row);
  // The integer values of key's columns (the others left as they are) into vals.
  static void KeyInts(const Side& side, std::string_view key, std::vector<int64_t>* vals);
  // Appends a trace row of the side to out's columns from `first`, the integer key columns from
  // `key_vals` (KeyInts of the row's key).
  static void DecodeTraceRow(const Side& side, const std::vector<int64_t>& key_vals, std::string_view row,
                             BatchBuilder* out, size_t first);
  void Add(Side* side, const std::string& key, std::string_view row, int64_t w) {
    Add(side, key, row, w, ArenaMap::Hash(key));
  }
  // Adds row (in the trace's form) with weight w to `key` (in the trace's form, hash its
  // ArenaMap::Hash). `load`: a key missing from memory may be in the store (false while loading
  // it from there).
  void Add(Side* side, const std::string& key, std::string_view row, int64_t w, uint32_t hash, bool load = true);
  // The slot of key (in the trace's form) in the side's trace, read from the store (under the
  // key's row encoding) first when it is backed and the key
  // is not in memory; kNone when the side has no such key.
  uint32_t Locate(Side* side, const std::string& key, uint32_t hash);
  // A stored entry's value (a packed record, or kBig and WriteKeyRows's bytes) into side, under
  // key (in the trace's form).
  void LoadEntry(Side* side, const std::string& key, std::string_view value);
  // Heap bytes a row of a big key holds, about: its tree node and its string.
  static size_t RowBytes(std::string_view row) { return 64 + row.size(); }
  // An unused entry of side->big.
  static uint32_t AllocBig(Side* side);
  // Before erasing slot s: remembers its key when the side is backed.
  static void Forget(Side* side, uint32_t s) { side->stored.Erased(StandardRow(side->trace.Key(s))); }
  // f(row encoding, weight) for each row of the key in slot s, in row order.
  template <typename F>
  static void ForEachRow(const Side& side, uint32_t s, F f);
  static void EraseKey(Side* side, uint32_t s);
  // Gives a big key's rows back (before its record leaves memory); nothing for a packed one.
  static void FreeBig(Side* side, uint32_t s);
  void LoadTrace(StateReader& r, bool left);
  static void ClearSide(Side* side);
  // One key's rows as checkpoints write them: row count, then (row, weight) in row order (rows
  // in the trace's form).
  static void WriteKeyRows(StateWriter& w, const Side& side, uint32_t s);
  void ReadKeyRows(StateReader& r, Side* side, const std::string& key);
  static void CollectGarbage(Shard& sh);
  // The weight of the rows of key (in the trace's form), and the padded rows of its rows.
  int64_t Count(Side* s, const std::string& key);
  void EmitPadded(Side* side, bool side_is_left, const std::string& key, int64_t sign, BatchBuilder* out);

  std::vector<Shard> shards_;  // one per worker (one without a pool or without keys)
  ThreadPool* pool_;
  bool pad_left_, pad_right_;
  size_t big_key_bytes_ = 4096;
  // A lookup binary-searches each run: a dozen or so cache misses, where an insert takes one or two.
  size_t spine_lookup_cost_ = 8;
};

}  // namespace fld
