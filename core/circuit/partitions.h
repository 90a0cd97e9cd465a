// Partitions<Part>: operator state made of whole partitions, each found by a byte-string key (the
// encoded PARTITION BY values of a top-K or a window function, the join key of an as-of join, the
// key of a SESSION window),
// kept as keyed state (core/circuit/operator.h) with one stored entry per partition.
//
// - A checkpoint saves only the partitions changed since the previous one (Touch marks a
//   partition changed) and deletes those that became empty, so its cost follows the partitions
//   a step reached, not the state.
// - Memory may hold only a cache of the partitions: after a committed checkpoint the unchanged
//   ones can be evicted (Committed with evict), and Find / Touch read a partition missing from
//   memory back from the store. A resume need not load any (lazy restore, Back with all_stored).
// - A step calls Touch (or Find) for the partitions it reads, changes them, then EndStep, which
//   erases the partitions left empty and updates the memory estimate. Pointers to partitions
//   stay valid until EndStep or Committed.
//
// PartitionedOperator<Part> is the base of such an operator: it holds the Partitions and forwards
// Operator's keyed-state and store calls to them.
//
// The operator supplies a Codec: how to make an empty partition, encode one into a stored value
// and decode it back (throwing a corruption error on a malformed value), whether one is empty,
// and an estimate of the bytes it holds in memory (in O(1): it is asked after every step that
// touched the partition).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/circuit/operator.h"

namespace fld {

template <typename Part>
class Partitions {
 public:
  struct Codec {
    std::function<Part()> make;
    std::function<void(const Part&, std::string*)> encode;
    std::function<void(std::string_view, Part*)> decode;
    std::function<bool(const Part&)> empty;
    std::function<size_t(const Part&)> bytes;
  };
  struct Entry {
    Part part;
    bool dirty = false;    // changed since the last SaveChanges
    bool touched = false;  // changed since the last EndStep
    size_t bytes = 0;      // the Codec's estimate, as of the last EndStep
  };
  using Map = std::map<std::string, Entry, std::less<>>;

  // `prefix`: what the stored keys add before the partition keys (one operator may keep several).
  explicit Partitions(Codec codec, std::string prefix = {})
      : codec_(std::move(codec)), prefix_(prefix), stored_(std::move(prefix)) {}
  Partitions(const Partitions&) = delete;  // index_ points into parts_
  Partitions& operator=(const Partitions&) = delete;

  // The partition of key, read back from the store when it is not in memory; null when there is
  // none. Marks nothing changed.
  Part* Find(std::string_view key) {
    auto it = Locate(key);
    return it == parts_.end() ? nullptr : &it->second.part;
  }
  // The partition of key (a new empty one when there is none), marked changed: the caller may
  // modify it until EndStep.
  Part& Touch(std::string_view key) {
    auto it = Locate(key);
    if (it == parts_.end()) it = Emplace(key);
    Changed(it);
    return it->second.part;
  }
  // For a step that reaches many partitions in turn, each lookup a chain of cache misses (the
  // index's slot, then the partition, then what the partition points to): PrefetchIndex(key) some
  // partitions ahead, then, nearer, Resident(key), which reads only the index (it holds the keys)
  // and returns the partition in memory or null (loading nothing, marking nothing), for the caller
  // to prefetch; Touch or Find then finds it loaded. Hints only.
  void PrefetchIndex(std::string_view key) const { index_.prefetch(IndexKey(key)); }
  const Part* Resident(std::string_view key) const {
    auto found = index_.find(IndexKey(key));
    return found == index_.end() ? nullptr : &found->second->second.part;
  }
  // Marks a partition of resident() changed (a sweep that modified it).
  void Changed(typename Map::iterator it) {
    if (!it->second.dirty && track_) {
      // Partitions erased since stay listed: past twice the partitions, the list is rebuilt.
      if (dirty_.size() > 2 * parts_.size() + 1024) ListDirty();
      dirty_.push_back(it->first);
    }
    it->second.dirty = true;
    if (!it->second.touched) touched_.push_back(it);
    it->second.touched = true;
  }
  // Ends a step: the partitions touched since the last EndStep that are empty are erased, the
  // others' memory estimates updated.
  void EndStep() {
    for (auto it : touched_) {
      Entry& e = it->second;
      e.touched = false;
      bytes_ -= e.bytes;
      e.bytes = 0;
      if (!codec_.empty(e.part)) {
        Estimate(it);
        continue;
      }
      if (track_) erased_.push_back(it->first);
      stored_.Erased(it->first);
      Erase(it);  // (its key stays in dirty_: SaveChanges finds it gone)
    }
    touched_.clear();
  }
  // The partitions in memory, in key order (a sweep over them; Changed for those it modifies).
  Map& resident() { return parts_; }
  const Map& resident() const { return parts_; }
  size_t MemoryBytes() const { return bytes_; }
  bool backed() const { return stored_.backed(); }
  void Clear() {
    index_.clear();
    parts_.clear();
    touched_.clear();
    erased_.clear();
    bytes_ = 0;
    dirty_.clear();
  }

  // Keyed state (core/circuit/operator.h).
  void TrackChanges() {
    track_ = true;
    stored_.Track();
    ListDirty();  // untracked, the changed partitions were marked but not listed
  }
  // The partitions erased and changed since the last call, as erases and puts of prefixed keys.
  void SaveChanges(StateDelta& d) {
    std::string key = prefix_, value;
    // In key order, each once: the delta is the same on every run.
    std::sort(erased_.begin(), erased_.end());
    erased_.erase(std::unique(erased_.begin(), erased_.end()), erased_.end());
    for (const std::string& k : erased_) d.Erase(key.assign(prefix_).append(k));
    erased_.clear();
    // The changed partitions, found by key: the cost follows the changes, not the partitions.
    if (!track_) ListDirty();
    std::sort(dirty_.begin(), dirty_.end());
    dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
    for (const std::string& k : dirty_) {
      auto it = parts_.find(k);
      if (it == parts_.end() || !it->second.dirty) continue;  // erased since
      value.clear();
      codec_.encode(it->second.part, &value);
      d.Put(key.assign(prefix_).append(k), value);
      it->second.dirty = false;
    }
    dirty_.clear();
    stored_.Saved();
  }
  // Before a restore: forgets everything but the store's lookup.
  void BeginRestore() {
    Clear();
    stored_.Reset();
  }
  // A stored entry (its key without the prefix), unchanged since.
  void RestoreEntry(std::string_view key, std::string_view value) { Load(key, value); }
  void Back(StateSource* source, uint32_t node, bool all_stored) { stored_.Attach(source, node, all_stored); }
  // A checkpoint committed: lookups move to it; with evict the unchanged partitions leave memory.
  void Committed(bool evict) {
    if (!stored_.Committed() || !evict) return;
    size_t n = 0;
    for (auto it = parts_.begin(); it != parts_.end();) {
      if (it->second.dirty) {
        ++it;
        continue;
      }
      bytes_ -= it->second.bytes;
      it = Erase(it);
      ++n;
    }
    stored_.Evicted(n);
  }

 private:
  // A map node, the key's string, the Entry's fields and the index's slot, roughly.
  static constexpr size_t kEntryBytes = 128;

  typename Map::iterator Locate(std::string_view key) {
    if (auto found = index_.find(IndexKey(key)); found != index_.end()) return found->second;
    if (!stored_.backed()) return parts_.end();
    const std::string* value = stored_.Read(key);
    return value == nullptr ? parts_.end() : Load(key, *value);
  }
  // A new empty partition (key must be absent), and erasing one: parts_ and index_ together.
  typename Map::iterator Emplace(std::string_view key) {
    auto it = parts_.emplace(std::string(key), Entry{codec_.make(), false, false, 0}).first;
    index_.emplace(it->first, it);
    return it;
  }
  typename Map::iterator Erase(typename Map::iterator it) {
    index_.erase(IndexKey(it->first));
    return parts_.erase(it);
  }
  // Lists the keys of the changed partitions afresh (a walk of them all).
  void ListDirty() {
    dirty_.clear();
    for (const auto& [k, e] : parts_)
      if (e.dirty) dirty_.push_back(k);
  }
  // Decodes a stored partition into memory, unchanged since it was stored.
  typename Map::iterator Load(std::string_view key, std::string_view value) {
    auto it = Emplace(key);
    codec_.decode(value, &it->second.part);
    Estimate(it);
    return it;
  }
  // Sets a partition's memory estimate (its old one already taken off bytes_).
  void Estimate(typename Map::iterator it) {
    // (the index's copy of a key past std::string's inline 15 bytes is on the heap too)
    const size_t key = it->first.size();
    it->second.bytes = codec_.bytes(it->second.part) + (key > 15 ? 2 * key : key) + kEntryBytes;
    bytes_ += it->second.bytes;
  }

  Codec codec_;
  std::string prefix_;
  StoredEntries stored_;
  Map parts_;
  // parts_ by key, hashed: a lookup among many partitions costs a probe or two, where the tree's
  // costs a cache miss per level. The index holds a copy of each key (within the slot when short),
  // so a lookup compares keys without reading the partition's node.
  absl::flat_hash_map<std::string, typename Map::iterator> index_;
  // A key as the index's lookups take it (absl's string view: its hash and equality are
  // heterogeneous for it).
  static absl::string_view IndexKey(std::string_view key) { return {key.data(), key.size()}; }
  std::vector<typename Map::iterator> touched_;  // since the last EndStep, each once
  std::vector<std::string> erased_;              // since the last SaveChanges, when tracking
  size_t bytes_ = 0;
  // Keys of the partitions changed since the last SaveChanges, when tracking (may list erased
  // ones and repeat keys).
  std::vector<std::string> dirty_;
  bool track_ = false;
};

// An operator whose whole state is one Partitions<Part> (parts_): Operator's keyed-state and
// store-backing calls, forwarded. The operator keeps SaveState / RestoreState (the whole state,
// for recursive circuits and older checkpoints) and BeginRestore (whose header may be such a
// whole state).
template <typename Part>
class PartitionedOperator : public Operator {
 public:
  bool HasState() const override { return true; }
  bool HasKeyedState() const override { return true; }
  void TrackChanges() override { parts_.TrackChanges(); }
  void SaveChanges(StateWriter&, StateDelta& d) override { parts_.SaveChanges(d); }
  void RestoreEntry(std::string_view key, std::string_view value) override { parts_.RestoreEntry(key, value); }
  bool CanBackState() const override { return true; }
  void BackState(StateSource* source, uint32_t node, bool all_stored) override {
    parts_.Back(source, node, all_stored);
  }
  void StateCommitted(bool evict) override { parts_.Committed(evict); }
  size_t StateMemoryBytes() const override { return parts_.MemoryBytes(); }

 protected:
  explicit PartitionedOperator(typename Partitions<Part>::Codec codec) : parts_(std::move(codec)) {}
  Partitions<Part> parts_;
};

}  // namespace fld
