#include "core/zset/order_key.h"

#include <cmath>
#include <cstring>

#include "core/common/byte_order.h"
#include "core/zset/batch.h"

namespace fld {

namespace {

constexpr char kNullFirst = 0x00, kPresent = 0x01, kNullLast = static_cast<char>(0xff);
constexpr uint64_t kSign = uint64_t{1} << 63;
// An integer's tag holds its sign and length: kIntZero + n for a value >= 0 of n significant
// bytes (0 for 0), kIntZero - n for a negative one whose complement has n (1 to 8).
constexpr int kIntZero = 0x09;

// An integer: its tag (inverted for DESC: 0xee..0xfe, still between the NULL tags) and then its
// n low bytes big-endian (inverted for DESC).
void PutInt(int64_t v, bool invert, std::string* out) {
  const uint64_t mag = v < 0 ? ~static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int n = mag == 0 ? 0 : (71 - __builtin_clzll(mag)) / 8;  // the bytes mag needs
  if (v < 0 && n == 0) n = 1;                              // -1: one byte, 0xff
  const int tag = v < 0 ? kIntZero - n : kIntZero + n;
  // The tag and the value's low n bytes, big-endian, appended at once.
  char b[16];
  const uint64_t be = ByteOrder64(invert ? ~static_cast<uint64_t>(v) : static_cast<uint64_t>(v));
  std::memcpy(b + 8, &be, 8);
  b[15 - n] = static_cast<char>(invert ? 0xff - tag : tag);
  out->append(b + 15 - n, static_cast<size_t>(n) + 1);
}

// Reads the integer whose (non-NULL) tag is `tag` from p; returns its bytes past the tag.
int GetInt(unsigned char tag, const char* p, bool invert, int64_t* v) {
  const int t = invert ? 0xff - tag : tag;
  const int n = t < kIntZero ? kIntZero - t : t - kIntZero;
  uint64_t bits = t < kIntZero ? ~uint64_t{0} : 0;  // sign extension
  for (int i = 0; i < n; ++i) bits = bits << 8 | static_cast<unsigned char>(invert ? ~p[i] : p[i]);
  *v = static_cast<int64_t>(bits);
  return n;
}

static_assert(kIntZero - 8 == 0x01 && kIntZero + 8 == 0x11, "IsOrderKeyIntTag's range");

void PutBigEndian(uint64_t v, bool invert, std::string* out) {
  AppendBigEndian64(invert ? ~v : v, out);
}

uint64_t GetBigEndian(const char* p, bool invert) {
  const uint64_t v = BigEndian64At(p);
  return invert ? ~v : v;
}

// A string's bytes, escaped and ended (its tag not included).
void PutString(std::string_view s, bool invert, std::string* out) {
  const char x = invert ? static_cast<char>(0xff) : 0;
  for (char c : s) {
    if (c == 0) {
      out->push_back(x);
      out->push_back(static_cast<char>(0xff ^ x));
    } else {
      out->push_back(static_cast<char>(c ^ x));
    }
  }
  out->push_back(x);
  out->push_back(x);
}

// A non-NULL double or string: its tag, then its bytes.
void PutDouble(double d, bool desc, std::string* out) {
  out->push_back(kPresent);
  PutBigEndian(OrderedDoubleBits(d), desc, out);
}
void PutText(std::string_view s, bool desc, std::string* out) {
  out->push_back(kPresent);
  PutString(s, desc, out);
}

// One value: tag, then (not NULL) its bytes. `null_tag`: NULL's tag. From a column (the per-row
// path: no Value is built) or from a Value.
void PutValue(const Column& c, size_t r, char null_tag, bool desc, std::string* out) {
  if (c.IsNull(r)) return out->push_back(null_tag);
  switch (c.phys) {
    case PhysType::kI64:
      return PutInt(c.i64[r], desc, out);
    case PhysType::kF64:
      return PutDouble(c.f64[r], desc, out);
    case PhysType::kStr:
      return PutText(c.str[r], desc, out);
  }
}

void PutValue(const Value& v, char null_tag, bool desc, std::string* out) {
  switch (v.kind) {
    case Value::Kind::kNull:
      return out->push_back(null_tag);
    case Value::Kind::kInt:
      return PutInt(v.i, desc, out);
    case Value::Kind::kDouble:
      return PutDouble(v.d, desc, out);
    case Value::Kind::kString:
      return PutText(v.s, desc, out);
  }
}

}  // namespace

void AppendOrderKeyInt(int64_t v, std::string* out) {
  PutInt(v, false, out);
}

size_t ReadOrderKeyInt(const char* p, int64_t* v) {
  return 1 + static_cast<size_t>(GetInt(static_cast<unsigned char>(p[0]), p + 1, false, v));
}

namespace {

// Sets *v to a value of kind k (fields as Value's factories leave them), keeping its string's
// buffer for reuse.
void Reset(Value* v, Value::Kind k) {
  v->kind = k;
  v->i = 0;
  v->d = 0;
  v->s.clear();
}

// Reads one value of physical type t at *pos (advancing it); into *v when v is not null.
void GetValue(std::string_view key, size_t* pos, PhysType t, bool desc, Value* v) {
  const char tag = key[(*pos)++];
  if (tag == kNullFirst || tag == kNullLast) {
    if (v) Reset(v, Value::Kind::kNull);
    return;
  }
  if (t == PhysType::kI64) {
    int64_t i;
    *pos += GetInt(static_cast<unsigned char>(tag), key.data() + *pos, desc, &i);
    if (v) {
      Reset(v, Value::Kind::kInt);
      v->i = i;
    }
    return;
  }
  if (t == PhysType::kF64) {
    const uint64_t bits = GetBigEndian(key.data() + *pos, desc);
    *pos += 8;
    if (v) {
      Reset(v, Value::Kind::kDouble);
      v->d = DoubleOfOrderedBits(bits);
    }
    return;
  }
  // Into v's string (its buffer reused), a run of bytes up to the next 0x00 (0xff for DESC) at
  // a time.
  const char x = desc ? static_cast<char>(0xff) : 0;
  std::string* s = nullptr;
  if (v) {
    Reset(v, Value::Kind::kString);
    s = &v->s;
  }
  for (;;) {
    const char* from = key.data() + *pos;
    const char* end = static_cast<const char*>(std::memchr(from, x, key.size() - *pos));
    const size_t n = static_cast<size_t>(end - from);
    if (s) {
      const size_t at = s->size();
      s->append(from, n);
      if (desc)
        for (size_t i = at; i < s->size(); ++i) (*s)[i] = static_cast<char>(~(*s)[i]);
    }
    *pos += n + 1;
    const char next = key[(*pos)++];
    if (next == x) break;    // the end
    if (s) s->push_back(0);  // an escaped 0x00
  }
}

// Whether column c is one of the sort keys' (its value is then in the sort part only).
bool SortColumn(std::span<const SortKey> keys, size_t c) {
  for (const SortKey& k : keys)
    if (static_cast<size_t>(k.column) == c) return true;
  return false;
}

}  // namespace

void AppendOrderKey(std::span<const SortKey> keys, const Batch& b, size_t r, std::string* out) {
  for (const SortKey& k : keys) PutValue(*b.cols[k.column], r, k.nulls_first ? kNullFirst : kNullLast, k.desc, out);
  for (size_t c = 0; c < b.cols.size(); ++c)
    if (!SortColumn(keys, c)) PutValue(*b.cols[c], r, kNullFirst, false, out);
}

void AppendOrderKey(std::span<const SortKey> keys, std::span<const Column* const> cols, size_t r, std::string* out) {
  for (const SortKey& k : keys) PutValue(*cols[k.column], r, k.nulls_first ? kNullFirst : kNullLast, k.desc, out);
  for (size_t c = 0; c < cols.size(); ++c)
    if (!SortColumn(keys, c)) PutValue(*cols[c], r, kNullFirst, false, out);
}

int CompareCellsAsOrderKeys(const Column& c, size_t i, size_t j) {
  const bool ni = c.IsNull(i), nj = c.IsNull(j);
  if (ni || nj) return static_cast<int>(nj) - static_cast<int>(ni);
  switch (c.phys) {
    case PhysType::kI64:
      return (c.i64[i] > c.i64[j]) - (c.i64[i] < c.i64[j]);
    case PhysType::kF64: {
      const uint64_t x = OrderedDoubleBits(c.f64[i]), y = OrderedDoubleBits(c.f64[j]);
      return (x > y) - (x < y);
    }
    case PhysType::kStr: {
      const int d = c.str[i].compare(c.str[j]);
      return (d > 0) - (d < 0);
    }
  }
  return 0;
}

void AppendOrderKey(std::span<const SortKey> keys, const std::vector<Value>& row, std::string* out) {
  for (const SortKey& k : keys) PutValue(row[k.column], k.nulls_first ? kNullFirst : kNullLast, k.desc, out);
  for (size_t c = 0; c < row.size(); ++c)
    if (!SortColumn(keys, c)) PutValue(row[c], kNullFirst, false, out);
}

size_t OrderKeySortBytes(std::string_view key, std::span<const SortKey> keys, std::span<const PhysType> types) {
  size_t pos = 0;
  for (const SortKey& k : keys) GetValue(key, &pos, types[k.column], k.desc, nullptr);
  return pos;
}

std::vector<Value> RowOfOrderKey(std::string_view key, std::span<const SortKey> keys, std::span<const PhysType> types) {
  std::vector<Value> row;
  RowOfOrderKeyInto(key, keys, types, &row);
  return row;
}

void RowOfOrderKeyInto(std::string_view key, std::span<const SortKey> keys, std::span<const PhysType> types,
                       std::vector<Value>* row) {
  size_t pos = 0;
  row->resize(types.size());
  for (const SortKey& k : keys) GetValue(key, &pos, types[k.column], k.desc, &(*row)[k.column]);
  for (size_t c = 0; c < types.size(); ++c)
    if (!SortColumn(keys, c)) GetValue(key, &pos, types[c], false, &(*row)[c]);
}

uint64_t OrderedDoubleBits(double d) {
  if (d == 0.0) d = 0.0;  // -0.0 is 0.0
  uint64_t bits;
  if (std::isnan(d)) {
    bits = 0x7ff8000000000000ULL;  // one NaN, after +infinity
  } else {
    std::memcpy(&bits, &d, 8);
  }
  return (bits & kSign) ? ~bits : bits | kSign;
}

double DoubleOfOrderedBits(uint64_t v) {
  const uint64_t bits = (v & kSign) ? v & ~kSign : ~v;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

InlineKey::InlineKey(std::string_view s) {
  if (s.size() <= kInline) {
    std::memset(rep_, 0, sizeof(rep_));
    if (!s.empty()) std::memcpy(rep_, s.data(), s.size());
    rep_[kInline] = static_cast<char>(s.size());
    return;
  }
  char* p = new char[s.size()];
  std::memcpy(p, s.data(), s.size());
  const uint64_t size = s.size();
  std::memcpy(rep_, &p, 8);
  std::memcpy(rep_ + 8, &size, 8);
  rep_[kInline] = static_cast<char>(kHeap);
}

}  // namespace fld
