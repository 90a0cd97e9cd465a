#include "core/types/variant.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/common/error.h"

namespace fld {

namespace {

enum Tag : uint8_t {
  kNullTag = 1,
  kBooleanTag,
  kTinyIntTag,
  kSmallIntTag,
  kIntegerTag,
  kBigIntTag,
  kUBigIntTag,
  kDecimalTag,
  kRealTag,
  kDoubleTag,
  kVarcharTag,
  kVarbinaryTag,
  kDateTag,
  kTimeTag,
  kTimestampTag,
  kArrayTag,
  kMapTag,
  kUuidTag,  // after the others, so that encodings stored before it keep their meaning
};

void Put64(std::string* out, uint64_t u) {
  for (int b = 7; b >= 0; --b) out->push_back(static_cast<char>((u >> (8 * b)) & 0xff));
}

void PutInt(std::string* out, int64_t v) {
  Put64(out, static_cast<uint64_t>(v) ^ (uint64_t{1} << 63));
}

void PutDouble(std::string* out, double d) {
  d = d == 0 ? 0.0 : d;
  uint64_t u;
  std::memcpy(&u, &d, 8);
  Put64(out, (u >> 63) ? ~u : u ^ (uint64_t{1} << 63));
}

void PutBytes(std::string* out, std::string_view s) {
  for (char c : s) {
    out->push_back(c);
    if (c == '\0') out->push_back('\xff');
  }
  out->push_back('\0');
  out->push_back('\0');
}

[[noreturn]] void Malformed() {
  Fail(ErrorKind::kCorruption, "a VARIANT value is malformed");
}

// Reads encodings; every read checks the bounds.
struct Reader {
  std::string_view in;
  size_t p = 0;
  void Need(size_t n) const {
    if (p + n > in.size()) Malformed();
  }
  uint8_t Byte() {
    Need(1);
    return static_cast<uint8_t>(in[p++]);
  }
  uint64_t U64() {
    Need(8);
    uint64_t u = 0;
    for (int b = 0; b < 8; ++b) u = (u << 8) | static_cast<uint8_t>(in[p++]);
    return u;
  }
  int64_t Int() { return static_cast<int64_t>(U64() ^ (uint64_t{1} << 63)); }
  double Double() {
    uint64_t u = U64();
    u = (u >> 63) ? u ^ (uint64_t{1} << 63) : ~u;
    double d;
    std::memcpy(&d, &u, 8);
    return d;
  }
  std::string Bytes() {
    std::string s;
    for (;;) {
      Need(2);
      if (in[p] == '\0' && in[p + 1] == '\0') break;
      s.push_back(in[p]);
      p += in[p] == '\0' ? 2 : 1;
    }
    p += 2;
    return s;
  }
  // Skips one whole variant and returns its encoding.
  std::string_view Skip() {
    const size_t start = p;
    const uint8_t tag = Byte();
    switch (tag) {
      case kNullTag:
        break;
      case kDecimalTag:
        Need(18);
        p += 18;
        break;
      case kVarcharTag:
      case kVarbinaryTag:
        Bytes();
        break;
      case kArrayTag:
        while (Byte() == 1) Skip();
        break;
      case kMapTag:
        while (Byte() == 1) {
          Skip();
          Skip();
        }
        break;
      case kUuidTag:
        Need(16);
        p += 16;
        break;
      default:
        if (tag < kNullTag || tag > kMapTag) Malformed();
        Need(8);
        p += 8;
        break;
    }
    return in.substr(start, p - start);
  }
};

std::string MapEncoding(std::vector<std::pair<std::string, std::string>> entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out(1, static_cast<char>(kMapTag));
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i + 1 < entries.size() && entries[i + 1].first == entries[i].first) continue;  // the last one wins
    out.push_back('\1');
    out += entries[i].first;
    out += entries[i].second;
  }
  out.push_back('\0');
  return out;
}

std::string OfNullable(const Value& v, const SqlType& t) {
  return v.IsNull() ? VariantNull() : VariantFromValue(v, t);
}

}  // namespace

std::string VariantNull() {
  return std::string(1, static_cast<char>(kNullTag));
}

std::string VariantFromValue(const Value& v, const SqlType& t) {
  std::string out;
  auto tagged_int = [&](Tag tag) {
    out.push_back(static_cast<char>(tag));
    PutInt(&out, v.i);
    return out;
  };
  switch (t.id) {
    case TypeId::kNull:
      return VariantNull();
    case TypeId::kBoolean:
      return tagged_int(kBooleanTag);
    case TypeId::kTinyInt:
      return tagged_int(kTinyIntTag);
    case TypeId::kSmallInt:
      return tagged_int(kSmallIntTag);
    case TypeId::kInteger:
      return tagged_int(kIntegerTag);
    case TypeId::kBigInt:
      return tagged_int(kBigIntTag);
    case TypeId::kDate:
      return tagged_int(kDateTag);
    case TypeId::kTime:
      return tagged_int(kTimeTag);
    case TypeId::kTimestamp:
      return tagged_int(kTimestampTag);
    case TypeId::kDecimal:
      out.push_back(static_cast<char>(kDecimalTag));
      out.push_back(static_cast<char>(t.precision));
      out.push_back(static_cast<char>(t.scale));
      out += EncodeInt128(UnscaledDecimal(v, t));
      return out;
    case TypeId::kReal:
    case TypeId::kDouble:
      out.push_back(static_cast<char>(t.id == TypeId::kReal ? kRealTag : kDoubleTag));
      PutDouble(&out, v.d);
      return out;
    case TypeId::kChar:
    case TypeId::kVarchar:
    case TypeId::kBinary:
    case TypeId::kVarbinary:
      out.push_back(static_cast<char>(t.IsString() ? kVarcharTag : kVarbinaryTag));
      PutBytes(&out, v.s);
      return out;
    case TypeId::kArray: {
      const SqlType& et = (*t.fields)[0];
      out.push_back(static_cast<char>(kArrayTag));
      for (const Value& e : DecodeArrayValue(v.s, et)) {
        out.push_back('\1');
        out += OfNullable(e, et);
      }
      out.push_back('\0');
      return out;
    }
    case TypeId::kMap: {
      std::vector<std::pair<std::string, std::string>> entries;
      for (const auto& [k, val] : DecodeMapValue(v.s, t))
        entries.emplace_back(OfNullable(k, (*t.fields)[0]), OfNullable(val, (*t.fields)[1]));
      return MapEncoding(std::move(entries));
    }
    case TypeId::kRow: {
      std::vector<std::pair<std::string, std::string>> entries;
      std::vector<Value> fields = DecodeRowValue(v.s, *t.fields);
      for (size_t i = 0; i < fields.size(); ++i)
        entries.emplace_back(VariantFromValue(Value::String(t.FieldName(i)), SqlType::Of(TypeId::kVarchar)),
                             OfNullable(fields[i], (*t.fields)[i]));
      return MapEncoding(std::move(entries));
    }
    case TypeId::kVariant:
      return v.s;
    case TypeId::kUuid:
      out.push_back(static_cast<char>(kUuidTag));
      out += v.s;
      return out;
    default:
      break;
  }
  return VariantNull();
}

std::string VariantTypeName(std::string_view variant) {
  Reader r{variant};
  switch (r.Byte()) {
    case kNullTag:
      return "VARIANT";
    case kBooleanTag:
      return "BOOLEAN";
    case kTinyIntTag:
      return "TINYINT";
    case kSmallIntTag:
      return "SMALLINT";
    case kIntegerTag:
      return "INTEGER";
    case kBigIntTag:
      return "BIGINT";
    case kUBigIntTag:
      return "BIGINT UNSIGNED";
    case kDecimalTag: {
      int p = r.Byte(), s = r.Byte();
      return fmt::format("DECIMAL({}, {})", p, s);
    }
    case kRealTag:
      return "REAL";
    case kDoubleTag:
      return "DOUBLE";
    case kVarcharTag:
      return "VARCHAR";
    case kVarbinaryTag:
      return "VARBINARY";
    case kDateTag:
      return "DATE";
    case kTimeTag:
      return "TIME";
    case kTimestampTag:
      return "TIMESTAMP";
    case kArrayTag:
      return "VARIANT ARRAY";
    case kMapTag:
      return "MAP<VARIANT, VARIANT>";
    case kUuidTag:
      return "UUID";
    default:
      Malformed();
  }
}

namespace {

// A scalar variant as an exact number (unscaled, with its scale) or a double.
struct Number {
  bool exact = true;
  Int128 unscaled = 0;
  int scale = 0;
  double d = 0;
};

bool ReadNumber(Reader& r, uint8_t tag, Number* n) {
  switch (tag) {
    case kTinyIntTag:
    case kSmallIntTag:
    case kIntegerTag:
    case kBigIntTag:
      n->unscaled = r.Int();
      return true;
    case kUBigIntTag:
      n->unscaled = static_cast<Int128>(r.U64());
      return true;
    case kDecimalTag:
      r.Byte();
      n->scale = r.Byte();
      r.Need(16);
      n->unscaled = DecodeInt128(r.in.substr(r.p, 16));
      r.p += 16;
      return true;
    case kRealTag:
    case kDoubleTag:
      n->exact = false;
      n->d = r.Double();
      return true;
    default:
      return false;
  }
}

}  // namespace

bool VariantToValue(std::string_view variant, const SqlType& t, Value* out) {
  Reader r{variant};
  const uint8_t tag = r.Byte();
  if (tag == kNullTag) {
    *out = Value::Null();
    return true;
  }
  if (t.id == TypeId::kVariant) {
    *out = Value::String(std::string(variant));
    return true;
  }
  Number num;
  if (t.IsNumeric()) {
    if (!ReadNumber(r, tag, &num)) return false;
    if (t.IsFloat()) {
      double d = num.exact ? static_cast<double>(num.unscaled) / std::pow(10.0, num.scale) : num.d;
      *out = Value::Double(t.id == TypeId::kReal ? static_cast<double>(static_cast<float>(d)) : d);
      return true;
    }
    Int128 x;
    const int want = t.id == TypeId::kDecimal ? t.scale : 0;
    if (num.exact) {
      if (want >= num.scale) {
        if (__builtin_mul_overflow(num.unscaled, Pow10Wide(want - num.scale), &x)) return false;
      } else {
        x = RoundDiv10(num.unscaled, num.scale - want);
      }
      if (t.IsInteger() && num.scale > 0) x = num.unscaled / Pow10Wide(num.scale);  // integers truncate
    } else {
      double s = std::trunc(num.d * std::pow(10.0, want));
      if (!(std::fabs(s) < 1e38)) return false;
      x = static_cast<Int128>(s);
    }
    if (t.id == TypeId::kDecimal) {
      if (!DecimalFits(x, t.precision)) return false;
      *out = DecimalValue(x, t);
      return true;
    }
    if (x > INT64_MAX || x < INT64_MIN || !IntegerFits(static_cast<int64_t>(x), t.id)) return false;
    *out = Value::Int(static_cast<int64_t>(x));
    return true;
  }
  switch (t.id) {
    case TypeId::kBoolean:
      if (tag != kBooleanTag) return false;
      *out = Value::Int(r.Int());
      return true;
    case TypeId::kChar:
    case TypeId::kVarchar: {
      if (tag != kVarcharTag) return false;
      std::string s = r.Bytes();
      if (t.length >= 0 && s.size() > static_cast<size_t>(t.length)) s.resize(t.length);
      *out = Value::String(std::move(s));
      return true;
    }
    case TypeId::kBinary:
    case TypeId::kVarbinary:
      if (tag != kVarbinaryTag) return false;
      *out = Value::String(r.Bytes());
      return true;
    case TypeId::kUuid:
      if (tag == kUuidTag) {
        r.Need(16);
        *out = Value::String(std::string(r.in.substr(r.p, 16)));
        return true;
      }
      // JSON has no UUIDs: a string in UUID form converts.
      if (tag == kVarcharTag) return ParseValue(r.Bytes(), t, out);
      return false;
    case TypeId::kDate:
    case TypeId::kTime:
    case TypeId::kTimestamp: {
      const Tag want = t.id == TypeId::kDate ? kDateTag : t.id == TypeId::kTime ? kTimeTag : kTimestampTag;
      if (tag == want) {
        *out = Value::Int(r.Int());
        return true;
      }
      // JSON has no dates: a string in the type's text form converts.
      if (tag == kVarcharTag) return ParseValue(r.Bytes(), t, out);
      return false;
    }
    case TypeId::kArray: {
      if (tag != kArrayTag) return false;
      const SqlType& et = (*t.fields)[0];
      std::vector<Value> elements;
      while (r.Byte() == 1) {
        Value e;
        if (!VariantToValue(r.Skip(), et.WithNullable(true), &e)) e = Value::Null();
        elements.push_back(std::move(e));
      }
      *out = Value::String(EncodeArrayValue(elements, et));
      return true;
    }
    case TypeId::kMap: {
      if (tag != kMapTag) return false;
      std::vector<std::pair<Value, Value>> entries;
      while (r.Byte() == 1) {
        Value k, v;
        std::string_view ke = r.Skip(), ve = r.Skip();
        if (!VariantToValue(ke, (*t.fields)[0], &k) || k.IsNull()) return false;
        if (!VariantToValue(ve, (*t.fields)[1].WithNullable(true), &v)) v = Value::Null();
        entries.emplace_back(std::move(k), std::move(v));
      }
      *out = Value::String(EncodeMapValue(std::move(entries), t));
      return true;
    }
    default:
      return false;
  }
}

std::optional<std::string> VariantIndex(std::string_view variant, const Value& key, const SqlType& key_type) {
  if (key.IsNull()) return std::nullopt;
  Reader r{variant};
  const uint8_t tag = r.Byte();
  if (tag == kArrayTag) {
    if (!key_type.IsInteger()) return std::nullopt;
    int64_t want = key.i, at = 1;
    while (r.Byte() == 1) {
      std::string_view e = r.Skip();
      if (at++ == want) return std::string(e);
    }
    return std::nullopt;
  }
  if (tag == kMapTag) {
    const std::string k = VariantFromValue(key, key_type);
    while (r.Byte() == 1) {
      std::string_view ke = r.Skip(), ve = r.Skip();
      if (ke == k) return std::string(ve);
    }
  }
  return std::nullopt;
}

std::optional<std::vector<std::pair<std::string, std::string>>> VariantMapEntries(std::string_view v) {
  Reader r{v};
  if (r.Byte() != kMapTag) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> entries;
  while (r.Byte() == 1) {
    std::string_view k = r.Skip();
    std::string_view e = r.Skip();
    entries.emplace_back(std::string(k), std::string(e));
  }
  return entries;
}

std::optional<std::vector<std::string>> VariantArrayElements(std::string_view v) {
  Reader r{v};
  if (r.Byte() != kArrayTag) return std::nullopt;
  std::vector<std::string> elements;
  while (r.Byte() == 1) elements.emplace_back(r.Skip());
  return elements;
}

std::string VariantMapOf(std::vector<std::pair<std::string, std::string>> entries) {
  return MapEncoding(std::move(entries));
}

std::string VariantArrayOf(const std::vector<std::string>& elements) {
  std::string out(1, static_cast<char>(kArrayTag));
  for (const std::string& e : elements) {
    out.push_back('\1');
    out += e;
  }
  out.push_back('\0');
  return out;
}

// ---------------------------------------------------------------- JSON

namespace {

struct JsonIn {
  std::string_view t;
  size_t p = 0;
  int depth = 0;

  void Ws() {
    while (p < t.size() && (t[p] == ' ' || t[p] == '\t' || t[p] == '\n' || t[p] == '\r')) ++p;
  }
  bool Lit(std::string_view w) {
    if (t.substr(p, w.size()) != w) return false;
    p += w.size();
    return true;
  }
  static void Utf8(std::string* s, uint32_t cp) {
    if (cp < 0x80) {
      s->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  bool Hex4(uint32_t* v) {
    if (p + 4 > t.size()) return false;
    *v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = t[p++];
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return false;
      *v = *v * 16 + static_cast<uint32_t>(d);
    }
    return true;
  }
  bool String(std::string* s) {
    if (p >= t.size() || t[p] != '"') return false;
    ++p;
    while (p < t.size()) {
      char c = t[p++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        s->push_back(c);
        continue;
      }
      if (p >= t.size()) return false;
      char e = t[p++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          s->push_back(e);
          break;
        case 'b':
          s->push_back('\b');
          break;
        case 'f':
          s->push_back('\f');
          break;
        case 'n':
          s->push_back('\n');
          break;
        case 'r':
          s->push_back('\r');
          break;
        case 't':
          s->push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && Lit("\\u")) {
            uint32_t lo;
            if (!Hex4(&lo) || lo < 0xDC00 || lo >= 0xE000) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          Utf8(s, cp);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }
  bool Number(std::string* out) {
    const size_t start = p;
    if (p < t.size() && t[p] == '-') ++p;
    size_t int_start = p;
    while (p < t.size() && t[p] >= '0' && t[p] <= '9') ++p;
    if (p == int_start || (t[int_start] == '0' && p - int_start > 1)) return false;
    bool integer = true;
    int frac = 0;
    if (p < t.size() && t[p] == '.') {
      integer = false;
      ++p;
      size_t f = p;
      while (p < t.size() && t[p] >= '0' && t[p] <= '9') ++p;
      if (p == f) return false;
      frac = static_cast<int>(p - f);
    }
    int64_t exp = 0;
    if (p < t.size() && (t[p] == 'e' || t[p] == 'E')) {
      integer = false;
      ++p;
      bool neg = false;
      if (p < t.size() && (t[p] == '+' || t[p] == '-')) neg = t[p++] == '-';
      size_t e = p;
      while (p < t.size() && t[p] >= '0' && t[p] <= '9') {
        if (exp < 100000) exp = exp * 10 + (t[p] - '0');
        ++p;
      }
      if (p == e) return false;
      if (neg) exp = -exp;
    }
    std::string_view text = t.substr(start, p - start);
    const bool negative = text[0] == '-';
    if (integer) {
      Int128 x;
      if (ParseDecimalText(text, 0, &x)) {
        if (negative && x >= INT64_MIN) {
          out->push_back(static_cast<char>(kBigIntTag));
          PutInt(out, static_cast<int64_t>(x));
          return true;
        }
        if (!negative && x <= static_cast<Int128>(UINT64_MAX)) {
          out->push_back(static_cast<char>(kUBigIntTag));
          Put64(out, static_cast<uint64_t>(x));
          return true;
        }
      }
    }
    // DECIMAL with the number's digits, when it fits 38 of them; else DOUBLE.
    const int64_t scale = std::max<int64_t>(0, frac - exp);
    Int128 x;
    if (scale <= kMaxDecimalPrecision && ParseDecimalText(text, static_cast<int>(scale), &x) &&
        DecimalFits(x, kMaxDecimalPrecision)) {
      int digits = 0;
      for (Int128 a = x < 0 ? -x : x; a != 0; a /= 10) ++digits;
      const int precision = std::max<int>({digits, static_cast<int>(scale), 1});
      out->push_back(static_cast<char>(kDecimalTag));
      out->push_back(static_cast<char>(precision));
      out->push_back(static_cast<char>(scale));
      *out += EncodeInt128(x);
      return true;
    }
    out->push_back(static_cast<char>(kDoubleTag));
    PutDouble(out, std::strtod(std::string(text).c_str(), nullptr));
    return true;
  }
  bool Value(std::string* out) {
    Ws();
    if (p >= t.size() || ++depth > 200) return false;
    bool ok = true;
    const char c = t[p];
    if (c == 'n') {
      ok = Lit("null");
      out->push_back(static_cast<char>(kNullTag));
    } else if (c == 't' || c == 'f') {
      ok = Lit(c == 't' ? "true" : "false");
      out->push_back(static_cast<char>(kBooleanTag));
      PutInt(out, c == 't');
    } else if (c == '"') {
      std::string s;
      ok = String(&s);
      out->push_back(static_cast<char>(kVarcharTag));
      PutBytes(out, s);
    } else if (c == '[') {
      ++p;
      out->push_back(static_cast<char>(kArrayTag));
      Ws();
      if (p < t.size() && t[p] == ']') {
        ++p;
      } else {
        for (;;) {
          out->push_back('\1');
          if (!Value(out)) return false;
          Ws();
          if (p < t.size() && t[p] == ',') {
            ++p;
            continue;
          }
          if (p < t.size() && t[p] == ']') {
            ++p;
            break;
          }
          return false;
        }
      }
      out->push_back('\0');
    } else if (c == '{') {
      ++p;
      std::vector<std::pair<std::string, std::string>> entries;
      Ws();
      if (p < t.size() && t[p] == '}') {
        ++p;
      } else {
        for (;;) {
          Ws();
          std::string key, val;
          if (!String(&key)) return false;
          Ws();
          if (p >= t.size() || t[p] != ':') return false;
          ++p;
          if (!Value(&val)) return false;
          entries.emplace_back(VariantFromValue(fld::Value::String(std::move(key)), SqlType::Of(TypeId::kVarchar)),
                               std::move(val));
          Ws();
          if (p < t.size() && t[p] == ',') {
            ++p;
            continue;
          }
          if (p < t.size() && t[p] == '}') {
            ++p;
            break;
          }
          return false;
        }
      }
      *out += MapEncoding(std::move(entries));
    } else {
      ok = Number(out);
    }
    --depth;
    return ok;
  }
};

void JsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          *out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        else
          out->push_back(c);
    }
  }
  out->push_back('"');
}

// Appends the JSON of one variant at r; false when a map key is not a string and `strict`.
bool AppendJson(Reader& r, std::string* out, bool strict) {
  const uint8_t tag = r.Byte();
  auto scalar = [&](const SqlType& t, const fld::Value& v) { *out += FormatValue(v, t); };
  switch (tag) {
    case kNullTag:
      *out += "null";
      return true;
    case kBooleanTag:
      *out += r.Int() ? "true" : "false";
      return true;
    case kTinyIntTag:
    case kSmallIntTag:
    case kIntegerTag:
    case kBigIntTag:
      *out += fmt::format("{}", r.Int());
      return true;
    case kUBigIntTag:
      *out += fmt::format("{}", r.U64());
      return true;
    case kDecimalTag: {
      r.Byte();
      int s = r.Byte();
      r.Need(16);
      *out += FormatDecimal(DecodeInt128(r.in.substr(r.p, 16)), s);
      r.p += 16;
      return true;
    }
    case kRealTag:
    case kDoubleTag: {
      double d = r.Double();
      if (std::isfinite(d))
        scalar(SqlType::Of(tag == kRealTag ? TypeId::kReal : TypeId::kDouble), fld::Value::Double(d));
      else
        JsonString(out, FormatValue(fld::Value::Double(d), SqlType::Of(TypeId::kDouble)));
      return true;
    }
    case kVarcharTag:
      JsonString(out, r.Bytes());
      return true;
    case kVarbinaryTag: {
      std::string b = r.Bytes();
      out->push_back('[');
      for (size_t i = 0; i < b.size(); ++i) *out += fmt::format("{}{}", i ? "," : "", static_cast<unsigned char>(b[i]));
      out->push_back(']');
      return true;
    }
    case kDateTag:
    case kTimeTag:
    case kTimestampTag: {
      TypeId id = tag == kDateTag ? TypeId::kDate : tag == kTimeTag ? TypeId::kTime : TypeId::kTimestamp;
      JsonString(out, FormatValue(fld::Value::Int(r.Int()), SqlType::Of(id)));
      return true;
    }
    case kUuidTag:
      r.Need(16);
      JsonString(out, FormatUuid(r.in.substr(r.p, 16)));
      r.p += 16;
      return true;
    case kArrayTag: {
      out->push_back('[');
      bool first = true;
      while (r.Byte() == 1) {
        if (!first) out->push_back(',');
        first = false;
        if (!AppendJson(r, out, strict)) return false;
      }
      out->push_back(']');
      return true;
    }
    case kMapTag: {
      out->push_back('{');
      bool first = true;
      while (r.Byte() == 1) {
        if (!first) out->push_back(',');
        first = false;
        Reader key{r.Skip()};
        if (static_cast<uint8_t>(key.in[0]) == kVarcharTag) {
          key.p = 1;
          JsonString(out, key.Bytes());
        } else {
          if (strict) return false;
          std::string text;
          AppendJson(key, &text, strict);
          if (!text.empty() && text[0] == '"')
            *out += text;
          else
            JsonString(out, text);
        }
        out->push_back(':');
        if (!AppendJson(r, out, strict)) return false;
      }
      out->push_back('}');
      return true;
    }
    default:
      Malformed();
  }
}

}  // namespace

bool ParseJsonVariant(std::string_view text, std::string* out) {
  JsonIn in{text};
  std::string v;
  if (!in.Value(&v)) return false;
  in.Ws();
  if (in.p != text.size()) return false;
  *out = std::move(v);
  return true;
}

std::optional<std::string> VariantJson(std::string_view variant) {
  Reader r{variant};
  std::string out;
  if (!AppendJson(r, &out, true)) return std::nullopt;
  return out;
}

std::string VariantToJson(std::string_view variant) {
  Reader r{variant};
  std::string out;
  AppendJson(r, &out, false);
  return out;
}

}  // namespace fld
