#include "core/zset/spine.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/common/serialize.h"
#include "core/zset/arena_map.h"

namespace fld {

namespace {
// A pending entry's key, row and weight.
struct Pending {
  std::string_view key, row;
  int64_t w;
};
Pending ReadPending(const char* p) {
  const uint64_t kn = GetVarint(&p);
  const uint64_t rn = GetVarint(&p);
  Pending e{std::string_view(p, kn), std::string_view(p + kn, rn), 0};
  std::memcpy(&e.w, p + kn + rn, 8);
  return e;
}

// Bytes of a run past which runs are not merged: a run's block offsets are 32 bits.
constexpr size_t kMaxRunBytes = size_t{3} << 30;
}  // namespace

void Spine::Add(std::string_view key, std::string_view row, int64_t w) {
  if (w == 0) return;
  if (pending_.size() > kMaxRunBytes / 2) Seal();  // keeps pending offsets within 32 bits
  unsigned char b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(b, key.data(), std::min<size_t>(8, key.size()));
  uint64_t prefix = 0;
  for (const unsigned char c : b) prefix = (prefix << 8) | c;
  refs_.push_back({prefix, static_cast<uint32_t>(pending_.size())});
  char head[20];
  size_t n = PutVarint(head, key.size());
  n += PutVarint(head + n, row.size());
  pending_.append(head, n).append(key).append(row).append(reinterpret_cast<const char*>(&w), 8);
}

bool Spine::Cursor::Next() {
  if (p >= end) return false;
  const uint64_t kh = GetVarint(&p);
  const uint64_t rh = GetVarint(&p);
  if (kh != 0) {
    key = std::string_view(p, kh - 1);
    p += kh - 1;
  }
  row = std::string_view(p, rh >> 1);
  p += rh >> 1;
  w = (rh & 1) ? UnZigZag(GetVarint(&p)) : 1;
  return true;
}

Spine::Writer::Writer(size_t reserve_bytes) {
  run_.bytes.reserve(reserve_bytes);
}

void Spine::Writer::Put(std::string_view key, std::string_view row, int64_t w) {
  const bool block = run_.rows % kBlockRows == 0;
  if (block) run_.blocks.push_back(static_cast<uint32_t>(run_.bytes.size()));
  const bool same = !block && key == last_key_;
  char head[30];
  size_t n = PutVarint(head, same ? 0 : key.size() + 1);
  n += PutVarint(head + n, (static_cast<uint64_t>(row.size()) << 1) | (w != 1 ? 1 : 0));
  run_.bytes.append(head, n);
  if (!same) {
    run_.bytes.append(key);
    if (run_.rows == 0 || key != last_key_) hashes_.push_back(FilterHash(key));  // (a block may open with the last key)
    last_key_.assign(key);
  }
  run_.bytes.append(row);
  if (w != 1) run_.bytes.append(head, PutVarint(head, ZigZag(w)));
  ++run_.rows;
}

Spine::Run Spine::Writer::Finish() {
  // A power of two of words, 8 bits or more per key.
  const size_t words = std::bit_ceil(std::max<size_t>(1, (hashes_.size() * 8 + 63) / 64));
  run_.filter.assign(words, 0);
  run_.filter_shift = 64 - std::countr_zero(words);
  for (const uint64_t h : hashes_) run_.filter[FilterWord(run_, h)] |= FilterBits(h);
  return std::move(run_);
}

uint64_t Spine::FilterHash(std::string_view key) {
  return (uint64_t{ArenaMap::Hash(key)} | (uint64_t{key.size()} << 32)) * 0x9E3779B97F4A7C15ull;
}

size_t Spine::FirstBlockFor(const Run& run, std::string_view key) {
  // The first block whose first key is >= key; the search starts one block before it.
  size_t lo = 0, hi = run.blocks.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    Cursor c(run, run.blocks[mid]);
    c.Next();
    if (c.key < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == 0 ? 0 : run.blocks[lo - 1];
}

namespace {
// Sorts refs by prefix: least significant byte first, skipping the bytes all of them share (the
// zero padding of keys under 8 bytes, the high bytes of small integers).
template <typename Ref>
void RadixSort(std::vector<Ref>* refs) {
  const size_t n = refs->size();
  std::vector<size_t> count(8 * 256, 0);
  for (const Ref& r : *refs)
    for (int b = 0; b < 8; ++b) ++count[b * 256 + ((r.prefix >> (8 * b)) & 255)];
  std::vector<Ref> tmp(n);
  for (int b = 0; b < 8; ++b) {
    size_t* c = &count[b * 256];
    if (c[(refs->front().prefix >> (8 * b)) & 255] == n) continue;  // one value of this byte
    size_t sum = 0;
    for (int v = 0; v < 256; ++v) sum += std::exchange(c[v], sum);
    for (const Ref& r : *refs) tmp[c[(r.prefix >> (8 * b)) & 255]++] = r;
    refs->swap(tmp);
  }
}
}  // namespace

void Spine::Seal() {
  if (refs_.empty()) return;
  // Sorted by the key's first 8 bytes (big-endian: their byte order), then by whole key and row
  // among those equal there (keys of a few bytes rarely are, but for rows of one key).
  const char* base = pending_.data();
  std::vector<Ref>& refs = refs_;
  RadixSort(&refs);
  auto less = [base](const Ref& a, const Ref& b) {
    const Pending x = ReadPending(base + a.at), y = ReadPending(base + b.at);
    if (const int c = x.key.compare(y.key); c != 0) return c < 0;
    return x.row < y.row;
  };
  for (size_t i = 0; i < refs.size();) {
    size_t j = i + 1;
    while (j < refs.size() && refs[j].prefix == refs[i].prefix) ++j;
    if (j - i > 1) std::sort(refs.begin() + static_cast<ptrdiff_t>(i), refs.begin() + static_cast<ptrdiff_t>(j), less);
    i = j;
  }
  Writer out(pending_.size());
  for (size_t i = 0; i < refs.size();) {
    const Pending e = ReadPending(base + refs[i].at);
    int64_t w = e.w;
    size_t j = i + 1;
    for (; j < refs.size() && refs[j].prefix == refs[i].prefix; ++j) {
      const Pending f = ReadPending(base + refs[j].at);
      if (f.key != e.key || f.row != e.row) break;
      w += f.w;
    }
    if (w != 0) out.Put(e.key, e.row, w);
    i = j;
  }
  pending_.clear();
  refs_.clear();
  Run run = out.Finish();
  if (run.rows == 0) return;
  run.bytes.shrink_to_fit();  // reserved for the pending bytes, which take more
  rows_ += run.rows;
  runs_.push_back(std::move(run));
  for (size_t n = runs_.size(); n >= 4; n = runs_.size()) {
    bool small = true;
    for (size_t i = n - 4; i < n; ++i) small = small && runs_[i].rows < kSmallRun;
    if (!small) break;
    MergeTail(n - 4);
  }
}

void Spine::Merge() {
  // Runs whose bytes together pass kMaxRunBytes stay apart (a run's block offsets are 32 bits).
  size_t first = runs_.size(), bytes = 0;
  while (first > 0 && bytes + runs_[first - 1].bytes.size() <= kMaxRunBytes) bytes += runs_[--first].bytes.size();
  if (runs_.size() - first >= 2) MergeTail(first);
}

void Spine::MergeTail(size_t first) {
  const size_t k = runs_.size() - first;
  size_t bytes = 0;
  std::vector<Cursor> cur;
  std::vector<bool> live;
  for (size_t i = first; i < runs_.size(); ++i) {
    bytes += runs_[i].bytes.size();
    cur.emplace_back(runs_[i], 0);
    live.push_back(cur.back().Next());
  }
  Writer out(bytes);
  for (;;) {
    // The smallest (key, row) among the cursors; equal ones summed.
    size_t best = k;
    for (size_t i = 0; i < k; ++i) {
      if (!live[i]) continue;
      if (best == k) {
        best = i;
        continue;
      }
      int c = cur[i].key.compare(cur[best].key);
      if (c == 0) c = cur[i].row.compare(cur[best].row);
      if (c < 0) best = i;
    }
    if (best == k) break;
    const std::string_view key = cur[best].key, row = cur[best].row;
    int64_t w = 0;
    for (size_t i = 0; i < k; ++i)
      if (live[i] && i != best && cur[i].key == key && cur[i].row == row) {
        w += cur[i].w;
        live[i] = cur[i].Next();
      }
    w += cur[best].w;
    if (w != 0) out.Put(key, row, w);
    live[best] = cur[best].Next();
  }
  for (size_t i = first; i < runs_.size(); ++i) rows_ -= runs_[i].rows;
  runs_.resize(first);
  Run run = out.Finish();
  if (run.rows == 0) return;
  rows_ += run.rows;
  runs_.push_back(std::move(run));
}

size_t Spine::MemoryBytes() const {
  // (An empty std::string's capacity is its inline buffer: nothing is held until a row comes.)
  size_t n = refs_.capacity() == 0 ? 0 : pending_.capacity() + refs_.capacity() * sizeof(Ref);
  n += runs_.capacity() * sizeof(Run);
  for (const Run& r : runs_)
    n += r.bytes.capacity() + r.blocks.capacity() * sizeof(uint32_t) + r.filter.capacity() * sizeof(uint64_t);
  return n;
}

void Spine::Clear() {
  std::vector<Run>().swap(runs_);
  rows_ = 0;
  std::string().swap(pending_);
  std::vector<Ref>().swap(refs_);
}

}  // namespace fld
