// The interface every circuit operator implements (core/operators/ holds one per file).
//
// Each step the circuit calls Step() once per operator, in topological order, with the change
// batches its inputs produced in this step; the operator returns its own change batch. Linear
// operators (filter, map, union) keep no state. Stateful ones (join, aggregate, distinct,
// upsert, integrate) keep exactly the traces and accumulators the DBSP rules need, and can save
// and restore them: restoring the saved state and feeding the same input changes must give the
// same outputs, byte for byte.
//
// Incremental checkpoints: an operator whose state is mostly a map of keyed entries (aggregate
// groups, join traces, distinct weights) has keyed state. It saves a small header and only the
// entries that changed since its previous save (StateDelta); the checkpoint store keeps the
// entries, so a checkpoint's cost follows the changes, not the state's size. Restoring reads
// the header, then every stored entry in key order.
//
// State beyond memory: an operator that can be backed by the store (CanBackState) keeps in
// memory only a cache of its entries. Once its entries are in a committed checkpoint, the clean
// ones (unchanged since) may be evicted (StateCommitted with evict); a lookup that misses memory
// reads the entry from the store (StateLookup), so a resume need not load them at all (lazy
// restore: BeginRestore, then BackState, no RestoreEntry). Entries erased since the last
// committed checkpoint stay known in memory, so the store's older copy is never read back.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/common/serialize.h"
#include "core/common/thread_pool.h"
#include "core/zset/arena_map.h"  // varints
#include "core/zset/batch.h"

namespace fld {

// The entries an operator changed since its previous save: puts and erases, in the order they
// must be applied (an erased key may be put again after its erase). Entries are packed into
// 1 MiB chunks ([kind][varint key length][varint value length][key][value]), so gathering
// millions of them copies each byte once.
class StateDelta {
 public:
  void Put(std::string_view key, std::string_view value) { Add(1, key, value); }
  void Erase(std::string_view key) { Add(0, key, {}); }
  // One change: where it lies (an entry's first byte, from ForEachEntry), what it is.
  struct Change {
    std::string_view key, value;
    bool put;
  };
  static Change Decode(const char* p) {
    Change c;
    c.put = *p++ != 0;
    const uint64_t k = GetVarint(&p);
    const uint64_t v = GetVarint(&p);
    c.key = std::string_view(p, k);
    c.value = std::string_view(p + k, v);
    return c;
  }
  // f(first byte of the entry) for each change, in order: 8 bytes a change where a caller
  // keeping them (to sort them) would otherwise hold two string_views.
  template <typename F>
  void ForEachEntry(F f) const {
    for (const Chunk& c : chunks_) {
      const char* p = c.data.get();
      const char* end = p + c.used;
      while (p < end) {
        f(p);
        const Change ch = Decode(p);
        p = ch.value.data() + ch.value.size();
      }
    }
  }
  // f(key, value, is_put) in order.
  template <typename F>
  void ForEach(F f) const {
    ForEachEntry([&](const char* p) {
      const Change c = Decode(p);
      f(c.key, c.value, c.put);
    });
  }
  // Appends o's changes after these (its chunks move; nothing is copied).
  void Append(StateDelta&& o) {
    for (Chunk& c : o.chunks_) chunks_.push_back(std::move(c));
    puts_ += o.puts_;
    erases_ += o.erases_;
    bytes_ += o.bytes_;
    o = StateDelta();
  }
  size_t puts() const { return puts_; }
  size_t erases() const { return erases_; }
  size_t bytes() const { return bytes_; }
  bool empty() const { return puts_ + erases_ == 0; }

 private:
  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t size = 0, used = 0;
  };
  static constexpr size_t kChunk = size_t{1} << 20;
  void Add(char put, std::string_view key, std::string_view value) {
    const size_t need = 1 + VarintSize(key.size()) + VarintSize(value.size()) + key.size() + value.size();
    if (chunks_.empty() || chunks_.back().size - chunks_.back().used < need) {
      Chunk c;
      c.size = std::max(kChunk, need);
      c.data.reset(new char[c.size]);
      chunks_.push_back(std::move(c));
    }
    Chunk& c = chunks_.back();
    char* p = c.data.get() + c.used;
    *p++ = put;
    p += PutVarint(p, key.size());
    p += PutVarint(p, value.size());
    if (!key.empty()) std::memcpy(p, key.data(), key.size());
    if (!value.empty()) std::memcpy(p + key.size(), value.data(), value.size());
    c.used += need;
    bytes_ += need;
    ++(put ? puts_ : erases_);
  }
  std::vector<Chunk> chunks_;
  size_t puts_ = 0, erases_ = 0, bytes_ = 0;
};

// Point reads of one operator's stored entries as they are in the last committed checkpoint
// that Refresh saw. One per shard: not for concurrent use.
class StateLookup {
 public:
  virtual ~StateLookup() = default;
  // The stored value of `key` into *value; false when the store has no such entry.
  virtual bool Get(std::string_view key, std::string* value) = 0;
  // Moves to the newest committed checkpoint (after a commit).
  virtual void Refresh() = 0;
};

// The store's side of a backed operator: a StateLookup per caller.
class StateSource {
 public:
  virtual ~StateSource() = default;
  virtual std::unique_ptr<StateLookup> OpenLookup(uint32_t node) = 0;
};

// One shard's link to the store, for an operator backed by it: the lookup, whether some entries
// may be stored and not in memory, and the keys erased since the last SaveChanges and those
// erased in the checkpoint being written (the store may still hold them: they are never read
// back). Keys are the operator's memory keys; `prefix` is what the stored key adds before one.
class StoredEntries {
 public:
  explicit StoredEntries(std::string prefix = {}) : prefix_(std::move(prefix)) {}
  void Attach(StateSource* source, uint32_t node, bool all_stored) {
    if (!lookup_) lookup_ = source->OpenLookup(node);
    backed_ = backed_ || all_stored;
  }
  // Forgets everything but the lookup (a restore starts over).
  void Reset() {
    backed_ = false;
    store_only_.clear();
    erased_.clear();
    erased_saved_.clear();
  }
  bool backed() const { return backed_; }
  // The operator tracks its changes (Operator::TrackChanges): checkpoints will save them, and
  // only then can the store hold a key that memory has since erased. Untracked (fault_tolerance
  // none before the state first outgrows the cache), erasures are not remembered: the first
  // saved checkpoint stores the whole state.
  void Track() { track_ = true; }
  // A key is erased from memory.
  void Erased(std::string_view key) {
    if (lookup_ && track_) erased_.emplace(key);
  }
  // The stored value of a key missing from memory, or null when there is none (or it was erased
  // since the last committed checkpoint). Valid until the next call.
  const std::string* Read(std::string_view key) {
    if (!backed_) return nullptr;
    if (!erased_.empty() || !erased_saved_.empty()) {
      const std::string k(key);
      if (erased_.count(k) || erased_saved_.count(k)) return nullptr;
    }
    stored_key_.assign(prefix_).append(key);
    return lookup_->Get(stored_key_, &value_) ? &value_ : nullptr;
  }
  // Reads back a key missing from memory: restore(value) puts the stored value into `map` (an
  // ArenaMap), and the key's slot is returned marked clean (it is as stored); Map::kNone when
  // the store has no such entry.
  template <typename Map, typename F>
  uint32_t Load(Map& map, std::string_view key, F restore) {
    return Load(map, key, key, restore);
  }
  // The same for a map whose keys are the stored keys in another form (`map_key`).
  template <typename Map, typename F>
  uint32_t Load(Map& map, std::string_view key, std::string_view map_key, F restore) {
    const std::string* value = Read(key);
    if (value == nullptr) return Map::kNone;
    restore(*value);
    const uint32_t slot = map.Find(map_key);
    map.MarkClean(slot);
    return slot;
  }
  // A key erased while its entry is only in the store (evicted, or not read since a lazy
  // restore; a waterline passed it): not read back from now on, and erased from the store by
  // the next SaveChanges (TakeStoreOnlyErasures). Nothing when the store holds nothing.
  void EraseStoreOnly(std::string key) {
    if (!backed_) return;
    Erased(key);
    store_only_.push_back(std::move(key));
  }
  // The keys EraseStoreOnly listed since the last call, for SaveChanges to erase (a waterline
  // passed them: no later put of theirs can come before).
  std::vector<std::string> TakeStoreOnlyErasures() { return std::exchange(store_only_, {}); }
  // An operator's SaveChanges over an ArenaMap of its entries (`map`, tracking erasures) backed
  // by this: the store-only erasures, the map's erased keys, then its changed records as puts of
  // value(slot) (a string_view valid until the next call), into d; then forgets the changes.
  template <typename Map, typename Value>
  void SaveChanges(Map& map, StateDelta& d, Value value) {
    for (const std::string& k : TakeStoreOnlyErasures()) d.Erase(k);
    map.ForEachErased([&](std::string_view k) { d.Erase(k); });
    map.ForEachDirty([&](uint32_t s) { d.Put(map.Key(s), value(s)); });
    map.ClearChanges();
    Saved();
  }
  // The same, each record stored as it is.
  template <typename Map>
  void SaveChanges(Map& map, StateDelta& d) {
    SaveChanges(map, d, [&](uint32_t s) { return map.Value(s); });
  }
  // SaveChanges took the changes: the erased keys are now in the checkpoint being written.
  void Saved() {
    erased_saved_.merge(erased_);
    erased_.clear();
  }
  // That checkpoint committed: its erasures are in the store, and lookups see it. Returns
  // whether the operator may evict (it has a store to read back from).
  bool Committed() {
    erased_saved_.clear();
    if (lookup_) lookup_->Refresh();
    return lookup_ != nullptr;
  }
  // After `n` clean entries were evicted.
  void Evicted(size_t n) { backed_ = backed_ || n > 0; }

 private:
  std::string prefix_;
  std::unique_ptr<StateLookup> lookup_;
  bool backed_ = false;
  bool track_ = false;
  std::vector<std::string> store_only_;  // EraseStoreOnly's keys not yet taken
  std::unordered_set<std::string> erased_, erased_saved_;
  std::string stored_key_, value_;
};

// SaveChanges of an operator with `shards` shards of keyed state: save(i, delta) writes shard i's
// changes into a delta of its own, on the pool's threads (with a pool and more than one shard),
// and the deltas are appended to d in shard order, as one thread would write them (a key lives
// in one shard, so its erase still comes before a later put of it).
template <typename Pool, typename Save>
void SaveShardChanges(Pool* pool, size_t shards, StateDelta& d, Save save) {
  std::vector<StateDelta> parts(shards);
  if (pool && shards > 1)
    pool->ParallelFor(shards, [&](size_t i) { save(i, parts[i]); });
  else
    for (size_t i = 0; i < shards; ++i) save(i, parts[i]);
  for (StateDelta& p : parts) d.Append(std::move(p));
}

class Operator {
 public:
  virtual ~Operator() = default;
  virtual Batch Step(std::span<const Batch* const> inputs) = 0;
  // "filter", "join", ... and a one-line description of its parameters for `fld check`.
  virtual std::string Name() const = 0;
  virtual std::string Describe() const { return Name(); }
  // Whether inputs that only insert rows (every weight positive) give an output that only
  // inserts (a filter, a projection, a union): the circuit derives from it which nodes carry
  // an append-only table's rows unretracted (Circuit::InsertsOnly).
  virtual bool PreservesInserts() const { return false; }
  // Called while the circuit is built, before any step or restore, when every input of the node
  // only inserts: the operator may then keep less state (it never sees a deletion).
  virtual void InputsInsertOnly() {}
  virtual bool HasState() const { return false; }
  virtual void SaveState(StateWriter& w) const {}
  virtual void RestoreState(StateReader& r) {}

  // Keyed state (see the top of this file). TrackChanges is called once, before the first step,
  // when checkpoints will be taken (it makes the operator remember erased keys).
  virtual bool HasKeyedState() const { return false; }
  virtual void TrackChanges() {}
  // Writes the header to w and the entries changed since the previous SaveChanges (all of them
  // the first time) to d, then forgets the changes.
  virtual void SaveChanges(StateWriter& w, StateDelta& d) {}
  // Clears the state and reads the header; then RestoreEntry for each stored entry, in key
  // order; then EndRestore (the restored entries count as saved).
  virtual void BeginRestore(StateReader& r) {}
  virtual void RestoreEntry(std::string_view key, std::string_view value) {}
  virtual void EndRestore() {}
  // A lazy restore (see below) passes each stored entry's key instead of RestoreEntry: an
  // operator that discards entries below a waterline indexes it, so that the entry leaves the
  // store once the waterline passes it, though it was never read.
  virtual void RestoreStoredKey(std::string_view key) {}

  // State beyond memory (see the top of this file). BackState attaches the store holding this
  // operator's entries (node: its number there; attaching again changes nothing); `all_stored`
  // after a lazy restore (BeginRestore, EndRestore, then BackState): every entry is read from
  // the store on demand. StateCommitted follows each committed checkpoint that included this
  // operator's SaveChanges: the lookups move to it, and with `evict` the clean entries leave
  // memory. StateMemoryBytes: what the entries hold in memory.
  virtual bool CanBackState() const { return false; }
  virtual void BackState(StateSource* source, uint32_t node, bool all_stored) {}
  virtual void StateCommitted(bool evict) {}
  virtual size_t StateMemoryBytes() const { return 0; }

  // Output integral: an operator whose state is the running sum of its output (an upsert: its
  // table's rows, key -> row) can list those rows, so that a materialized relation it produces
  // can be written from them at a checkpoint instead of from every change since the last one
  // (pipelines/controller.cc does so once the changes reach half the rows).
  // IntegralRows: how many rows the output's integral holds, or nullopt when the operator cannot
  // list them from memory (it does not hold its output's integral, or some of its state was
  // evicted to the store). IntegralContents: those rows, each at weight 1, in parts and in no
  // particular order (`pool`: to decode them in parallel, or null). While PinIntegral(true), no
  // entry is evicted (StateCommitted), so that the rows stay listable until PinIntegral(false).
  virtual std::optional<size_t> IntegralRows() const { return std::nullopt; }
  virtual std::vector<Batch> IntegralContents(ThreadPool* pool) const { return {}; }
  virtual void PinIntegral(bool pin) {}
};

}  // namespace fld
