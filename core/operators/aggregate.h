// GROUP BY aggregation, incremental.
//
// Input columns: the group key columns first (num_keys of them), then the aggregates' argument
// columns (AggSpec::arg indexes the input). Output: one row per group, the key columns then one
// column per aggregate. Per step:
//   1. pre-aggregate the change batch by group (a 64K-row batch over 9 groups touches state 9
//      times); a single integer key takes a vectorized fast path with no per-row hashing of
//      strings when its values span a small range;
//   2. for each changed group, in key order: compute the old output row, fold in the partial,
//      compute the new row, and emit (-1 old, +1 new) when they differ.
// Every aggregate stays right under deletions (weight -1):
//   - COUNT, SUM, AVG are linear (non-NULL count, sum); STDDEV_POP/SAMP and VAR_POP/SAMP add the
//     sum of squares (exact in 128 bits for integers and decimals); over DECIMAL(p > 18) they keep
//     the multiset of values and compute each result exactly in 512 bits from it;
//   - BIT_AND, BIT_OR, BIT_XOR keep per bit the weighted count of values having it set (BIT_AND:
//     count == non-NULL count; BIT_OR: count > 0; BIT_XOR: count odd);
//   - MIN, MAX (and EVERY/SOME, which the binder maps to MIN/MAX over BOOLEAN) and every DISTINCT
//     aggregate keep per group an ordered multiset value -> weight;
//   - ARG_MIN(v, k) / ARG_MAX(v, k) keep an ordered multiset of (k, v) pairs and answer with the v
//     of the smallest / largest pair (ties on k go to the smallest / largest v, NULL smallest);
//     rows whose k is NULL count only when no row of the group has a non-NULL k (Feldera's rule);
//   - ARRAY_AGG(v) keeps (k, v) pairs too, k being ROW(every aggregate argument of the block):
//     the array lists v (NULL included) in the order of k, which is the order Feldera's
//     arrays come out in; ARRAY_AGG(DISTINCT v) lists the distinct values in order. Over no
//     rows it is the empty array;
//   - MAP_AGG(k, v) keeps (k, v) pairs (key: k, value: v): the map has one entry per non-NULL k
//     (rows whose k is NULL are skipped), a key seen with several values maps to the largest
//     of them (NULL smallest), so the result does not depend on arrival order. Over no rows it
//     is the empty map.
// An aggregate with FILTER (WHERE c) sees only the rows where input column `filter` is TRUE.
// A group whose row weight returns to 0 disappears. Without GROUP BY (global) the output always
// has exactly one row, emitted at the first step even when the input is empty.
// With a waterline on a key column (core/circuit/waterline.h), the groups below it, which no
// future change can reach, are discarded after each step.
// With a ThreadPool of more than one worker, the groups are sharded by key (core/zset/exchange.h):
// a step partitions its rows by group key, each worker updates its shard, and the outputs are
// merged back into key order, so outputs and saved state do not depend on the number of workers.
// Groups live in an ArenaMap (core/zset/arena_map.h): key encoding -> a fixed-width record of
// the row count and, per aggregate, COUNT/SUM/AVG over narrow types inline (the count and the
// sum their type uses), MIN/MAX as their value multiset itself (two words, a small set's values
// one packed buffer away), the kinds keeping (key, value) pairs as those alone (one word), any
// other aggregate as the index of its whole accumulator in a side table, updated in place.
// Over an input that only inserts (an append-only table's rows through filters, projections and
// unions: InputsInsertOnly), no value can leave a group, so MIN, MAX, ARG_MIN and ARG_MAX keep
// only the extreme instead of every value, in the record: integers and doubles as themselves
// (with the count of values), others as the order key (core/zset/order_key.h) of the extreme
// value or (key, value) pair, in InlineKey form. A deletion reaching such an aggregate is an error.
// Result types follow Feldera: SUM(integer) is BIGINT; AVG, STDDEV and VARIANCE have the
// argument's type, so over integers they truncate toward zero and over DECIMAL(p, s) they are
// truncated to s digits; integer sums that overflow 64 bits raise an error. The variance of
// integers is Feldera's integer formula (sumsq - sum * sum / n) / (n or n - 1), each division
// truncating, and STDDEV its truncated square root. SUM(DECIMAL(p, s)) is DECIMAL(38, s); over
// DECIMAL(p > 18) SUM and AVG add in 128 bits, and a sum beyond 38 digits raises an error.
#pragma once

#include <absl/container/btree_map.h>

#include <cstring>
#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/circuit/operator.h"
#include "core/circuit/waterline.h"
#include "core/common/boxed.h"
#include "core/common/chunked_vector.h"
#include "core/common/thread_pool.h"
#include "core/types/types.h"
#include "core/zset/arena_map.h"
#include "core/zset/exchange.h"
#include "core/zset/key_weights.h"
#include "core/zset/order_key.h"
#include "core/zset/value_multiset.h"

namespace fld {

enum class AggKind : uint8_t {
  kCountStar,
  kCount,
  kSum,
  kAvg,
  kMin,
  kMax,
  kArgMin,
  kArgMax,
  kStddevPop,
  kStddevSamp,
  kVarPop,
  kVarSamp,
  kBitAnd,
  kBitOr,
  kBitXor,
  kArrayAgg,
  kMapAgg,
};

// The SQL name of an aggregate kind ("COUNT(*)", "ARG_MIN", "STDDEV_POP", ...).
const char* AggName(AggKind kind);
// STDDEV_POP/STDDEV_SAMP/VAR_POP/VAR_SAMP (`kind`) of n values of type t (an integer or floating
// type) from their sum and sum of squares (BIGINT values for integers, DOUBLE ones for floats;
// either NULL when n is 0), computed as the aggregate computes it, in t.
Value MomentOf(AggKind kind, int64_t n, const Value& sum, const Value& sumsq, const SqlType& t);

struct AggSpec {
  AggKind kind = AggKind::kCountStar;
  bool distinct = false;
  int arg = -1;     // input column (not for COUNT(*))
  int key = -1;     // ARG_MIN/ARG_MAX, ARRAY_AGG: the input column ordered by; MAP_AGG: the keys
  int filter = -1;  // FILTER (WHERE ...): a BOOLEAN input column; -1 = every row
  SqlType arg_type;
  SqlType key_type;
  SqlType result_type;
};

// AVG of n non-NULL values summing to isum (exact: integers, decimals in units of the scale) or
// dsum (floating), in the argument's type as described above; NULL when n is 0.
Value AverageOf(const SqlType& arg_type, int64_t n, int64_t isum, double dsum);

class AggregateOp : public Operator {
 public:
  // `pool` (may be null): with one worker it pre-aggregates large batches in parallel, in
  // fixed-size slices merged in slice order; with more, each worker owns a shard of the groups.
  AggregateOp(std::vector<PhysType> in_types, int num_keys, std::vector<AggSpec> aggs, ThreadPool* pool = nullptr);
  Batch Step(std::span<const Batch* const> inputs) override;
  std::string Name() const override { return num_keys_ == 0 ? "aggregate(global)" : "aggregate"; }
  std::string Describe() const override;
  bool HasState() const override { return true; }
  void SaveState(StateWriter& w) const override;
  void RestoreState(StateReader& r) override;
  bool HasKeyedState() const override { return true; }
  void TrackChanges() override {
    for (Shard& sh : shards_) {
      sh.groups.TrackErasures(true);
      sh.stored.Track();
    }
  }
  void SaveChanges(StateWriter& w, StateDelta& d) override;
  void BeginRestore(StateReader& r) override;
  void RestoreEntry(std::string_view key, std::string_view value) override;
  void EndRestore() override {
    for (Shard& sh : shards_) sh.groups.ClearChanges();
  }
  bool CanBackState() const override { return num_keys_ > 0; }
  void RestoreStoredKey(std::string_view key) override { ShardOf(key).gc.Added(std::string(key)); }
  void BackState(StateSource* source, uint32_t node, bool all_stored) override;
  void StateCommitted(bool evict) override;
  size_t StateMemoryBytes() const override;
  int num_keys() const { return num_keys_; }
  size_t num_shards() const { return shards_.size(); }
  bool has_waterline() const { return shards_[0].gc.active(); }
  // For a join reading this aggregate's groups as its integrated input (JoinOp::ReadSideFrom):
  // the current output row of the group whose key encoding is `key` (the key columns' encodings),
  // as a row encoding (core/zset/batch.h), into *row; false when there is no such group. `shard`
  // is the worker's (KeyShard of the key), `hash` the key's ArenaMap::Hash (the join computed it
  // for its prefetches); a group evicted to the store is read back.
  bool GroupRow(uint32_t shard, std::string_view key, uint32_t hash, std::string* row);
  // Hints ahead of GroupRow calls (ArenaMap::Prefetch, PrefetchRecord) for a key's ArenaMap::Hash.
  void PrefetchGroup(uint32_t shard, uint32_t hash, bool record) const {
    if (record)
      shards_[shard].groups.PrefetchRecord(hash);
    else
      shards_[shard].groups.Prefetch(hash);
  }
  void InputsInsertOnly() override;
  ~AggregateOp() override { FreeRecordHeap(); }
  void SetWaterline(int key_col, WaterlineRef w) {
    for (Shard& sh : shards_) sh.gc = WaterlineIndex(key_col, w);
  }

 private:
  // An aggregate's accumulator for one group. A boxed one (Stored::kBox) is kept per group, so
  // the fields few kinds use are in `wide`, made on first use.
  struct Acc {
    int64_t count = 0;     // weighted count of non-NULL values
    int64_t isum = 0;      // exact sum (integers, decimals in units of the scale)
    double dsum = 0;       // floating sum
    ValueMultiset values;  // MIN/MAX/DISTINCT: value -> weight (no zero weights)
    // ARG_MIN/ARG_MAX, ARRAY_AGG, MAP_AGG: (key, value) -> weight, each pair as the order key
    // (core/zset/order_key.h) of the row (key, value) sorted by key: by key, then value, in
    // Value order.
    KeyWeights pairs;
    struct Wide {
      Int128 wsum = 0;  // SUM/AVG of DECIMAL(p > 18): exact sum in 128 bits
      // STDDEV/VARIANCE: sum of squares (exact for integers and decimals, else floating).
      __int128 isumsq = 0;
      double dsumsq = 0;
      std::vector<int64_t> bits;  // BIT_*: per bit, the weighted count of values with it set (64 or none)
    };
    Boxed<Wide> wide;
    const Wide& W() const {
      static const Wide kNone;
      return wide ? *wide.get() : kNone;
    }
  };
  // What a batch adds to one aggregate of one group besides values and pairs (which FoldRows
  // takes from the batch's rows): the Acc fields Preaggregate sums and Fold adds.
  struct Sums {
    int64_t count = 0;
    int64_t isum = 0;
    double dsum = 0;
    Boxed<Acc::Wide> wide;
  };
  // One batch pre-aggregated per group (group g: keys[g] in the caller). When every accumulator
  // is inline (all_inline_), group g is the record at flat[g * record_bytes_], laid out as the
  // groups' records (its row count, then each aggregate's fields): no heap per group. Otherwise
  // its row count rows[g] and aggregate a's sums sums[g * aggs_.size() + a]: two allocations
  // per batch, none per group.
  struct Partials {
    std::vector<int64_t> rows;
    std::vector<Sums> sums;
    std::vector<char> flat;
    const Batch* batch = nullptr;  // the batch pre-aggregated (kExtremeKey partials name its rows)
    // groups: the batch's rows of group g are rows_by_group[group_rows[g] .. group_rows[g + 1]]
    // (empty when no aggregate KeepsValues).
    std::vector<uint32_t> group_rows, rows_by_group;
  };
  // Accumulators (or their containers) kept outside the group records, which hold their 4-byte
  // indexes. Growing moves none (ChunkedVector); an index given back is reused.
  template <class T>
  struct BoxPool {
    ChunkedVector<T> items;
    std::vector<uint32_t> free;  // indexes of unused items
    T& operator[](uint32_t i) { return items[i]; }
    const T& operator[](uint32_t i) const { return items[i]; }
    uint32_t Take() {
      if (free.empty()) {
        items.emplace_back();
        return static_cast<uint32_t>(items.size() - 1);
      }
      const uint32_t i = free.back();
      free.pop_back();
      return i;
    }
    void Give(uint32_t i) {
      items[i] = T{};
      free.push_back(i);
    }
    // Frees the chunks when no item is in use (after evictions).
    void ReleaseIfUnused() {
      if (free.size() == items.size()) Clear();
    }
    void Clear() {
      items.clear();
      std::vector<uint32_t>().swap(free);
    }
  };
  // A worker's part of the groups: those whose key KeyShard maps to it. (Cache-line aligned: the
  // workers write their shards' counters all through a step.)
  struct alignas(64) Shard {
    ArenaMap groups;     // key encoding -> group record
    BoxPool<Acc> boxes;  // boxed accumulators (Stored::kBox)
    // Heap bytes the boxes' containers and the records' sets hold (HeapBytes), and long extremes.
    size_t box_heap = 0;
    WaterlineIndex gc;     // groups by a key column with a waterline
    StoredEntries stored;  // backed state (core/circuit/operator.h)
  };
  // A group missing from the shard's memory: when the store may hold it, reads it into memory
  // (clean). Returns its slot, or kNone when it does not exist.
  uint32_t LoadStored(Shard& sh, std::string_view key);
  // One shard's step over its rows (`pool`: for pre-aggregating in slices, or null). Emits the
  // changed groups' rows in key order; with `emitted`, also each such group's key and row count.
  void StepShard(Shard& sh, const Batch& in, ThreadPool* pool, BatchBuilder* out,
                 std::vector<std::pair<std::string, uint32_t>>* emitted);
  // Folds the pre-aggregated groups (keys[g], partial's group g) into their shard (`only`, or
  // each key's ShardOf), in key order, emitting each changed group's -old/+new rows.
  void FoldGroups(Shard* only, const std::vector<std::string>& keys, const Partials& partial, BatchBuilder* out,
                  std::vector<std::pair<std::string, uint32_t>>* emitted);
  // FoldGroups when every accumulator is inline (all_inline_): adds the flat partial records'
  // fields to the stored records' fields in place, without Acc objects.
  void FoldInline(Shard* only, const std::vector<std::string>& keys, const Partials& partials,
                  const std::vector<uint32_t>& order, BatchBuilder* out,
                  std::vector<std::pair<std::string, uint32_t>>* emitted);
  // Folding visits groups keys[order[i]] in key order, not table order: each lookup is a cache
  // miss. Prefetch(i), before group i, fetches ahead in bursts (BurstPrefetch,
  // core/common/prefetch.h): the groups' slots, their records and, with `boxes`, the entries
  // their sets' extremes read first (ValueMultiset/KeyWeights Prefetch), for a boxed Acc
  // after its box (found through the record).
  class Lookahead {
   public:
    // With `flat` (FoldInline's partials), also the batch cells each group's kExtremeKey
    // partials name (a row of the batch, in input order: a cache miss each).
    Lookahead(AggregateOp* op, Shard* only, const std::vector<std::string>& keys, const std::vector<uint32_t>& order,
              bool boxes, const Partials* flat = nullptr);
    Lookahead(const Lookahead&) = delete;  // (bursts_ points back at it)
    Lookahead& operator=(const Lookahead&) = delete;
    void Prefetch(size_t i) { bursts_.Before(i); }
    std::vector<uint32_t> hashes;  // ArenaMap::Hash of each keys[order[i]]
    std::vector<Shard*> shards;    // and its shard

   private:
    enum Stage { kSlots, kRecords, kBoxes, kData };
    struct Fetch {
      Lookahead* ahead;
      void operator()(size_t stage, size_t j) const { ahead->Run(static_cast<Stage>(stage), j); }
    };
    // One stage of group j.
    void Run(Stage stage, size_t j);
    // The shard of each keys[order[i]] (`only` when set).
    static std::vector<Shard*> ShardsOf(AggregateOp* op, Shard* only, const std::vector<std::string>& keys,
                                        const std::vector<uint32_t>& order);
    AggregateOp* op_;
    const std::vector<std::string>& keys_;
    const std::vector<uint32_t>& order_;
    const Partials* flat_;
    BurstPrefetch<Fetch> bursts_;  // (last: its constructor fetches the first blocks)
  };
  // Erases the shard's groups that lie below its waterline (after each step).
  void DiscardBelow(Shard& sh);
  Shard& ShardOf(std::string_view key) { return shards_[KeyShard(key, static_cast<uint32_t>(shards_.size()))]; }
  static bool UsesMultiset(const AggSpec& a) {
    return !IsPairs(a) && (a.distinct || a.kind == AggKind::kMin || a.kind == AggKind::kMax ||
                           a.kind == AggKind::kArrayAgg || IsWideMoment(a));
  }
  static bool IsArg(const AggSpec& a) { return a.kind == AggKind::kArgMin || a.kind == AggKind::kArgMax; }
  // Keeps its values (or pairs) in a container per group: the batch's rows are added to it
  // directly (FoldRows), not pre-aggregated.
  static bool KeepsValues(const AggSpec& a) { return UsesMultiset(a) || IsPairs(a); }
  // Adds aggregate a's values (pairs) of rows `rows` of `in` to *into, as Preaggregate adds the
  // other aggregates' to a partial.
  void FoldRows(size_t a, const Batch& in, std::span<const uint32_t> rows, Acc* into) const;
  // Keeps (key, value) pairs: ARG_MIN/ARG_MAX, ARRAY_AGG (key: the order of its elements), MAP_AGG.
  static bool IsPairs(const AggSpec& a) {
    return IsArg(a) || (a.kind == AggKind::kArrayAgg && !a.distinct) || a.kind == AggKind::kMapAgg;
  }
  static bool IsBits(const AggSpec& a) {
    return a.kind == AggKind::kBitAnd || a.kind == AggKind::kBitOr || a.kind == AggKind::kBitXor;
  }
  static bool IsWideSum(const AggSpec& a) {
    return (a.kind == AggKind::kSum || a.kind == AggKind::kAvg) && a.arg_type.IsWideDecimal();
  }
  static bool IsMoment(const AggSpec& a) { return a.kind >= AggKind::kStddevPop && a.kind <= AggKind::kVarSamp; }
  // STDDEV/VARIANCE over DECIMAL(p > 18): the multiset of values, the moments computed exactly
  // from it in 512 bits for each result.
  static bool IsWideMoment(const AggSpec& a) { return IsMoment(a) && a.arg_type.IsWideDecimal(); }
  // Pre-aggregates one aggregate of the batch: rows -> (*sums)[gid[row] * aggs_.size() + a].
  void Preaggregate(size_t a, const Batch& in, const std::vector<uint32_t>& gid, std::vector<Sums>* sums) const;
  // Adds a flat partial record's fields to a group record's (Fold, for all-inline records) of
  // shard sh; `rows`: the batch the partial was made from.
  void AddRecord(char* into, const char* part, Shard& sh, const Batch* rows);
  // The same into flat records (all_inline_): rows -> the fields of aggregate a in record gid[row].
  void PreaggregateFlat(size_t a, const Batch& in, const std::vector<uint32_t>& gid, char* flat) const;
  // Aggregate a's result for a group of `rows` rows (its weight) whose accumulator is acc, with
  // its values and pairs (those of acc, or of a record read in place: AccIn).
  Value Result(const AggSpec& a, int64_t rows, const Acc& acc, const ValueMultiset& values,
               const KeyWeights& pairs) const;
  Value Result(const AggSpec& a, int64_t rows, const Acc& acc) const {
    return Result(a, rows, acc, acc.values, acc.pairs);
  }
  // Fast path for one integer key spanning a small range and linear aggregates: group ids are
  // key - min, no hashing. Returns false when the batch does not qualify.
  bool SmallKeyPreaggregate(const Batch& in, ThreadPool* pool, std::vector<std::string>* keys, Partials* partial) const;
  // Adds a pre-aggregated group's sums (part[a], one per aggregate) into its accumulators
  // *accs[a]. Partials hold no values or pairs: the aggregates that keep them take the batch's
  // rows directly (FoldRows).
  void Fold(Acc* const* accs, const Sums* part) const;

  // How an aggregate's accumulator is kept in the group record. Any Acc field an aggregate of
  // an inline kind may touch must be stored here (see Layout in aggregate.cc); everything else is
  // boxed whole, so new accumulator fields need no change here.
  enum class Stored : uint8_t {
    kNothing,      // COUNT(*) without FILTER: the row count says it all
    kCount,        // count
    kCountInt,     // count, isum
    kCountDouble,  // count, dsum
    kSumInt,       // isum: SUM/AVG of a NOT NULL integer column without FILTER (count = rows)
    kBox,          // index into the shard's boxes of the whole Acc
    // The kinds whose Acc holds nothing but a container (count, sums and wide stay 0): the
    // container itself, in the record (the record owns its heap; FreeGroupHeap frees it).
    kValues,  // MIN, MAX: a ValueMultiset's 16 bytes
    kPairs,   // ARG_MIN, ARG_MAX, ARRAY_AGG, MAP_AGG: a KeyWeights' 8 bytes
    // Over an input that only inserts (inserts_only_):
    kExtremeNum,  // MIN/MAX of integers or doubles: count, the extreme (its 8 bytes)
    // Any other MIN/MAX, ARG_MIN/ARG_MAX: count, then the order key of the extreme value or
    // (key, value) pair as an InlineKey's 24 bytes (the record owns a long key's heap bytes;
    // FreeGroupHeap frees them). In a flat partial, the row of the batch holding the extreme instead.
    kExtremeKey,
  };
  static bool IsExtreme(Stored st) { return st == Stored::kExtremeNum || st == Stored::kExtremeKey; }
  // What a kExtremeKey field's InlineKey holds (checkpoints store values, not these bytes).
  enum class ExtremeForm : uint8_t {
    kOrderKey,  // the order key of the value, or of the (key, value) pair (kPairOrder)
    kText,      // MIN/MAX of a string: its bytes (their order is its order key's)
    kNumPair,   // ARG_MIN/ARG_MAX whose key and value are NOT NULL integers or doubles: the
                // ordered bits of each, big-endian (16 bytes whose memcmp order is the pairs')
  };
  std::vector<ExtremeForm> extreme_form_;  // per aggregate (kOrderKey unless kExtremeKey)
  // Folded through an Acc (a box, or a set the record holds), not field by field as the inline
  // and extreme kinds are.
  static bool FoldsThroughAcc(Stored st) { return st == Stored::kBox || st == Stored::kValues || st == Stored::kPairs; }
  // The record layout of the aggregates (stored_, offset_, ...), from aggs_ and inserts_only_.
  void Layout();
  // Whether candidate beats current as aggregate a's extreme (strictly: on a tie the first
  // stays): MIN/MAX values, ARG_MIN/ARG_MAX (key, value) pairs, as order keys or as rows i, j
  // of a batch; and the integers or doubles of kExtremeNum.
  bool KeyBeats(size_t a, std::string_view candidate, std::string_view current) const;
  // KeyBeats over kExtremeKey fields' bytes in aggregate a's ExtremeForm.
  bool FormBeats(size_t a, std::string_view candidate, std::string_view current) const;
  // A pair's order key <-> its kNumPair bytes.
  std::string FormOfPairKey(size_t a, std::string_view pair_key) const;
  std::string PairKeyOfForm(size_t a, std::string_view form) const;
  // Aggregate a's kExtremeKey bytes for row r of b, in its ExtremeForm, appended to *out.
  void ExtremeKeyOf(size_t a, const Batch& b, size_t r, std::string* out) const;
  bool RowBeats(size_t a, const Batch& b, size_t i, size_t j) const;
  bool NumBeats(size_t a, uint64_t candidate, uint64_t current) const;
  // The order key of aggregate a's (key, value) pair (IsPairs) or else its value (a MIN/MAX
  // extreme) in row r of b, appended to *out.
  void OrderKeyOf(size_t a, const Batch& b, size_t r, std::string* out) const;
  // A kExtremeNum/kExtremeKey field's result.
  Value ExtremeResult(const char* rec, size_t a) const;
  // Before a record's bytes are overwritten by `rec`, an updated copy of them: frees the long
  // extremes that `rec` no longer holds (and counts the heap bytes).
  void ReplaceExtremes(Shard& sh, char* stored, const char* rec);
  bool has_extreme_keys_ = false;  // some aggregate is kExtremeKey
  bool records_own_heap_ = false;  // some aggregate is kExtremeKey, kValues or kPairs
  bool has_box_ = false;           // some aggregate is kBox
  // Frees every group's long extremes and sets (before the groups are dropped wholesale).
  void FreeRecordHeap();
  // A kExtremeNum/kExtremeKey field as an accumulator: its count, and its one value (MIN/MAX)
  // or pair (ARG_*) at weight 1.
  void ExtremeAcc(const char* rec, size_t a, Acc* acc) const;
  // A group's accumulators, to update in place: (*accs)[a] points at aggregate a's box in the
  // shard, or at (*scratch)[a] filled from the record's inline or extreme fields or holding the
  // record's set, moved out (its field left empty; StoreGroup moves it back). Returns the group's
  // row count.
  int64_t ViewGroup(Shard& sh, char* rec, std::vector<Acc>* scratch, std::vector<Acc*>* accs);
  // Writes the record of a group of `rows` rows and accumulators *accs[a] into *rec: inline and
  // extreme fields from them, sets moved in, and each boxed one's box index (old_rec's, or a new
  // box for a new group, old_rec == null), an accumulator that is not its box already being
  // moved into it.
  void StoreGroup(Shard& sh, int64_t rows, Acc* const* accs, const char* old_rec, std::string* rec);
  // An inline aggregate's fields in a record <-> count/isum/dsum (the rest of *acc untouched).
  void InlineAcc(const char* rec, size_t a, Acc* acc) const;
  void WriteInline(char* rec, size_t a, int64_t count, int64_t isum, double dsum) const;
  // A record of all-inline groups as checkpoints store it (stored_offset_) <-> in memory.
  void RecordToStored(std::string_view rec, std::string* out) const;
  // An aggregate's bytes in a stored record (a kSumInt field is stored as kCountInt's 16).
  static size_t StoredFieldBytes(Stored st) {
    return st == Stored::kNothing      ? 0
           : st == Stored::kCount      ? 8
           : st == Stored::kBox        ? 4
           : st == Stored::kValues     ? sizeof(ValueMultiset::Words)
           : st == Stored::kPairs      ? sizeof(uintptr_t)
           : st == Stored::kExtremeKey ? 8 + InlineKey::kBytes
                                       : 16;
  }
  void StoredToRecord(std::string_view stored, std::string* out) const;
  // Heap bytes an accumulator's trees and vectors hold, about (for StateMemoryBytes).
  static size_t HeapBytes(const Acc& acc);
  static size_t HeapBytes(const ValueMultiset& values) { return values.HeapBytes(); }
  static size_t HeapBytes(const KeyWeights& pairs) { return pairs.HeapBytes(); }
  // Acc::pairs: adds w to the weight of the pair whose order key is `key` (dropped at 0).
  static void AddPair(Acc* acc, std::string_view key, int64_t w);
  // The order key of the pair (k, v) of aggregate a, appended to *out; PairOf reads it back.
  static void AppendPairKey(Value k, Value v, std::string* out);
  std::pair<Value, Value> PairOf(const AggSpec& a, std::string_view key) const;
  // A record's kValues field holds a ValueMultiset's words, a kPairs field a KeyWeights' word:
  // the set is one miss from its record, no box between. The words own the set's heap: PutSet
  // moves a set into a field, TakeSet out of one (leaving it zero: an empty set), Lent reads
  // one in place.
  template <class T>
  using SetWords = std::conditional_t<std::is_same_v<T, ValueMultiset>, ValueMultiset::Words, uintptr_t>;
  template <class T>
  static void PutSet(char* field, T& set) {
    const SetWords<T> w = set.Release();
    std::memcpy(field, &w, sizeof w);
  }
  template <class T>
  static T TakeSet(char* field) {
    SetWords<T> w;
    std::memcpy(&w, field, sizeof w);
    std::memset(field, 0, sizeof w);
    return T::Adopt(w);
  }
  template <class T>
  class Lent {
   public:
    explicit Lent(const char* field) : set_(Load(field)) {}
    ~Lent() { set_.Release(); }  // the field still owns it
    Lent(const Lent&) = delete;
    Lent& operator=(const Lent&) = delete;
    const T& operator*() const { return set_; }
    const T* operator->() const { return &set_; }

   private:
    static T Load(const char* field) {
      SetWords<T> w;
      std::memcpy(&w, field, sizeof w);
      return T::Adopt(w);
    }
    T set_;
  };
  // The accumulator of aggregate a in a record, read in place (AccIn): a boxed Acc, or tmp set
  // from the record's inline or extreme fields; and its values and pairs (a box's own, or lent
  // by the record).
  struct AccView {
    Acc tmp;
    const Acc* acc = nullptr;
    const ValueMultiset* values = nullptr;
    const KeyWeights* pairs = nullptr;
    std::optional<Lent<ValueMultiset>> lent_values;
    std::optional<Lent<KeyWeights>> lent_pairs;
  };
  void AccIn(const Shard& sh, const char* rec, size_t a, AccView* view) const;
  void EraseGroup(Shard& sh, uint32_t slot);
  // Gives the group's boxed accumulators back to the shard and frees the sets and long extremes
  // its record holds (before it leaves memory).
  void FreeGroupHeap(Shard& sh, uint32_t slot);

  std::vector<PhysType> in_types_;
  ThreadPool* pool_ = nullptr;
  int num_keys_;
  std::vector<AggSpec> aggs_;
  std::vector<PhysType> out_types_;
  std::vector<Stored> stored_;         // per aggregate
  std::vector<size_t> offset_;         // per aggregate: its bytes in the record
  size_t record_bytes_ = 8;            // rows, then the aggregates
  std::vector<size_t> stored_offset_;  // per aggregate: its bytes in a stored (checkpoint) record
  size_t stored_bytes_ = 8;
  bool inserts_only_ = false;  // InputsInsertOnly: the extreme kinds are used
  bool all_inline_ = false;    // no accumulator is boxed: records fold in place, field by field
  bool raw_ = false;           // and none names a side table: checkpoints store records as they are
  std::vector<Shard> shards_;  // one per worker (one without a pool or without keys)
  bool initialized_ = false;   // global: the initial row was emitted
  // One group's rows and accumulators as checkpoints write them (record: its groups value).
  void WriteGroup(StateWriter& w, const Shard& sh, const char* rec) const;
  void ReadGroup(StateReader& r, const std::string& key);
};

}  // namespace fld
