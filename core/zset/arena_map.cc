#include "core/zset/arena_map.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "core/common/error.h"

namespace fld {

uint32_t ArenaMap::Hash(std::string_view key) {
  const size_t n = key.size();
  uint64_t h;
  if (n <= 16) {
    // Most group and join keys are a few encoded integers: two loads (overlapping when shorter
    // than 16 bytes) and one 64x64->128-bit multiply folded to 64 bits, no loop over the bytes.
    const auto* p = reinterpret_cast<const unsigned char*>(key.data());
    uint64_t a = 0, b = 0;
    if (n >= 8) {
      std::memcpy(&a, p, 8);
      std::memcpy(&b, p + n - 8, 8);
    } else if (n >= 4) {
      uint32_t x, y;
      std::memcpy(&x, p, 4);
      std::memcpy(&y, p + n - 4, 4);
      a = x;
      b = y;
    } else if (n > 0) {
      a = p[0] | uint64_t{p[n / 2]} << 8 | uint64_t{p[n - 1]} << 16;
    }
    const unsigned __int128 m =
        static_cast<unsigned __int128>(a ^ 0x9E3779B97F4A7C15ULL ^ (n * 0x9FB21C651E98DF25ULL)) *
        (b ^ 0xE7037ED1A0B428DBULL);  // the length, multiplied, reaches every bit of a
    h = static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
    h ^= h >> 33;  // MurmurHash3's finalizer: every input bit reaches the low bits the table uses
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return static_cast<uint32_t>(h);
  }
  h = std::hash<std::string_view>()(key);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return static_cast<uint32_t>(h);
}

size_t ArenaMap::RecordSize(const char* rec) {
  const char* p = rec;
  uint64_t k = GetVarint(&p);
  uint64_t v = GetVarint(&p);
  return static_cast<size_t>(p - rec) + k + v;
}

std::string_view ArenaMap::Key(uint32_t s) const {
  const char* p = Record(slots_[s]);
  uint64_t k = GetVarint(&p);
  GetVarint(&p);
  return {p, k};
}

std::string_view ArenaMap::Value(uint32_t s) const {
  const char* p = Record(slots_[s]);
  uint64_t k = GetVarint(&p);
  uint64_t v = GetVarint(&p);
  return {p + k, v};
}

char* ArenaMap::MutableValue(uint32_t s) {
  SetDirty(&slots_[s]);
  return const_cast<char*>(Value(s).data());
}

void ArenaMap::PrefetchRecord(uint32_t h, size_t bytes) const {
  if (slots_.empty()) return;
  const size_t mask = slots_.size() - 1;
  h &= kHashMask;
  for (size_t i = Home(h, mask);; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.used()) return;
    if (s.hash() == h) {
      const auto* rec = reinterpret_cast<const char*>(Record(s));
      const auto first = reinterpret_cast<uintptr_t>(rec) >> 6;
      const auto last = (reinterpret_cast<uintptr_t>(rec) + bytes - 1) >> 6;
      for (uintptr_t line = first; line <= last; ++line) fld::Prefetch(rec + ((line - first) << 6));
      return;
    }
  }
}

uint32_t ArenaMap::Find(std::string_view key, uint32_t h) const {
  if (slots_.empty()) return kNone;
  const size_t mask = slots_.size() - 1;
  h &= kHashMask;
  for (size_t i = Home(h, mask);; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.used()) return kNone;
    if (s.hash() == h && Key(static_cast<uint32_t>(i)) == key) return static_cast<uint32_t>(i);
  }
}

void ArenaMap::Append(Slot* slot, std::string_view key, std::string_view value) {
  const size_t need = VarintSize(key.size()) + VarintSize(value.size()) + key.size() + value.size();
  if (blocks_.empty() || blocks_.back().size - blocks_.back().used < need) {
    if (blocks_.size() >= max_blocks_)
      Fail(ErrorKind::kRuntime,
           "an operator's state in memory passed {} blocks (about {} GiB) in one shard: lower storage.cache_mib so "
           "that more of it lives in the store, or use more workers",
           max_blocks_, (uint64_t{max_blocks_} * kLargeBytes) >> 30);
    Block b;
    // Past a few blocks the map is large: bigger blocks, on huge pages (see large_memory.h).
    b.size = std::max(blocks_.size() >= kLargeBytes / kBlockSize ? kLargeBytes : kBlockSize, need);
    b.data = std::unique_ptr<char, LargeFree>(static_cast<char*>(AllocLarge(b.size)), LargeFree{b.size});
    // The unused tail of the previous block is never reused: count it as garbage so that
    // compaction accounts for it.
    if (!blocks_.empty()) garbage_ += blocks_.back().size - blocks_.back().used;
    if (!blocks_.empty()) blocks_.back().used = blocks_.back().size;
    blocks_.push_back(std::move(b));
  }
  Block& b = blocks_.back();
  char* p = b.data.get() + b.used;
  size_t n = PutVarint(p, key.size());
  n += PutVarint(p + n, value.size());
  if (!key.empty()) std::memcpy(p + n, key.data(), key.size());
  if (!value.empty()) std::memcpy(p + n + key.size(), value.data(), value.size());
  slot->set_location(static_cast<uint32_t>(blocks_.size() - 1), static_cast<uint32_t>(b.used));
  b.used += need;
  live_ += need;
}

void ArenaMap::Grow() {
  Slots old = std::move(slots_);
  slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.used()) continue;
    size_t i = Home(s.hash(), mask);
    while (slots_[i].used()) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

uint32_t ArenaMap::Insert(std::string_view key, std::string_view value) {
  if ((size_ + 1) * 8 > slots_.size() * 7) Grow();
  const uint32_t h = Hash(key);
  const size_t mask = slots_.size() - 1;
  size_t i = Home(h, mask);
  while (slots_[i].used()) i = (i + 1) & mask;
  Slot s = Slot::New(h, true);
  Append(&s, key, value);
  slots_[i] = s;
  ++size_;
  ++dirty_;
  return static_cast<uint32_t>(i);
}

void ArenaMap::Assign(uint32_t s, std::string_view value) {
  std::string_view old = Value(s);
  SetDirty(&slots_[s]);
  if (old.size() == value.size()) {
    if (!value.empty()) std::memmove(MutableValue(s), value.data(), value.size());
    return;
  }
  // The new record is built from a copy: key (and maybe value) may point into the arena, and
  // appending can start a new block but never moves the old one.
  std::string_view key = Key(s);
  const size_t old_size = RecordSize(Record(slots_[s]));
  Slot moved = slots_[s];
  Append(&moved, key, value);
  slots_[s] = moved;
  live_ -= old_size;
  garbage_ += old_size;
  MaybeCompact();
}

void ArenaMap::Erase(uint32_t s) {
  if (track_erasures_) {
    std::string_view key = Key(s);
    char len[10];
    erased_.append(len, PutVarint(len, key.size()));
    erased_.append(key);
  }
  const size_t rec = RecordSize(Record(slots_[s]));
  live_ -= rec;
  garbage_ += rec;
  --size_;
  if (slots_[s].dirty()) --dirty_;
  const size_t mask = slots_.size() - 1;
  size_t i = s;
  slots_[i].clear();
  for (size_t j = (i + 1) & mask; slots_[j].used(); j = (j + 1) & mask) {
    const size_t home = Home(slots_[j].hash(), mask);
    // The entry at j may move back to i unless its home lies cyclically in (i, j].
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    slots_[j].clear();
    i = j;
  }
  if (size_ == 0) {
    // Dropping the storage keeps the erased keys: they are changes still to be checkpointed.
    slots_.clear();
    slots_.shrink_to_fit();
    blocks_.clear();
    live_ = garbage_ = 0;
    return;
  }
  MaybeCompact();
}

void ArenaMap::MaybeCompact() {
  if (garbage_ < kBlockSize || 4 * garbage_ < live_) return;
  std::vector<Block> old = std::move(blocks_);
  blocks_.clear();
  live_ = garbage_ = 0;
  // The live records are moved block by block (the slots counting-sorted by their block), each
  // old block freed once its records moved: the map never holds its live bytes twice, and the
  // new blocks reuse the memory of the old.
  std::vector<uint32_t> start(old.size() + 1, 0);
  for (const Slot& s : slots_)
    if (s.used()) ++start[s.block() + 1];
  for (size_t b = 0; b < old.size(); ++b) start[b + 1] += start[b];
  std::vector<uint32_t> by_block(start.back()), next(start.begin(), start.end() - 1);
  for (uint32_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].used()) by_block[next[slots_[i].block()]++] = i;
  for (size_t b = 0; b < old.size(); ++b) {
    for (uint32_t k = start[b]; k < start[b + 1]; ++k) {
      Slot& s = slots_[by_block[k]];
      const char* q = old[b].data.get() + s.offset();
      const uint64_t key = GetVarint(&q);
      const uint64_t value = GetVarint(&q);
      Append(&s, {q, key}, {q + key, value});
    }
    old[b].data.reset();
  }
}

void ArenaMap::Clear() {
  slots_.clear();
  slots_.shrink_to_fit();
  blocks_.clear();
  size_ = dirty_ = live_ = garbage_ = 0;
  erased_.clear();
}

void ArenaMap::KeepOnlyDirty() {
  Slots old = std::move(slots_);
  std::vector<Block> old_blocks = std::move(blocks_);
  size_t dirty = 0;
  for (const Slot& s : old) dirty += s.used() && s.dirty();
  size_t cap = 16;
  while ((dirty + 1) * 8 > cap * 7) cap *= 2;
  slots_.assign(dirty == 0 ? 0 : cap, Slot{});
  blocks_.clear();
  size_ = live_ = garbage_ = 0;
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.used() || !s.dirty()) continue;
    const char* p = old_blocks[s.block()].data.get() + s.offset();
    const uint64_t k = GetVarint(&p);
    const uint64_t v = GetVarint(&p);
    Slot moved = Slot::New(s.hash(), true);
    Append(&moved, std::string_view(p, k), std::string_view(p + k, v));
    size_t i = Home(s.hash(), mask);
    while (slots_[i].used()) i = (i + 1) & mask;
    slots_[i] = moved;
    ++size_;
  }
  dirty_ = size_;
}

void ArenaMap::ClearChanges() {
  if (dirty_ > 0)
    for (Slot& s : slots_) s.set_dirty(false);
  dirty_ = 0;
  erased_.clear();
  erased_.shrink_to_fit();
}

size_t ArenaMap::MemoryBytes() const {
  size_t n = slots_.capacity() * sizeof(Slot);
  for (const Block& b : blocks_) n += b.size;
  return n;
}

std::vector<std::pair<std::string_view, int64_t>> SortedWeights(const ArenaMap& m) {
  std::vector<std::pair<std::string_view, int64_t>> out;
  out.reserve(m.size());
  m.ForEachSlot([&](uint32_t s) {
    int64_t w;
    std::memcpy(&w, m.Value(s).data(), 8);
    out.emplace_back(m.Key(s), w);
  });
  std::sort(out.begin(), out.end());
  return out;
}

void SaveWeights(StateWriter& w, const ArenaMap& m) {
  auto sorted = SortedWeights(m);
  w.U64(sorted.size());
  for (const auto& [k, wt] : sorted) {
    w.Str(k);
    w.I64(wt);
  }
}

}  // namespace fld
