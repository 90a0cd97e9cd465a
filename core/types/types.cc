#include "core/types/types.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/common/error.h"
#include "core/types/variant.h"

namespace fld {

std::string SqlType::ToString() const {
  std::string s;
  switch (id) {
    case TypeId::kNull:
      s = "NULL";
      break;
    case TypeId::kBoolean:
      s = "BOOLEAN";
      break;
    case TypeId::kTinyInt:
      s = "TINYINT";
      break;
    case TypeId::kSmallInt:
      s = "SMALLINT";
      break;
    case TypeId::kInteger:
      s = "INTEGER";
      break;
    case TypeId::kBigInt:
      s = "BIGINT";
      break;
    case TypeId::kDecimal:
      s = fmt::format("DECIMAL({}, {})", precision, scale);
      break;
    case TypeId::kReal:
      s = "REAL";
      break;
    case TypeId::kDouble:
      s = "DOUBLE";
      break;
    case TypeId::kChar:
      s = length >= 0 ? fmt::format("CHAR({})", length) : "CHAR";
      break;
    case TypeId::kVarchar:
      s = length >= 0 ? fmt::format("VARCHAR({})", length) : "VARCHAR";
      break;
    case TypeId::kDate:
      s = "DATE";
      break;
    case TypeId::kTime:
      s = "TIME";
      break;
    case TypeId::kTimestamp:
      s = "TIMESTAMP";
      break;
    case TypeId::kBinary:
      s = length >= 0 ? fmt::format("BINARY({})", length) : "BINARY";
      break;
    case TypeId::kVarbinary:
      s = length >= 0 ? fmt::format("VARBINARY({})", length) : "VARBINARY";
      break;
    case TypeId::kArray:
      s = (*fields)[0].WithNullable(true).ToString() + " ARRAY";
      break;
    case TypeId::kIntervalDayTime:
    case TypeId::kIntervalYearMonth: {
      static const char* kFields[] = {"SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR"};
      s = std::string("INTERVAL ") + kFields[precision];
      if (scale != precision) s += std::string(" TO ") + kFields[scale];
      break;
    }
    case TypeId::kMap:
      s = fmt::format("MAP<{}, {}>", (*fields)[0].WithNullable(true).ToString(),
                      (*fields)[1].WithNullable(true).ToString());
      break;
    case TypeId::kVariant:
      s = "VARIANT";
      break;
    case TypeId::kGeometry:
      s = "GEOMETRY";
      break;
    case TypeId::kUuid:
      s = "UUID";
      break;
    case TypeId::kRow: {
      s = "ROW(";
      for (size_t i = 0; i < fields->size(); ++i)
        s += fmt::format("{}{} {}", i ? ", " : "", FieldName(i), (*fields)[i].ToString());
      s += ")";
      break;
    }
  }
  if (!nullable) s += " NOT NULL";
  return s;
}

std::string SqlType::FieldName(size_t i) const {
  if (names && i < names->size()) return (*names)[i];
  return fmt::format("EXPR${}", i);
}

std::strong_ordering Value::operator<=>(const Value& o) const {
  auto rank = [](Kind k) { return k == Kind::kDouble ? 1 : static_cast<int>(k); };
  int ra = rank(kind), rb = rank(o.kind);
  if (ra != rb) return ra <=> rb;
  switch (kind) {
    case Kind::kNull:
      return std::strong_ordering::equal;
    case Kind::kString:
      return s.compare(o.s) <=> 0;
    default:
      break;
  }
  if (kind == Kind::kInt && o.kind == Kind::kInt) return i <=> o.i;
  double a = kind == Kind::kInt ? static_cast<double>(i) : d;
  double b = o.kind == Kind::kInt ? static_cast<double>(o.i) : o.d;
  if (a < b) return std::strong_ordering::less;
  if (a > b) return std::strong_ordering::greater;
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) <=> std::isnan(b);
  // Equal as doubles: keep the order total by kind.
  return static_cast<int>(kind) <=> static_cast<int>(o.kind);
}

int64_t Pow10(int n) {
  static constexpr int64_t kP[19] = {1,
                                     10,
                                     100,
                                     1000,
                                     10000,
                                     100000,
                                     1000000,
                                     10000000,
                                     100000000,
                                     1000000000,
                                     10000000000,
                                     100000000000,
                                     1000000000000,
                                     10000000000000,
                                     100000000000000,
                                     1000000000000000,
                                     10000000000000000,
                                     100000000000000000,
                                     1000000000000000000};
  return kP[n < 0 ? 0 : (n > 18 ? 18 : n)];
}

Int128 Pow10Wide(int n) {
  static const auto kP = [] {
    std::array<Int128, 39> p{};
    p[0] = 1;
    for (int i = 1; i <= 38; ++i) p[i] = p[i - 1] * 10;
    return p;
  }();
  return kP[n < 0 ? 0 : (n > 38 ? 38 : n)];
}

std::string EncodeInt128(Int128 v) {
  unsigned __int128 u = static_cast<unsigned __int128>(v) ^ (static_cast<unsigned __int128>(1) << 127);
  std::string out(16, '\0');
  for (int b = 15; b >= 0; --b) {
    out[b] = static_cast<char>(static_cast<uint8_t>(u & 0xff));
    u >>= 8;
  }
  return out;
}

Int128 DecodeInt128(std::string_view bytes) {
  if (bytes.size() != 16) Fail(ErrorKind::kCorruption, "a DECIMAL value has {} bytes, not 16", bytes.size());
  unsigned __int128 u = 0;
  for (char c : bytes) u = (u << 8) | static_cast<uint8_t>(c);
  return static_cast<Int128>(u ^ (static_cast<unsigned __int128>(1) << 127));
}

Int128 UnscaledDecimal(const Value& v, const SqlType& t) {
  if (t.IsWideDecimal()) return DecodeInt128(v.s);
  return v.i;
}

Value DecimalValue(Int128 x, const SqlType& t) {
  if (t.IsWideDecimal()) return Value::String(EncodeInt128(x));
  return Value::Int(static_cast<int64_t>(x));
}

bool DecimalFits(Int128 x, int precision) {
  const Int128 lim = Pow10Wide(precision);
  return x < lim && x > -lim;
}

Int128 RoundDiv10(Int128 x, int n) {
  if (n <= 0) return x;
  if (n > 38) return 0;
  const Int128 d = Pow10Wide(n);
  Int128 q = x / d, r = x % d;
  if (r < 0) r = -r;
  if (r * 2 >= d) q += x < 0 ? -1 : 1;
  return q;
}

std::string FormatDecimal(Int128 x, int scale) {
  const bool neg = x < 0;
  unsigned __int128 u = neg ? static_cast<unsigned __int128>(-(x + 1)) + 1 : static_cast<unsigned __int128>(x);
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  while (static_cast<int>(digits.size()) <= scale) digits.push_back('0');
  std::string out = neg ? "-" : "";
  for (size_t i = digits.size(); i-- > 0;) {
    out.push_back(digits[i]);
    if (scale > 0 && i == static_cast<size_t>(scale)) out.push_back('.');
  }
  return out;
}

bool ParseDecimalText(std::string_view t, int scale, Int128* out) {
  bool neg = false;
  if (!t.empty() && (t.front() == '-' || t.front() == '+')) {
    neg = t.front() == '-';
    t.remove_prefix(1);
  }
  // Mantissa digits (leading zeros dropped), the position of the point, then an exponent.
  std::string digits;
  int frac = 0, exp = 0;
  bool point = false, any = false;
  size_t i = 0;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (c == '.') {
      if (point) return false;
      point = true;
    } else if (c >= '0' && c <= '9') {
      any = true;
      if (point) ++frac;
      if (!digits.empty() || c != '0') digits.push_back(c);
    } else {
      break;
    }
  }
  if (!any) return false;
  if (i < t.size()) {
    if (t[i] != 'e' && t[i] != 'E') return false;
    int64_t e;
    std::string_view et = t.substr(i + 1);
    if (!et.empty() && et.front() == '+') et.remove_prefix(1);
    auto r = std::from_chars(et.data(), et.data() + et.size(), e);
    if (r.ec != std::errc() || r.ptr != et.data() + et.size() || et.empty() || e > 1000 || e < -1000) return false;
    exp = static_cast<int>(e);
  }
  // value = digits * 10^(exp - frac); wanted: value * 10^scale.
  int shift = exp - frac + scale;
  if (digits.empty()) {
    *out = 0;
    return true;
  }
  // Keep at most 40 significant digits before rounding (more cannot fit 38 anyway).
  if (shift < 0) {
    int drop = -shift;
    if (drop > static_cast<int>(digits.size())) {
      *out = 0;
      return true;
    }
    std::string keep = digits.substr(0, digits.size() - drop);
    bool up = digits[digits.size() - drop] >= '5';
    if (keep.size() > 39) return false;
    unsigned __int128 v = 0;
    for (char c : keep) v = v * 10 + static_cast<unsigned>(c - '0');
    if (up) v += 1;
    if (v >= static_cast<unsigned __int128>(Pow10Wide(38)) * 10) return false;
    Int128 x = static_cast<Int128>(v);
    *out = neg ? -x : x;
    return true;
  }
  if (static_cast<int>(digits.size()) + shift > 39) return false;
  unsigned __int128 v = 0;
  for (char c : digits) v = v * 10 + static_cast<unsigned>(c - '0');
  for (int k = 0; k < shift; ++k) v *= 10;
  if (v >= static_cast<unsigned __int128>(Pow10Wide(38)) * 10) return false;
  Int128 x = static_cast<Int128>(v);
  *out = neg ? -x : x;
  return true;
}

// Days from 1970-01-01 for a proleptic Gregorian date (the well-known era-based algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t yy = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yy + (*m <= 2);
}

namespace {

std::string_view Trim(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.remove_suffix(1);
  return t;
}

bool ParseInt(std::string_view t, int64_t* out) {
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  auto r = std::from_chars(t.data(), t.data() + t.size(), *out);
  return r.ec == std::errc() && r.ptr == t.data() + t.size() && !t.empty();
}

// Fixed-width unsigned digits.
bool Digits(std::string_view t, size_t pos, size_t n, int64_t* out) {
  if (pos + n > t.size()) return false;
  int64_t v = 0;
  for (size_t k = pos; k < pos + n; ++k) {
    if (t[k] < '0' || t[k] > '9') return false;
    v = v * 10 + (t[k] - '0');
  }
  *out = v;
  return true;
}

bool ParseDate(std::string_view t, int64_t* days) {
  // [-]YYYY-MM-DD
  bool neg = !t.empty() && t.front() == '-';
  if (neg) t.remove_prefix(1);
  size_t dash = t.find('-');
  if (dash == std::string_view::npos || dash < 1) return false;
  int64_t y, m, d;
  if (!ParseInt(t.substr(0, dash), &y)) return false;
  if (t.size() != dash + 6 || t[dash + 3] != '-') return false;
  if (!Digits(t, dash + 1, 2, &m) || !Digits(t, dash + 4, 2, &d)) return false;
  if (neg) y = -y;
  if (m < 1 || m > 12 || d < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  int maxd = kDays[m - 1] + (m == 2 && leap ? 1 : 0);
  if (d > maxd) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

bool ParseTime(std::string_view t, int64_t* micros) {
  // HH:MM[:SS[.ffffff]]
  int64_t h, mi, s = 0, frac = 0;
  if (!Digits(t, 0, 2, &h) || t.size() < 5 || t[2] != ':' || !Digits(t, 3, 2, &mi)) return false;
  size_t pos = 5;
  if (pos < t.size()) {
    if (t[pos] != ':' || !Digits(t, pos + 1, 2, &s)) return false;
    pos += 3;
    if (pos < t.size()) {
      if (t[pos] != '.') return false;
      ++pos;
      int n = 0;
      while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9') {
        if (n < 6) frac = frac * 10 + (t[pos] - '0');
        ++n;
        ++pos;
      }
      if (n == 0 || pos != t.size()) return false;
      for (int k = n; k < 6; ++k) frac *= 10;
    }
  }
  if (h > 23 || mi > 59 || s > 59) return false;
  *micros = ((h * 60 + mi) * 60 + s) * kMicrosPerSecond + frac;
  return true;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool ParseValue(std::string_view text, const SqlType& type, Value* out) {
  std::string_view t = type.IsString() ? text : Trim(text);
  switch (type.id) {
    case TypeId::kNull:
      return false;
    case TypeId::kBoolean: {
      std::string l;
      for (char c : t) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (l == "true" || l == "t" || l == "1")
        *out = Value::Int(1);
      else if (l == "false" || l == "f" || l == "0")
        *out = Value::Int(0);
      else
        return false;
      return true;
    }
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt: {
      int64_t v;
      if (!ParseInt(t, &v)) return false;
      if (!IntegerFits(v, type.id)) return false;
      *out = Value::Int(v);
      return true;
    }
    case TypeId::kDecimal: {
      Int128 v;
      if (!ParseDecimalText(t, type.scale, &v)) return false;
      if (!DecimalFits(v, type.precision > 0 ? type.precision : kMaxDecimalPrecision)) return false;
      if (!type.IsWideDecimal() && (v > INT64_MAX || v < INT64_MIN)) return false;
      *out = DecimalValue(v, type);
      return true;
    }
    case TypeId::kReal:
    case TypeId::kDouble: {
      if (t.empty()) return false;
      std::string tmp(t);
      char* end = nullptr;
      double d = std::strtod(tmp.c_str(), &end);
      if (end != tmp.c_str() + tmp.size()) return false;
      *out = Value::Double(type.id == TypeId::kReal ? static_cast<double>(static_cast<float>(d)) : d);
      return true;
    }
    case TypeId::kChar:
    case TypeId::kVarchar:
      *out = Value::String(std::string(t));
      return true;
    case TypeId::kDate: {
      int64_t d;
      if (!ParseDate(t, &d)) return false;
      *out = Value::Int(d);
      return true;
    }
    case TypeId::kTime: {
      int64_t us;
      if (!ParseTime(t, &us)) return false;
      *out = Value::Int(us);
      return true;
    }
    case TypeId::kTimestamp: {
      size_t sep = t.find_first_of(" T");
      int64_t d, us = 0;
      if (sep == std::string_view::npos) {
        if (!ParseDate(t, &d)) return false;
      } else {
        std::string_view tp = t.substr(sep + 1);
        if (!tp.empty() && (tp.back() == 'Z' || tp.back() == 'z')) tp.remove_suffix(1);
        if (!ParseDate(t.substr(0, sep), &d) || !ParseTime(tp, &us)) return false;
      }
      *out = Value::Int(d * kMicrosPerDay + us);
      return true;
    }
    case TypeId::kBinary:
    case TypeId::kVarbinary: {
      if (t.size() % 2 != 0) return false;
      std::string bytes;
      for (size_t i = 0; i < t.size(); i += 2) {
        int hi = HexDigit(t[i]), lo = HexDigit(t[i + 1]);
        if (hi < 0 || lo < 0) return false;
        bytes.push_back(static_cast<char>(hi * 16 + lo));
      }
      *out = Value::String(std::move(bytes));
      return true;
    }
    case TypeId::kVariant: {
      std::string v;
      if (!ParseJsonVariant(text, &v)) return false;
      *out = Value::String(std::move(v));
      return true;
    }
    case TypeId::kGeometry: {
      // POINT (x y), any case, spaces optional around the parentheses.
      std::string u(t);
      for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (u.rfind("POINT", 0) != 0) return false;
      std::string_view rest = Trim(t.substr(5));
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return false;
      std::string inner(Trim(rest.substr(1, rest.size() - 2)));
      char* end = nullptr;
      double x = std::strtod(inner.c_str(), &end);
      if (end == inner.c_str() || (*end != ' ' && *end != '\t')) return false;
      const char* ys = end;
      double y = std::strtod(ys, &end);
      if (end == ys || Trim(std::string_view(end)).size() != 0) return false;
      *out = Value::String(EncodeGeoPoint(x, y));
      return true;
    }
    case TypeId::kUuid: {
      std::string bytes;  // not trimmed: PostgreSQL and Feldera both reject blanks around a UUID
      if (!ParseUuid(text, &bytes)) return false;
      *out = Value::String(std::move(bytes));
      return true;
    }
    case TypeId::kRow:
    case TypeId::kArray:
    case TypeId::kIntervalDayTime:
    case TypeId::kIntervalYearMonth:
    case TypeId::kMap:
      return false;
  }
  return false;
}

bool ParseUuid(std::string_view text, std::string* bytes) {
  std::string_view t = text;
  bool hyphens = t.size() != 32;
  if (t.size() == 38) {  // {8-4-4-4-12}
    if (t.front() != '{' || t.back() != '}') return false;
    t = t.substr(1, 36);
  } else if (t.size() == 45) {  // urn:uuid:8-4-4-4-12
    if (t.substr(0, 9) != "urn:uuid:") return false;
    t = t.substr(9);
  } else if (t.size() != 36 && t.size() != 32) {
    return false;
  }
  std::string out;
  out.reserve(16);
  int hi = -1;
  for (size_t i = 0; i < t.size(); ++i) {
    if (hyphens && (i == 8 || i == 13 || i == 18 || i == 23)) {
      if (t[i] != '-') return false;
      continue;
    }
    const int d = HexDigit(t[i]);
    if (d < 0) return false;
    if (hi < 0) {
      hi = d;
    } else {
      out.push_back(static_cast<char>(hi * 16 + d));
      hi = -1;
    }
  }
  *bytes = std::move(out);
  return true;
}

std::string FormatUuid(std::string_view bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    const auto b = static_cast<unsigned char>(bytes[i]);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::string EncodeGeoPoint(double x, double y) {
  static const std::vector<SqlType> kXY = {SqlType::Of(TypeId::kDouble, false), SqlType::Of(TypeId::kDouble, false)};
  return EncodeRowValue({Value::Double(x), Value::Double(y)}, kXY);
}

std::pair<double, double> DecodeGeoPoint(std::string_view encoded) {
  static const std::vector<SqlType> kXY = {SqlType::Of(TypeId::kDouble, false), SqlType::Of(TypeId::kDouble, false)};
  std::vector<Value> xy = DecodeRowValue(encoded, kXY);
  return {xy[0].d, xy[1].d};
}

namespace {

void EncodeField(std::string& out, const Value& v, const SqlType& type);
Value DecodeField(std::string_view in, size_t* pos, const SqlType& type);

}  // namespace

std::string EncodeRowValue(const std::vector<Value>& fields, const std::vector<SqlType>& types) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) EncodeField(out, fields[i], types[i]);
  return out;
}

std::vector<Value> DecodeRowValue(std::string_view in, const std::vector<SqlType>& types) {
  std::vector<Value> out;
  size_t p = 0;
  for (const SqlType& t : types) out.push_back(DecodeField(in, &p, t));
  return out;
}

std::string EncodeArrayValue(const std::vector<Value>& elements, const SqlType& element_type) {
  std::string out;
  for (const Value& v : elements) {
    out.push_back('\1');
    EncodeField(out, v, element_type);
  }
  out.push_back('\0');
  return out;
}

std::vector<Value> DecodeArrayValue(std::string_view in, const SqlType& element_type) {
  std::vector<Value> out;
  size_t p = 0;
  while (p < in.size() && in[p] == '\1') {
    ++p;
    out.push_back(DecodeField(in, &p, element_type));
  }
  if (p >= in.size() || in[p] != '\0') Fail(ErrorKind::kCorruption, "an ARRAY value is malformed");
  return out;
}

std::string EncodeMapValue(std::vector<std::pair<Value, Value>> entries, const SqlType& map_type) {
  const SqlType& kt = (*map_type.fields)[0];
  const SqlType& vt = (*map_type.fields)[1];
  std::vector<std::pair<std::string, size_t>> keys;  // key encoding, entry index
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string k;
    EncodeField(k, entries[i].first, kt);
    keys.emplace_back(std::move(k), i);
  }
  // Sorted by key; of equal keys the last one given wins.
  std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i + 1 < keys.size() && keys[i + 1].first == keys[i].first) continue;
    out.push_back('\1');
    out += keys[i].first;
    EncodeField(out, entries[keys[i].second].second, vt);
  }
  out.push_back('\0');
  return out;
}

std::vector<std::pair<Value, Value>> DecodeMapValue(std::string_view in, const SqlType& map_type) {
  const SqlType& kt = (*map_type.fields)[0];
  const SqlType& vt = (*map_type.fields)[1];
  std::vector<std::pair<Value, Value>> out;
  size_t p = 0;
  while (p < in.size() && in[p] == '\1') {
    ++p;
    Value k = DecodeField(in, &p, kt);
    Value v = DecodeField(in, &p, vt);
    out.emplace_back(std::move(k), std::move(v));
  }
  if (p >= in.size() || in[p] != '\0') Fail(ErrorKind::kCorruption, "a MAP value is malformed");
  return out;
}

namespace {

void EncodeField(std::string& out, const Value& v, const SqlType& type) {
  auto put64 = [&](uint64_t u) {
    for (int b = 7; b >= 0; --b) out.push_back(static_cast<char>((u >> (8 * b)) & 0xff));
  };
  if (v.IsNull()) {
    out.push_back('\0');
    return;
  }
  out.push_back('\1');
  switch (type.phys()) {
    case PhysType::kI64:
      put64(static_cast<uint64_t>(v.i) ^ (uint64_t{1} << 63));
      break;
    case PhysType::kF64: {
      double d = v.d == 0 ? 0.0 : v.d;
      uint64_t u;
      std::memcpy(&u, &d, 8);
      put64((u >> 63) ? ~u : u ^ (uint64_t{1} << 63));
      break;
    }
    case PhysType::kStr:
      for (char c : v.s) {
        out.push_back(c);
        if (c == '\0') out.push_back('\xff');
      }
      out.push_back('\0');
      out.push_back('\0');
      break;
  }
}

Value DecodeField(std::string_view in, size_t* pos, const SqlType& t) {
  size_t& p = *pos;
  auto need = [&](size_t n) {
    if (p + n > in.size()) Fail(ErrorKind::kCorruption, "a ROW or ARRAY value is cut short");
  };
  auto get64 = [&] {
    need(8);
    uint64_t u = 0;
    for (int b = 0; b < 8; ++b) u = (u << 8) | static_cast<unsigned char>(in[p++]);
    return u;
  };
  need(1);
  if (in[p++] == '\0') return Value::Null();
  switch (t.phys()) {
    case PhysType::kI64:
      return Value::Int(static_cast<int64_t>(get64() ^ (uint64_t{1} << 63)));
    case PhysType::kF64: {
      uint64_t u = get64();
      u = (u >> 63) ? u ^ (uint64_t{1} << 63) : ~u;
      double d;
      std::memcpy(&d, &u, 8);
      return Value::Double(d);
    }
    case PhysType::kStr: {
      std::string s;
      for (;;) {
        need(2);
        if (in[p] == '\0' && in[p + 1] == '\0') break;
        s.push_back(in[p]);
        p += in[p] == '\0' ? 2 : 1;
      }
      p += 2;
      return Value::String(std::move(s));
    }
  }
  return Value::Null();
}

}  // namespace

namespace {

std::string FormatTimeOfDay(int64_t us) {
  int64_t s = us / kMicrosPerSecond, frac = us % kMicrosPerSecond;
  std::string r = fmt::format("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  if (frac != 0) {
    std::string f = fmt::format("{:06}", frac);
    while (f.back() == '0') f.pop_back();
    r += "." + f;
  }
  return r;
}

std::string FormatDate(int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  if (y < 0) return fmt::format("-{:04}-{:02}-{:02}", -y, m, d);
  return fmt::format("{:04}-{:02}-{:02}", y, m, d);
}

}  // namespace

std::string FormatValue(const Value& v, const SqlType& type) {
  if (v.IsNull()) return "NULL";
  if (type.id == TypeId::kArray) {
    const SqlType& et = (*type.fields)[0];
    std::vector<Value> e = DecodeArrayValue(v.s, et);
    std::string out = "[";
    for (size_t i = 0; i < e.size(); ++i) {
      std::string text = FormatValue(e[i], et);
      if (!e[i].IsNull() && et.IsString()) text = "'" + text + "'";
      out += (i ? ", " : "") + text;
    }
    return out + "]";
  }
  if (type.id == TypeId::kMap) {
    // {'a'=1, 'b'=2} in key order; strings quoted as in ARRAY values.
    const SqlType& kt = (*type.fields)[0];
    const SqlType& vt = (*type.fields)[1];
    std::string out = "{";
    bool first = true;
    for (const auto& [k, val] : DecodeMapValue(v.s, type)) {
      std::string kx = FormatValue(k, kt), vx = FormatValue(val, vt);
      if (!k.IsNull() && kt.IsString()) kx = "'" + kx + "'";
      if (!val.IsNull() && vt.IsString()) vx = "'" + vx + "'";
      out += (first ? "" : ", ") + kx + "=" + vx;
      first = false;
    }
    return out + "}";
  }
  if (type.id == TypeId::kVariant) return VariantToJson(v.s);
  if (type.id == TypeId::kUuid) return FormatUuid(v.s);
  if (type.id == TypeId::kGeometry) {
    auto [x, y] = DecodeGeoPoint(v.s);
    const SqlType d = SqlType::Of(TypeId::kDouble);
    return fmt::format("POINT ({} {})", FormatValue(Value::Double(x), d), FormatValue(Value::Double(y), d));
  }
  if (type.IsWideDecimal()) return FormatDecimal(DecodeInt128(v.s), type.scale);
  if (type.id == TypeId::kRow) {
    // {EXPR$0: 3, EXPR$1: 'x'}: strings quoted so that a field's text cannot be mistaken.
    std::vector<Value> f = DecodeRowValue(v.s, *type.fields);
    std::string out = "{";
    for (size_t i = 0; i < f.size(); ++i) {
      const SqlType& ft = (*type.fields)[i];
      std::string text = FormatValue(f[i], ft);
      if (!f[i].IsNull() && ft.IsString()) text = "'" + text + "'";
      out += fmt::format("{}{}: {}", i ? ", " : "", type.FieldName(i), text);
    }
    return out + "}";
  }
  if (v.kind == Value::Kind::kString && type.IsBinary()) {
    std::string hex;
    for (unsigned char c : v.s) hex += fmt::format("{:02x}", c);
    return hex;
  }
  if (v.kind == Value::Kind::kString) return v.s;
  if (v.kind == Value::Kind::kDouble) {
    if (v.d == 0) return "0";  // -0.0 and 0.0 are the same value (and encode the same)
    if (std::isnan(v.d)) return "NaN";
    if (std::isinf(v.d)) return v.d > 0 ? "Infinity" : "-Infinity";
    // REAL in its shortest single-precision form (57681.18, not 57681.1796875), as Feldera.
    if (type.id == TypeId::kReal) return fmt::format("{}", static_cast<float>(v.d));
    return fmt::format("{}", v.d);
  }
  int64_t x = v.i;
  switch (type.id) {
    case TypeId::kBoolean:
      return x ? "true" : "false";
    case TypeId::kDecimal: {
      if (type.scale <= 0) return fmt::format("{}", x);
      int64_t p = Pow10(type.scale);
      bool neg = x < 0;
      uint64_t ax = neg ? static_cast<uint64_t>(-(x + 1)) + 1 : static_cast<uint64_t>(x);
      return fmt::format("{}{}.{:0{}}", neg ? "-" : "", ax / p, ax % p, type.scale);
    }
    case TypeId::kDate:
      return FormatDate(x);
    case TypeId::kTime:
      return FormatTimeOfDay(x);
    case TypeId::kTimestamp: {
      int64_t days = x >= 0 ? x / kMicrosPerDay : -((-x + kMicrosPerDay - 1) / kMicrosPerDay);
      int64_t rest = x - days * kMicrosPerDay;
      return FormatDate(days) + " " + FormatTimeOfDay(rest);
    }
    case TypeId::kReal:
    case TypeId::kDouble:
      return fmt::format("{}", static_cast<double>(x));
    case TypeId::kIntervalDayTime: {
      // [-]D HH:MM:SS[.ffffff]
      uint64_t ax = x < 0 ? static_cast<uint64_t>(-(x + 1)) + 1 : static_cast<uint64_t>(x);
      uint64_t days = ax / kMicrosPerDay;
      return fmt::format("{}{} {}", x < 0 ? "-" : "", days, FormatTimeOfDay(static_cast<int64_t>(ax % kMicrosPerDay)));
    }
    case TypeId::kIntervalYearMonth: {
      // [-]Y-M
      uint64_t ax = x < 0 ? static_cast<uint64_t>(-(x + 1)) + 1 : static_cast<uint64_t>(x);
      return fmt::format("{}{}-{}", x < 0 ? "-" : "", ax / 12, ax % 12);
    }
    default:
      return fmt::format("{}", x);
  }
}

}  // namespace fld
