#include "core/zset/key_weights.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace fld {

static_assert(sizeof(KeyWeights) == 8, "one is in every group's MIN/MAX and pair accumulator");
static_assert(alignof(std::max_align_t) >= 16, "a buffer's or tree's address leaves 4 low bits free");

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
// The bytes of entries a buffer malloc returned has room for: its size class, not what was
// asked for, less the header.
template <class H>
uint16_t CapacityOf(H* buf) {
  return static_cast<uint16_t>(std::min<size_t>(malloc_usable_size(buf) - sizeof(H), UINT16_MAX));
}
}  // namespace

KeyWeights::Packed KeyWeights::Decode(uint32_t at) const {
  const char* buf = entries();
  Packed e;
  const auto len = static_cast<uint32_t>(GetVarint(buf, &at));
  e.key = std::string_view(buf + at, len);
  at += len;
  e.weight_at = at;
  e.weight = Unzigzag(GetVarint(buf, &at));
  e.end = at;
  return e;
}

uintptr_t KeyWeights::BufferWord(Header* h) {
  const auto at = reinterpret_cast<uintptr_t>(h);
  const uintptr_t lines = ((at + sizeof(Header) + h->cap - 1) >> 6) - (at >> 6) + 1;
  return at | (std::min<uintptr_t>(lines, 8) - 1) << 1;
}

void KeyWeights::Free() {
  if (Tree* t = tree())
    delete t;
  else
    std::free(head());
  rep_ = 0;
}

KeyWeights::KeyWeights(const KeyWeights& o) {
  if (o.rep_ == 0) return;
  if (const Tree* t = o.tree()) {
    rep_ = reinterpret_cast<uintptr_t>(new Tree(*t)) | 1;
    return;
  }
  const size_t bytes = sizeof(Header) + o.head()->used;
  auto* h = static_cast<Header*>(std::malloc(bytes));
  if (!h) throw std::bad_alloc();
  std::memcpy(h, o.head(), bytes);
  h->cap = CapacityOf(h);
  rep_ = BufferWord(h);
}

void KeyWeights::Add(std::string_view key, int64_t w) {
  if (w == 0) return;
  if (Tree* t = tree()) {
    auto it = t->set.find(key);
    if (it == t->set.end()) {
      t->heap += InlineKeyHeapBytes(key.size());
      t->set.insert(Entry{InlineKey(key), w});
      return;
    }
    it->weight += w;
    if (it->weight != 0) return;
    t->heap -= InlineKeyHeapBytes(key.size());
    t->set.erase(it);
    if (t->set.empty()) Free();
    return;
  }
  const Header h = rep_ == 0 ? Header{0, 0, 0, 0} : *head();
  const uint32_t used = h.used, count = h.count, last = h.last;
  // The first entry whose key is not below `key` (at; used when none), and the one before it.
  // A key above the last one (rising keys: an ARG_MAX over a timestamp) is appended unscanned.
  uint32_t at = 0, prev = 0;
  Packed e{};
  bool found = false;
  if (count > 0 && Decode(last).key < key) {
    at = used;
    prev = last;
  } else {
    while (at < used) {
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
  // Replaces bytes [at, end) of the entries by `bytes` new ones, written by write(dest). The
  // capacity is what malloc gave (CapacityOf): its size class's slack is used, not wasted.
  auto splice = [&](uint32_t end, size_t bytes, auto&& write) {
    const size_t new_used = used - (end - at) + bytes;
    if (rep_ == 0 || new_used > head()->cap) {
      const size_t want = sizeof(Header) + new_used + new_used / 4;
      auto* grown = static_cast<Header*>(std::realloc(rep_ == 0 ? nullptr : head(), want));
      if (!grown) throw std::bad_alloc();
      if (rep_ == 0) *grown = Header{0, 0, 0, 0};
      grown->cap = CapacityOf(grown);
      rep_ = BufferWord(grown);
    }
    char* buf = entries();
    std::memmove(buf + at + bytes, buf + end, used - end);
    write(buf + at);
    head()->used = static_cast<uint16_t>(new_used);
  };
  if (found) {
    const uint32_t start = at;
    const int64_t weight = e.weight + w;
    if (weight == 0) {
      if (count == 1) {
        Free();
        return;
      }
      splice(e.end, 0, [](char*) {});
      head()->count = static_cast<uint16_t>(count - 1);
      head()->last = start == last ? static_cast<uint16_t>(prev) : static_cast<uint16_t>(last - (e.end - start));
      return;
    }
    const size_t bytes = VarintBytes(Zigzag(weight));
    at = e.weight_at;
    splice(e.end, bytes, [&](char* p) { PutVarint(p, Zigzag(weight)); });
    if (start != last) head()->last = static_cast<uint16_t>(last + bytes - (e.end - e.weight_at));
    return;
  }
  const size_t bytes = VarintBytes(key.size()) + key.size() + VarintBytes(Zigzag(w));
  if (!Packs(count, used, bytes)) {
    ToTree();
    Tree* t = tree();
    t->heap += InlineKeyHeapBytes(key.size());
    t->set.insert(Entry{InlineKey(key), w});
    return;
  }
  const bool at_end = at == used;
  splice(at, bytes, [&](char* p) {
    p += PutVarint(p, key.size());
    std::memcpy(p, key.data(), key.size());
    PutVarint(p + key.size(), Zigzag(w));
  });
  head()->last = at_end ? static_cast<uint16_t>(at) : static_cast<uint16_t>(last + bytes);
  head()->count = static_cast<uint16_t>(count + 1);
}

void KeyWeights::ToTree() {
  auto t = std::make_unique<Tree>();
  ForEach([&](std::string_view key, int64_t w) {
    t->heap += InlineKeyHeapBytes(key.size());
    t->set.insert(t->set.end(), Entry{InlineKey(key), w});
  });
  Free();
  rep_ = reinterpret_cast<uintptr_t>(t.release()) | 1;
}

size_t KeyWeights::HeapBytes() const {
  if (const Tree* t = tree()) return sizeof(Tree) + t->set.size() * kInlineKeyEntryBytes + t->heap;
  return rep_ == 0 ? 0 : sizeof(Header) + head()->cap;
}

std::optional<std::string_view> KeyWeights::FirstPositive(std::string_view from) const {
  if (rep_ == 0) return std::nullopt;
  if (const Tree* t = tree()) {
    for (auto it = from.empty() ? t->set.begin() : t->set.lower_bound(from); it != t->set.end(); ++it)
      if (it->weight > 0) return it->key.view();
    return std::nullopt;
  }
  for (uint32_t at = 0, used = head()->used; at < used;) {
    const Packed e = Decode(at);
    if (e.weight > 0 && e.key >= from) return e.key;
    at = e.end;
  }
  return std::nullopt;
}

std::optional<std::string_view> KeyWeights::LastPositive() const {
  if (rep_ == 0) return std::nullopt;
  if (const Tree* t = tree()) {
    for (auto it = t->set.rbegin(); it != t->set.rend(); ++it)
      if (it->weight > 0) return it->key.view();
    return std::nullopt;
  }
  const uint32_t last_at = head()->last;
  const Packed last = Decode(last_at);
  if (last.weight > 0) return last.key;
  std::optional<std::string_view> found;  // a negative weight last: the one before it, scanned for
  for (uint32_t at = 0; at < last_at;) {
    const Packed e = Decode(at);
    if (e.weight > 0) found = e.key;
    at = e.end;
  }
  return found;
}

bool KeyWeights::PacksAnother(size_t n) const {
  if (tree()) return false;
  const size_t worst = VarintBytes(n) + n + VarintBytes(UINT64_MAX);  // the largest weight's varint
  return rep_ == 0 ? Packs(0, 0, worst) : Packs(head()->count, head()->used, worst);
}

size_t KeyWeights::size() const {
  if (rep_ == 0) return 0;
  if (const Tree* t = tree()) return t->set.size();
  return head()->count;
}

std::string_view KeyWeights::LastKey() const {
  if (const Tree* t = tree()) return t->set.rbegin()->key.view();
  return Decode(head()->last).key;
}

}  // namespace fld
