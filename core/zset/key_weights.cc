#include "core/zset/key_weights.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace fld {

static_assert(sizeof(KeyWeights) <= 32, "one is in every group's MIN/MAX and pair box");

namespace {
// Varints of 7 bits a byte, the low ones first; weights zigzag-encoded (small magnitudes of
// either sign in one byte).
size_t PutVarint(char* out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<char>(v);
  return n;
}
size_t VarintBytes(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, ++n;
  return n;
}
uint64_t GetVarint(const char* p, uint32_t* at) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto b = static_cast<uint8_t>(p[(*at)++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
}
uint64_t Zigzag(int64_t w) {
  return (static_cast<uint64_t>(w) << 1) ^ static_cast<uint64_t>(w >> 63);
}
int64_t Unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}
// The capacity of a buffer malloc returned: its size class, not what was asked for.
uint16_t CapacityOf(char* buf) {
  return static_cast<uint16_t>(std::min<size_t>(malloc_usable_size(buf), UINT16_MAX));
}
}  // namespace

KeyWeights::Packed KeyWeights::Decode(uint32_t at) const {
  Packed e;
  const auto len = static_cast<uint32_t>(GetVarint(buf_, &at));
  e.key = std::string_view(buf_ + at, len);
  at += len;
  e.weight_at = at;
  e.weight = Unzigzag(GetVarint(buf_, &at));
  e.end = at;
  return e;
}

KeyWeights::KeyWeights(const KeyWeights& o) : used_(o.used_), count_(o.count_), last_(o.last_), heap_(o.heap_) {
  if (o.tree_) tree_ = std::make_unique<absl::btree_set<Entry, Less>>(*o.tree_);
  if (used_ > 0) {
    buf_ = static_cast<char*>(std::malloc(used_));
    if (!buf_) throw std::bad_alloc();
    cap_ = CapacityOf(buf_);
    std::memcpy(buf_, o.buf_, used_);
  }
}

void KeyWeights::Add(std::string_view key, int64_t w) {
  if (w == 0) return;
  if (tree_) {
    auto it = tree_->find(key);
    if (it == tree_->end()) {
      heap_ += InlineKeyHeapBytes(key.size());
      tree_->insert(Entry{InlineKey(key), w});
      return;
    }
    it->weight += w;
    if (it->weight != 0) return;
    heap_ -= InlineKeyHeapBytes(key.size());
    tree_->erase(it);
    return;
  }
  // The first entry whose key is not below `key` (at; used_ when none), and the one before it.
  // A key above the last one (rising keys: an ARG_MAX over a timestamp) is appended unscanned.
  uint32_t at = 0, prev = 0;
  Packed e{};
  bool found = false;
  if (count_ > 0 && Decode(last_).key < key) {
    at = used_;
    prev = last_;
  } else {
    while (at < used_) {
      e = Decode(at);
      const int c = e.key.compare(key);
      if (c >= 0) {
        found = c == 0;
        break;
      }
      prev = at;
      at = e.end;
    }
  }
  // Replaces bytes [at, end) of the buffer by `bytes` new ones, written by write(dest). The
  // capacity is what malloc gave (CapacityOf): its size class's slack is used, not wasted.
  auto splice = [&](uint32_t end, size_t bytes, auto&& write) {
    const size_t new_used = used_ - (end - at) + bytes;
    if (new_used > cap_) {
      char* grown = static_cast<char*>(std::realloc(buf_, new_used + new_used / 4));
      if (!grown) throw std::bad_alloc();
      buf_ = grown;
      cap_ = CapacityOf(grown);
    }
    std::memmove(buf_ + at + bytes, buf_ + end, used_ - end);
    write(buf_ + at);
    used_ = static_cast<uint16_t>(new_used);
  };
  if (found) {
    const uint32_t start = at;
    const int64_t weight = e.weight + w;
    if (weight == 0) {
      if (--count_ == 0) {
        *this = KeyWeights();
        return;
      }
      splice(e.end, 0, [](char*) {});
      last_ = start == last_ ? static_cast<uint16_t>(prev) : static_cast<uint16_t>(last_ - (e.end - start));
      return;
    }
    const size_t bytes = VarintBytes(Zigzag(weight));
    at = e.weight_at;
    splice(e.end, bytes, [&](char* p) { PutVarint(p, Zigzag(weight)); });
    if (start != last_) last_ = static_cast<uint16_t>(last_ + bytes - (e.end - e.weight_at));
    return;
  }
  const size_t bytes = VarintBytes(key.size()) + key.size() + VarintBytes(Zigzag(w));
  if (count_ == kSmall || used_ + bytes > kSmallBytes) {
    ToTree();
    heap_ += InlineKeyHeapBytes(key.size());
    tree_->insert(Entry{InlineKey(key), w});
    return;
  }
  const bool at_end = at == used_;
  splice(at, bytes, [&](char* p) {
    p += PutVarint(p, key.size());
    std::memcpy(p, key.data(), key.size());
    PutVarint(p + key.size(), Zigzag(w));
  });
  last_ = at_end ? static_cast<uint16_t>(at) : static_cast<uint16_t>(last_ + bytes);
  ++count_;
}

void KeyWeights::ToTree() {
  auto tree = std::make_unique<absl::btree_set<Entry, Less>>();
  size_t heap = 0;
  ForEach([&](std::string_view key, int64_t w) {
    heap += InlineKeyHeapBytes(key.size());
    tree->insert(tree->end(), Entry{InlineKey(key), w});
  });
  *this = KeyWeights();
  tree_ = std::move(tree);
  heap_ = heap;
}

size_t KeyWeights::HeapBytes() const {
  if (tree_) return tree_->size() * kInlineKeyEntryBytes + heap_;
  return cap_;
}

std::optional<std::string_view> KeyWeights::FirstPositive(std::string_view from) const {
  if (tree_) {
    for (auto it = from.empty() ? tree_->begin() : tree_->lower_bound(from); it != tree_->end(); ++it)
      if (it->weight > 0) return it->key.view();
    return std::nullopt;
  }
  for (uint32_t at = 0; at < used_;) {
    const Packed e = Decode(at);
    if (e.weight > 0 && e.key >= from) return e.key;
    at = e.end;
  }
  return std::nullopt;
}

std::optional<std::string_view> KeyWeights::LastPositive() const {
  if (tree_) {
    for (auto it = tree_->rbegin(); it != tree_->rend(); ++it)
      if (it->weight > 0) return it->key.view();
    return std::nullopt;
  }
  if (count_ == 0) return std::nullopt;
  const Packed last = Decode(last_);
  if (last.weight > 0) return last.key;
  std::optional<std::string_view> found;  // a negative weight last: the one before it, scanned for
  for (uint32_t at = 0; at < last_;) {
    const Packed e = Decode(at);
    if (e.weight > 0) found = e.key;
    at = e.end;
  }
  return found;
}

}  // namespace fld
