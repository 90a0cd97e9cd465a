// ArenaMap: a hash map from byte-string keys to byte-string values built for operator state with
// millions of entries: no heap node per entry and no std::string per key.
//
// Records [varint key length][varint value length][key][value] are appended to an arena of
// 1 MiB blocks, 4 MiB ones on huge pages once the map holds 4 (a larger record gets a block of its
// own; core/common/large_memory.h); an open-addressing table (linear
// probing, at most 7/8 full) of 8-byte slots holds 28 bits of each record's key hash (its home
// slot, and a filter before the key is compared) and its location. Locations limit a map to 8191
// blocks (32 GiB, far past any storage.cache_mib: state beyond that is evicted to the store); an
// insert past that fails with an error rather than corrupt the map.
// A value rewritten at its own size stays in place; otherwise the record is appended again and
// the old bytes become garbage. Once garbage exceeds a quarter of the live bytes (and 1 MiB), the
// live records are copied into fresh blocks, block by block, each old block freed once emptied
// (the arena stays within 1.25 times its live bytes). Erasing shifts the following slots back (no
// tombstones).
//
// Slot numbers (Find, Insert) stay valid until the next Insert or Erase; pointers into a record
// (Key, Value) until the next non-const call. Iteration order is the table's, not the keys':
// callers that need a stable order (checkpoints) sort.
//
// Change tracking, for incremental checkpoints: a record inserted, assigned or written through
// MutableValue since the last ClearChanges is dirty (one bit in its slot, so tracking costs no
// memory); with TrackErasures(true) the keys erased since then are kept too (their bytes, in one
// buffer). A checkpoint writes the dirty records and deletes the erased keys, then clears.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/large_memory.h"
#include "core/common/prefetch.h"
#include "core/common/serialize.h"

namespace fld {

class ArenaMap {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  ArenaMap() = default;
  ArenaMap(ArenaMap&&) = default;
  ArenaMap& operator=(ArenaMap&&) = default;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The slot holding key, or kNone.
  uint32_t Find(std::string_view key) const { return Find(key, Hash(key)); }
  // The same with the key's Hash(key) already computed.
  uint32_t Find(std::string_view key, uint32_t hash) const;
  // For a batch of lookups, whose cost is cache misses: Prefetch(hash) starts loading the slot a
  // key with that hash probes first; a few lookups later, once it is loaded, PrefetchRecord(hash)
  // starts loading the record of the first slot holding that hash. Both are hints only.
  void Prefetch(uint32_t hash) const {
    if (!slots_.empty()) fld::Prefetch(&slots_[Home(hash, slots_.size() - 1)]);
  }
  // `bytes`: how much of the record to fetch, from its start (its header, key and value: a
  // caller that knows its records' size fetches each cache line they span, not the first only).
  void PrefetchRecord(uint32_t hash, size_t bytes = 1) const;
  // Adds key (which must be absent) with value; returns its slot.
  uint32_t Insert(std::string_view key, std::string_view value);
  // Replaces the value of the record in slot s.
  void Assign(uint32_t s, std::string_view value);
  void Erase(uint32_t s);
  void Clear();

  std::string_view Key(uint32_t s) const;
  std::string_view Value(uint32_t s) const;
  // The value's bytes, writable in place (its size cannot change this way).
  char* MutableValue(uint32_t s);

  // Every slot in use, in table order: f(slot). Records lie in the arena in insertion order, not
  // table order, so each f that reads one would wait for a cache miss: the walk prefetches the
  // records of the slots some way ahead (a full walk of a large map is several times faster).
  template <typename F>
  void ForEachSlot(F f) const {
    ForEachMatching([](const Slot&) { return true; }, f);
  }

  // Change tracking (see the top of this file).
  void TrackErasures(bool on) { track_erasures_ = on; }
  void MarkDirty(uint32_t s) { SetDirty(&slots_[s]); }
  void MarkClean(uint32_t s) {
    if (slots_[s].dirty()) --dirty_;
    slots_[s].set_dirty(false);
  }
  // Records changed since the last ClearChanges (a checkpoint with none walks no table).
  size_t dirty_count() const { return dirty_; }
  // Drops every clean record (unchanged since the last ClearChanges) without recording it as
  // erased, calling f(slot) for each first, and rebuilds the table and arena around the dirty
  // ones, so the memory they held is given back. Returns the number dropped.
  template <typename F>
  size_t EvictClean(F f) {
    size_t n = 0;
    ForEachMatching([](const Slot& s) { return !s.dirty(); },
                    [&](uint32_t s) {
                      f(s);
                      ++n;
                    });
    if (n > 0 || (size_ == 0 && !slots_.empty())) KeepOnlyDirty();
    return n;
  }
  // f(slot) for every record changed since the last ClearChanges.
  template <typename F>
  void ForEachDirty(F f) const {
    if (dirty_ == 0) return;
    ForEachMatching([](const Slot& s) { return s.dirty(); }, f);
  }
  // f(key) for every key erased since the last ClearChanges (when tracking erasures); a key may
  // be listed more than once, and may have been inserted again since.
  template <typename F>
  void ForEachErased(F f) const {
    const char* p = erased_.data();
    const char* end = p + erased_.size();
    while (p < end) {
      uint64_t n = GetVarint(&p);
      f(std::string_view(p, n));
      p += n;
    }
  }
  void ClearChanges();
  // Bytes held: table, arena blocks (garbage included).
  size_t MemoryBytes() const;
  // Bytes of records no longer referenced (reclaimed by the next compaction).
  size_t GarbageBytes() const { return garbage_; }

  static uint32_t Hash(std::string_view key);
  // Lowers the block limit (tests reach it this way).
  void set_max_blocks(uint32_t n) { max_blocks_ = std::min(n, kMaxBlocks); }

 private:
  // A slot: from the low bits, the key hash's low 28 bits, the record's offset in its block (22
  // bits: blocks are 1 or 4 MiB, or hold one larger record at offset 0), its block (13 bits, all
  // ones in an empty slot) and the dirty flag.
  static constexpr uint32_t kHashMask = (1u << 28) - 1;
  static constexpr int kOffsetShift = 28, kBlockShift = 50;
  static constexpr uint64_t kOffsetMask = (uint64_t{1} << 22) - 1, kBlockMask = (uint64_t{1} << 13) - 1;
  static constexpr uint64_t kDirtyBit = uint64_t{1} << 63;
  static constexpr uint32_t kMaxBlocks = static_cast<uint32_t>(kBlockMask);  // kBlockMask itself: empty
  struct Slot {
    uint64_t bits = kBlockMask << kBlockShift;  // empty
    bool used() const { return ((bits >> kBlockShift) & kBlockMask) != kBlockMask; }
    uint32_t hash() const { return static_cast<uint32_t>(bits) & kHashMask; }
    uint32_t block() const { return static_cast<uint32_t>((bits >> kBlockShift) & kBlockMask); }
    uint32_t offset() const { return static_cast<uint32_t>((bits >> kOffsetShift) & kOffsetMask); }
    bool dirty() const { return (bits & kDirtyBit) != 0; }
    void set_dirty(bool d) { bits = d ? bits | kDirtyBit : bits & ~kDirtyBit; }
    // An empty slot for a key of hash h, dirty or not, to be located by Append.
    static Slot New(uint32_t h, bool dirty) {
      Slot s;
      s.bits |= (h & kHashMask) | (dirty ? kDirtyBit : 0);
      return s;
    }
    void set_location(uint32_t block, uint32_t offset) {
      bits = (bits & (kDirtyBit | kHashMask)) | (uint64_t{block} << kBlockShift) | (uint64_t{offset} << kOffsetShift);
    }
    void clear() { bits = kBlockMask << kBlockShift; }
  };
  static_assert(sizeof(Slot) == 8);
  // The home slot of a key of hash h in a table of mask + 1 slots.
  static size_t Home(uint32_t h, size_t mask) { return h & kHashMask & mask; }
  struct Block {
    std::unique_ptr<char, LargeFree> data;
    size_t size = 0, used = 0;
  };
  static constexpr size_t kBlockSize = size_t{1} << 20;
  // The table: large ones on huge pages (a lookup's slot then rarely misses the TLB too).
  using Slots = std::vector<Slot, LargeAllocator<Slot>>;

  void SetDirty(Slot* s) {
    if (!s->dirty()) ++dirty_;
    s->set_dirty(true);
  }
  const char* Record(const Slot& s) const { return blocks_[s.block()].data.get() + s.offset(); }
  // f(slot) for each slot in use for which want(slot) holds, in table order, prefetching the
  // records of the next matching slots.
  template <typename P, typename F>
  void ForEachMatching(P want, F f) const {
    constexpr uint32_t kAhead = 16;
    const uint32_t n = static_cast<uint32_t>(slots_.size());
    uint32_t ahead = 0;   // the next slot to look at for prefetching
    uint32_t queued = 0;  // matching slots prefetched but not visited yet
    for (uint32_t s = 0; s < n; ++s) {
      while (queued < kAhead && ahead < n) {
        const Slot& a = slots_[ahead++];
        if (a.used() && want(a)) {
          fld::Prefetch(Record(a));
          ++queued;
        }
      }
      if (slots_[s].used() && want(slots_[s])) {
        --queued;
        f(s);
      }
    }
  }
  // Appends a record; sets slot's location.
  void Append(Slot* slot, std::string_view key, std::string_view value);
  static size_t RecordSize(const char* rec);
  void Grow();
  void MaybeCompact();
  void KeepOnlyDirty();

  Slots slots_;  // capacity a power of two, or empty
  std::vector<Block> blocks_;
  size_t size_ = 0;
  size_t dirty_ = 0;    // slots with the dirty flag
  size_t live_ = 0;     // bytes of live records
  size_t garbage_ = 0;  // bytes of dead records in the blocks
  bool track_erasures_ = false;
  std::string erased_;  // varint length + key, per erased key
  uint32_t max_blocks_ = kMaxBlocks;
};

// A map of int64 weights (8-byte values) as (key, weight) pairs sorted by key.
std::vector<std::pair<std::string_view, int64_t>> SortedWeights(const ArenaMap& m);
// Saves such a map as a checkpoint does: count, then (key, weight) in key order.
void SaveWeights(StateWriter& w, const ArenaMap& m);

}  // namespace fld
