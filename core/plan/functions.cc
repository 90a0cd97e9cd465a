#include "core/plan/functions.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <numbers>
#include <optional>
#include <regex>
#include <string>

#include "core/common/error.h"
#include "core/common/md5.h"
#include "core/common/utf8.h"
#include "core/common/xxh64.h"
#include "core/expr/tz.h"
#include "core/plan/binder.h"
#include "core/types/schema.h"
#include "core/types/variant.h"

namespace fld::plan {

namespace {

// ---------------------------------------------------------------- evaluation helpers

const SqlType kVarcharType = SqlType::Of(TypeId::kVarchar);

const SqlType& ArgType(const BoundExpr& call, size_t i) {
  return call.args[i]->type;
}

const SqlType& ElementType(const SqlType& array) {
  return (*array.fields)[0];
}

std::vector<Value> Elements(const Value& v, const SqlType& array_type) {
  return DecodeArrayValue(v.s, ElementType(array_type));
}

Value ArrayOf(const std::vector<Value>& elements, const SqlType& array_type) {
  return Value::String(EncodeArrayValue(elements, ElementType(array_type)));
}

Value Bool(bool b) {
  return Value::Int(b ? 1 : 0);
}

// Byte offsets of the characters of s, plus s.size() at the end.
std::vector<size_t> CharStarts(std::string_view s) {
  std::vector<size_t> starts;
  starts.reserve(s.size() + 1);
  for (size_t i = 0; i < s.size(); i += CharLen(s, i)) starts.push_back(i);
  starts.push_back(s.size());
  return starts;
}

size_t CharCount(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); i += CharLen(s, i)) ++n;
  return n;
}

// Characters [from, from + count) of s (0-based, clamped).
std::string CharSlice(std::string_view s, int64_t from, int64_t count) {
  std::vector<size_t> st = CharStarts(s);
  const int64_t chars = static_cast<int64_t>(st.size()) - 1;
  from = std::clamp<int64_t>(from, 0, chars);
  int64_t to = count < 0 ? chars : std::clamp<int64_t>(from + std::min<int64_t>(count, chars), from, chars);
  return std::string(s.substr(st[from], st[to] - st[from]));
}

uint32_t DecodeChar(std::string_view s, size_t i, size_t len) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (len == 1) return c;
  uint32_t cp = c & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

void AppendChar(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Case mapping of ASCII and Latin-1 letters (U+00C0..U+00DE <-> U+00E0..U+00FE, but for the
// multiplication and division signs).
uint32_t ToLowerCp(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  return c;
}
uint32_t ToUpperCp(uint32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  return c;
}
bool IsAlnumCp(uint32_t c) {
  return (c >= '0' && c <= '9') || ToLowerCp(c) != ToUpperCp(c) || c == 0xDF || c == 0xFF;
}

template <typename F>
std::string MapChars(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = CharLen(s, i);
    AppendChar(&out, f(DecodeChar(s, i, n)));
    i += n;
  }
  return out;
}

// A compiled regular expression, cached per pattern (patterns are nearly always constants);
// null when the pattern is not a valid expression.
const std::regex* CompiledRegex(const std::string& pattern) {
  thread_local std::map<std::string, std::unique_ptr<std::regex>> cache;
  auto it = cache.find(pattern);
  if (it != cache.end()) return it->second.get();
  if (cache.size() > 1000) cache.clear();
  std::unique_ptr<std::regex> re;
  try {
    re = std::make_unique<std::regex>(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error&) {
  }
  return cache.emplace(pattern, std::move(re)).first->second.get();
}

std::vector<std::string> SplitOn(std::string_view s, std::string_view sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    if (p == std::string_view::npos) break;
    parts.emplace_back(s.substr(start, p - start));
    start = p + sep.size();
  }
  parts.emplace_back(s.substr(start));
  return parts;
}

// ---------------------------------------------------------------- string evaluators

Value EvLower(std::span<const Value> a, const BoundExpr&) {
  return Value::String(MapChars(a[0].s, ToLowerCp));
}
Value EvUpper(std::span<const Value> a, const BoundExpr&) {
  return Value::String(MapChars(a[0].s, ToUpperCp));
}
Value EvInitcap(std::span<const Value> a, const BoundExpr&) {
  bool start = true;
  return Value::String(MapChars(a[0].s, [&](uint32_t c) {
    const bool alnum = IsAlnumCp(c);
    uint32_t r = alnum ? (start ? ToUpperCp(c) : ToLowerCp(c)) : c;
    start = !alnum;
    return r;
  }));
}
Value EvCharLength(std::span<const Value> a, const BoundExpr&) {
  return Value::Int(static_cast<int64_t>(CharCount(a[0].s)));
}
Value EvOctetLength(std::span<const Value> a, const BoundExpr&) {
  return Value::Int(static_cast<int64_t>(a[0].s.size()));
}
Value EvAscii(std::span<const Value> a, const BoundExpr&) {
  const std::string& s = a[0].s;
  if (s.empty()) return Value::Int(0);
  return Value::Int(DecodeChar(s, 0, CharLen(s, 0)));
}
Value EvChr(std::span<const Value> a, const BoundExpr&) {
  const int64_t c = a[0].i;
  std::string out;
  if (c > 0 && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF)) AppendChar(&out, static_cast<uint32_t>(c));
  return Value::String(std::move(out));
}
// SUBSTRING(s, start [, count]): characters (bytes for binary strings) from the 1-based `start`
// (below 1 counts as 1, as Feldera does), at most `count` of them (a negative count: empty).
Value EvSubstring(std::span<const Value> a, const BoundExpr& call) {
  const int64_t start = std::max<int64_t>(a[1].i, 1) - 1;
  const int64_t count = a.size() > 2 ? a[2].i : -1;
  if (a.size() > 2 && count < 0) return Value::String("");
  if (ArgType(call, 0).IsBinary()) {
    const std::string& s = a[0].s;
    if (start >= static_cast<int64_t>(s.size())) return Value::String("");
    return Value::String(s.substr(start, count < 0 ? std::string::npos : static_cast<size_t>(count)));
  }
  return Value::String(CharSlice(a[0].s, start, count));
}
// POSITION(needle IN haystack): 1-based index of the first occurrence, 0 when absent.
Value EvPosition(std::span<const Value> a, const BoundExpr& call) {
  size_t p = a[1].s.find(a[0].s);
  if (p == std::string::npos) return Value::Int(0);
  if (ArgType(call, 0).IsBinary()) return Value::Int(static_cast<int64_t>(p) + 1);
  return Value::Int(static_cast<int64_t>(CharCount(std::string_view(a[1].s).substr(0, p))) + 1);
}
// TRIM(mode, characters, s): removes any of `characters` from the ends `mode` names.
Value EvTrim(std::span<const Value> a, const BoundExpr&) {
  const std::string& mode = a[0].s;
  std::vector<std::string_view> set;
  std::string_view chars = a[1].s;
  for (size_t i = 0; i < chars.size(); i += CharLen(chars, i)) set.push_back(chars.substr(i, CharLen(chars, i)));
  auto in_set = [&](std::string_view c) { return std::find(set.begin(), set.end(), c) != set.end(); };
  std::string_view s = a[2].s;
  std::vector<size_t> st = CharStarts(s);
  size_t lo = 0, hi = st.size() - 1;  // character indices [lo, hi)
  if (mode != "TRAILING")
    while (lo < hi && in_set(s.substr(st[lo], st[lo + 1] - st[lo]))) ++lo;
  if (mode != "LEADING")
    while (hi > lo && in_set(s.substr(st[hi - 1], st[hi] - st[hi - 1]))) --hi;
  return Value::String(std::string(s.substr(st[lo], st[hi] - st[lo])));
}
Value EvLtrim(std::span<const Value> a, const BoundExpr& call) {
  Value args[3] = {Value::String("LEADING"), a.size() > 1 ? a[1] : Value::String(" "), a[0]};
  return EvTrim(args, call);
}
Value EvRtrim(std::span<const Value> a, const BoundExpr& call) {
  Value args[3] = {Value::String("TRAILING"), a.size() > 1 ? a[1] : Value::String(" "), a[0]};
  return EvTrim(args, call);
}
Value EvReplace(std::span<const Value> a, const BoundExpr&) {
  const std::string& s = a[0].s;
  const std::string& from = a[1].s;
  if (from.empty()) return a[0];
  std::string out;
  size_t start = 0;
  for (size_t p; (p = s.find(from, start)) != std::string::npos; start = p + from.size())
    out.append(s, start, p - start).append(a[2].s);
  out.append(s, start);
  return Value::String(std::move(out));
}
Value EvConcat(std::span<const Value> a, const BoundExpr&) {
  std::string out;
  for (const Value& v : a) out += v.s;
  return Value::String(std::move(out));
}
// CONCAT_WS(sep, s1, ...): NULL when sep is; NULL arguments are left out, separators and all
// (Feldera's documented example: CONCAT_WS(',', 'Post', 'greSQL', NULL, '1') is Post,greSQL,1;
// PostgreSQL's concat_ws does the same).
Value EvConcatWs(std::span<const Value> a, const BoundExpr&) {
  if (a[0].IsNull()) return Value::Null();
  std::string out;
  bool first = true;
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i].IsNull()) continue;
    if (!first) out += a[0].s;
    first = false;
    out += a[i].s;
  }
  return Value::String(std::move(out));
}
// LEFT/RIGHT(s, n): the first/last n characters; a negative n drops that many from the other
// end (PostgreSQL's rule).
Value EvLeft(std::span<const Value> a, const BoundExpr&) {
  const int64_t chars = static_cast<int64_t>(CharCount(a[0].s));
  const int64_t n = a[1].i >= 0 ? a[1].i : std::max<int64_t>(chars + a[1].i, 0);
  return Value::String(CharSlice(a[0].s, 0, n));
}
Value EvRight(std::span<const Value> a, const BoundExpr&) {
  const int64_t chars = static_cast<int64_t>(CharCount(a[0].s));
  const int64_t n = a[1].i >= 0 ? std::min(a[1].i, chars) : std::max<int64_t>(chars + a[1].i, 0);
  return Value::String(CharSlice(a[0].s, chars - n, n));
}
Value EvRepeat(std::span<const Value> a, const BoundExpr&) {
  const int64_t n = a[1].i;
  if (n <= 0 || a[0].s.empty()) return Value::String("");
  if (static_cast<double>(n) * static_cast<double>(a[0].s.size()) > (1 << 30))
    Fail(ErrorKind::kRuntime, "REPEAT result longer than 1 GiB");
  std::string out;
  out.reserve(a[0].s.size() * n);
  for (int64_t i = 0; i < n; ++i) out += a[0].s;
  return Value::String(std::move(out));
}
// OVERLAY(s PLACING r FROM start [FOR remove]): s with `remove` characters (default: r's
// length) from `start` replaced by r; a start below 1 leaves s as it is.
Value EvOverlay(std::span<const Value> a, const BoundExpr& call) {
  const bool binary = ArgType(call, 0).IsBinary();
  const std::string& s = a[0].s;
  const std::string& r = a[1].s;
  const int64_t start = a[2].i;
  int64_t remove = a.size() > 3 ? std::max<int64_t>(a[3].i, 0) : static_cast<int64_t>(binary ? r.size() : CharCount(r));
  if (start < 1) return a[0];
  if (binary) {
    const size_t b = std::min<size_t>(start - 1, s.size());
    const size_t e = std::min<size_t>(b + remove, s.size());
    return Value::String(s.substr(0, b) + r + s.substr(e));
  }
  std::vector<size_t> st = CharStarts(s);
  const int64_t chars = static_cast<int64_t>(st.size()) - 1;
  const int64_t b = std::min(start - 1, chars), e = std::min(b + remove, chars);
  return Value::String(s.substr(0, st[b]) + r + s.substr(st[e]));
}
Value EvRegexpReplace(std::span<const Value> a, const BoundExpr&) {
  const std::regex* re = CompiledRegex(a[1].s);
  if (!re) return a[0];  // an invalid expression leaves the string alone (Feldera's rule)
  return Value::String(std::regex_replace(a[0].s, *re, a.size() > 2 ? a[2].s : std::string()));
}
// RLIKE: whether the expression matches anywhere in the string; NULL for an invalid expression.
Value EvRlike(std::span<const Value> a, const BoundExpr&) {
  const std::regex* re = CompiledRegex(a[1].s);
  if (!re) return Value::Null();
  return Bool(std::regex_search(a[0].s, *re));
}
Value EvSplit(std::span<const Value> a, const BoundExpr& call) {
  const std::string& s = a[0].s;
  const std::string sep = a.size() > 1 ? a[1].s : std::string(",");
  std::vector<Value> parts;
  if (!s.empty()) {
    if (sep.empty())
      parts.push_back(a[0]);
    else
      for (auto& p : SplitOn(s, sep)) parts.push_back(Value::String(std::move(p)));
  }
  return ArrayOf(parts, call.type);
}
// SPLIT_PART(s, sep, n): the n-th part (1-based; negative counts from the end), '' when there
// is none.
Value EvSplitPart(std::span<const Value> a, const BoundExpr&) {
  std::vector<std::string> parts = a[1].s.empty() ? std::vector<std::string>{a[0].s} : SplitOn(a[0].s, a[1].s);
  const int64_t n = a[2].i, size = static_cast<int64_t>(parts.size());
  const int64_t i = n > 0 ? n - 1 : size + n;
  if (n == 0 || i < 0 || i >= size) return Value::String("");
  return Value::String(parts[i]);
}
Value EvToHex(std::span<const Value> a, const BoundExpr&) {
  std::string hex;
  for (unsigned char c : a[0].s) hex += fmt::format("{:02x}", c);
  return Value::String(std::move(hex));
}
Value EvToInt(std::span<const Value> a, const BoundExpr&) {
  uint32_t v = 0;
  for (size_t i = 0; i < std::min<size_t>(4, a[0].s.size()); ++i) v = (v << 8) | static_cast<unsigned char>(a[0].s[i]);
  return Value::Int(static_cast<int32_t>(v));
}

// ---------------------------------------------------------------- numeric evaluators

double D(const Value& v) {
  return v.kind == Value::Kind::kDouble ? v.d : static_cast<double>(v.i);
}

template <double (*F)(double)>
Value EvDouble1(std::span<const Value> a, const BoundExpr&) {
  return Value::Double(F(D(a[0])));
}
double Cot(double x) {
  return 1 / std::tan(x);
}
double Sec(double x) {
  return 1 / std::cos(x);
}
double Csc(double x) {
  return 1 / std::sin(x);
}
double Coth(double x) {
  return 1 / std::tanh(x);
}
double Sech(double x) {
  return 1 / std::cosh(x);
}
double Csch(double x) {
  return 1 / std::sinh(x);
}
double Degrees(double x) {
  return x * 180 / std::numbers::pi;
}
double Radians(double x) {
  return x * std::numbers::pi / 180;
}
double Sqrt(double x) {
  return std::sqrt(x);
}
double Cbrt(double x) {
  return std::cbrt(x);
}
double Exp(double x) {
  return std::exp(x);
}
double Sin(double x) {
  return std::sin(x);
}
double Cos(double x) {
  return std::cos(x);
}
double Tan(double x) {
  return std::tan(x);
}
double Asin(double x) {
  return std::asin(x);
}
double Acos(double x) {
  return std::acos(x);
}
double Atan(double x) {
  return std::atan(x);
}
double Sinh(double x) {
  return std::sinh(x);
}
double Cosh(double x) {
  return std::cosh(x);
}
double Tanh(double x) {
  return std::tanh(x);
}
double Asinh(double x) {
  return std::asinh(x);
}
double Acosh(double x) {
  return std::acosh(x);
}
double Atanh(double x) {
  return std::atanh(x);
}

// LN, LOG10, LOG: -inf for 0, an error for a negative argument (Feldera's rule).
double CheckedLog(double x, const char* name) {
  if (x < 0) Fail(ErrorKind::kRuntime, "{} of a negative number ({})", name, x);
  return std::log(x);
}
Value EvLn(std::span<const Value> a, const BoundExpr&) {
  return Value::Double(CheckedLog(D(a[0]), "LN"));
}
Value EvLog10(std::span<const Value> a, const BoundExpr&) {
  const double x = D(a[0]);
  CheckedLog(x, "LOG10");
  return Value::Double(std::log10(x));
}
Value EvLog(std::span<const Value> a, const BoundExpr&) {
  const double x = CheckedLog(D(a[0]), "LOG");
  if (a.size() < 2) return Value::Double(x);
  return Value::Double(x / CheckedLog(D(a[1]), "LOG"));
}
Value EvPower(std::span<const Value> a, const BoundExpr&) {
  return Value::Double(std::pow(D(a[0]), D(a[1])));
}
Value EvAtan2(std::span<const Value> a, const BoundExpr&) {
  return Value::Double(std::atan2(D(a[0]), D(a[1])));
}
// Geometry, as Feldera: ST_POINT(x, y) makes a point of two doubles; ST_DISTANCE is the
// Euclidean distance between two points (in the coordinates' unit: degrees stay degrees).
Value EvStPoint(std::span<const Value> a, const BoundExpr&) {
  return Value::String(EncodeGeoPoint(D(a[0]), D(a[1])));
}
Value EvStDistance(std::span<const Value> a, const BoundExpr&) {
  auto [x1, y1] = DecodeGeoPoint(a[0].s);
  auto [x2, y2] = DecodeGeoPoint(a[1].s);
  return Value::Double(std::hypot(x1 - x2, y1 - y2));
}
Value EvPi(std::span<const Value>, const BoundExpr&) {
  return Value::Double(std::numbers::pi);
}
Value EvIsInf(std::span<const Value> a, const BoundExpr&) {
  return Bool(std::isinf(D(a[0])));
}
Value EvIsNan(std::span<const Value> a, const BoundExpr&) {
  return Bool(std::isnan(D(a[0])));
}

// Rounding of an exact value x (scaled by 10^scale) to `digits` fractional digits.
enum class RoundMode : uint8_t { kHalfAwayFromZero, kHalfEven, kTruncate, kFloor, kCeil };

int64_t RoundScaled(int64_t x, int scale, int64_t digits, RoundMode mode) {
  if (digits >= scale) return x;
  const int64_t drop = scale - digits;
  if (drop > 18) {
    if (mode == RoundMode::kFloor && x < 0) Fail(ErrorKind::kRuntime, "integer overflow in FLOOR");
    return 0;
  }
  const int64_t f = Pow10(static_cast<int>(drop));
  int64_t q = x / f, r = x % f;  // truncated toward zero
  const __int128 twice = static_cast<__int128>(r < 0 ? -r : r) * 2;
  switch (mode) {
    case RoundMode::kHalfAwayFromZero:
      if (twice >= f) q += x < 0 ? -1 : 1;
      break;
    case RoundMode::kHalfEven:
      if (twice > f || (twice == f && (q % 2 != 0))) q += x < 0 ? -1 : 1;
      break;
    case RoundMode::kTruncate:
      break;
    case RoundMode::kFloor:
      if (r < 0) --q;
      break;
    case RoundMode::kCeil:
      if (r > 0) ++q;
      break;
  }
  __int128 out = static_cast<__int128>(q) * f;
  if (out > INT64_MAX || out < INT64_MIN) Fail(ErrorKind::kRuntime, "integer overflow in rounding");
  return static_cast<int64_t>(out);
}

double RoundDouble(double x, int64_t digits, RoundMode mode) {
  if (!std::isfinite(x)) return x;
  const double f = std::pow(10.0, static_cast<double>(std::clamp<int64_t>(digits, -330, 330)));
  const double y = x * f;
  double r = y;
  switch (mode) {
    case RoundMode::kHalfAwayFromZero:
      r = std::round(y);
      break;
    case RoundMode::kHalfEven:
      r = std::nearbyint(y);
      break;
    case RoundMode::kTruncate:
      r = std::trunc(y);
      break;
    case RoundMode::kFloor:
      r = std::floor(y);
      break;
    case RoundMode::kCeil:
      r = std::ceil(y);
      break;
  }
  return digits == 0 ? r : r / f;
}

template <RoundMode M>
Value EvRound(std::span<const Value> a, const BoundExpr& call) {
  const SqlType& t = ArgType(call, 0);
  const int64_t digits = a.size() > 1 ? a[1].i : 0;
  // Floating-point ROUND rounds half to even (Feldera: "Bankers Rounding").
  constexpr RoundMode fm = M == RoundMode::kHalfAwayFromZero ? RoundMode::kHalfEven : M;
  if (t.IsFloat()) return Value::Double(RoundDouble(a[0].d, digits, fm));
  return Value::Int(RoundScaled(a[0].i, t.id == TypeId::kDecimal ? t.scale : 0, digits, M));
}
Value EvSign(std::span<const Value> a, const BoundExpr& call) {
  const SqlType& t = ArgType(call, 0);
  if (t.IsFloat()) return Value::Double(a[0].d > 0 ? 1.0 : a[0].d < 0 ? -1.0 : a[0].d);
  const int64_t s = a[0].i > 0 ? 1 : a[0].i < 0 ? -1 : 0;
  return Value::Int(t.id == TypeId::kDecimal ? s * Pow10(t.scale) : s);
}
Value EvGreatest(std::span<const Value> a, const BoundExpr&) {
  return *std::max_element(a.begin(), a.end(), [](const Value& x, const Value& y) { return x < y; });
}
Value EvLeast(std::span<const Value> a, const BoundExpr&) {
  return *std::min_element(a.begin(), a.end(), [](const Value& x, const Value& y) { return x < y; });
}

// ---------------------------------------------------------------- array evaluators

Value EvArray(std::span<const Value> a, const BoundExpr& call) {
  return ArrayOf(std::vector<Value>(a.begin(), a.end()), call.type);
}
// a[i]: 1-based; NULL outside the bounds (Feldera's rule).
Value EvItem(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  const int64_t i = a[1].i;
  if (i < 1 || i > static_cast<int64_t>(e.size())) return Value::Null();
  return e[i - 1];
}
Value EvCardinality(std::span<const Value> a, const BoundExpr& call) {
  return Value::Int(static_cast<int64_t>(Elements(a[0], ArgType(call, 0)).size()));
}
Value EvArrayContains(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  return Bool(std::find(e.begin(), e.end(), a[1]) != e.end());
}
Value EvArrayPosition(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  auto it = std::find(e.begin(), e.end(), a[1]);
  return Value::Int(it == e.end() ? 0 : static_cast<int64_t>(it - e.begin()) + 1);
}
Value EvArrayAppend(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull()) return Value::Null();
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  e.push_back(a[1]);
  return ArrayOf(e, call.type);
}
Value EvArrayPrepend(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull()) return Value::Null();
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  e.insert(e.begin(), a[1]);
  return ArrayOf(e, call.type);
}
std::vector<Value> Distinct(const std::vector<Value>& e) {
  std::vector<Value> out;
  for (const Value& v : e)
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}
Value EvArrayDistinct(std::span<const Value> a, const BoundExpr& call) {
  return ArrayOf(Distinct(Elements(a[0], ArgType(call, 0))), call.type);
}
Value EvArrayReverse(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  std::reverse(e.begin(), e.end());
  return ArrayOf(e, call.type);
}
Value EvArrayCompact(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  std::erase_if(e, [](const Value& v) { return v.IsNull(); });
  return ArrayOf(e, call.type);
}
// SORT_ARRAY(a [, ascending]): NULL elements are the smallest.
Value EvSortArray(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  std::stable_sort(e.begin(), e.end(), [](const Value& x, const Value& y) { return x < y; });
  if (a.size() > 1 && !a[1].i) std::reverse(e.begin(), e.end());
  return ArrayOf(e, call.type);
}
// ARRAY_TO_STRING(a, sep [, null_text]): NULL elements become null_text, or are left out.
Value EvArrayToString(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull() || a[1].IsNull()) return Value::Null();
  const SqlType& et = ElementType(ArgType(call, 0));
  std::string out;
  bool first = true;
  for (const Value& v : Elements(a[0], ArgType(call, 0))) {
    if (v.IsNull() && (a.size() < 3 || a[2].IsNull())) continue;
    if (!first) out += a[1].s;
    first = false;
    out += v.IsNull() ? a[2].s : FormatValue(v, et);
  }
  return Value::String(std::move(out));
}
Value EvArraysOverlap(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> x = Elements(a[0], ArgType(call, 0)), y = Elements(a[1], ArgType(call, 1));
  for (const Value& v : x)
    if (!v.IsNull() && std::find(y.begin(), y.end(), v) != y.end()) return Bool(true);
  return Bool(false);
}
template <bool kMax>
Value EvArrayExtreme(std::span<const Value> a, const BoundExpr& call) {
  Value best;
  for (const Value& v : Elements(a[0], ArgType(call, 0))) {
    if (v.IsNull()) continue;
    if (best.IsNull() || (kMax ? best < v : v < best)) best = v;
  }
  return best;
}
Value EvArrayRemove(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  std::erase(e, a[1]);
  return ArrayOf(e, call.type);
}
Value EvArrayConcat(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> out;
  for (size_t i = 0; i < a.size(); ++i)
    for (Value& v : Elements(a[i], ArgType(call, i))) out.push_back(std::move(v));
  return ArrayOf(out, call.type);
}
// ARRAY_EXCEPT / ARRAY_INTERSECT / ARRAY_UNION: without duplicates, in order of first appearance.
Value EvArrayExcept(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> x = Elements(a[0], ArgType(call, 0)), y = Elements(a[1], ArgType(call, 1)), out;
  for (const Value& v : Distinct(x))
    if (std::find(y.begin(), y.end(), v) == y.end()) out.push_back(v);
  return ArrayOf(out, call.type);
}
Value EvArrayIntersect(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> x = Elements(a[0], ArgType(call, 0)), y = Elements(a[1], ArgType(call, 1)), out;
  for (const Value& v : Distinct(x))
    if (std::find(y.begin(), y.end(), v) != y.end()) out.push_back(v);
  return ArrayOf(out, call.type);
}
Value EvArrayUnion(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> x = Elements(a[0], ArgType(call, 0));
  for (Value& v : Elements(a[1], ArgType(call, 1))) x.push_back(std::move(v));
  return ArrayOf(Distinct(x), call.type);
}
// ARRAY_INSERT(a, pos, e): e at 1-based pos (negative: counted from the end, -1 after the last
// element), padding with NULLs; pos 0 is an error.
Value EvArrayInsert(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull() || a[1].IsNull()) return Value::Null();
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  const int64_t size = static_cast<int64_t>(e.size());
  int64_t pos = a[1].i;
  if (pos == 0) Fail(ErrorKind::kRuntime, "ARRAY_INSERT position 0 (positions start at 1)");
  if (std::abs(pos) > (1 << 24)) Fail(ErrorKind::kRuntime, "ARRAY_INSERT position {} is too large", pos);
  if (pos < 0) pos = size + pos + 2;
  if (pos < 1) {
    std::vector<Value> out{a[2]};
    out.insert(out.end(), static_cast<size_t>(1 - pos), Value::Null());
    out.insert(out.end(), e.begin(), e.end());
    return ArrayOf(out, call.type);
  }
  if (pos > size + 1) e.resize(static_cast<size_t>(pos - 1));
  e.insert(e.begin() + (pos - 1), a[2]);
  return ArrayOf(e, call.type);
}
Value EvArrayRepeat(std::span<const Value> a, const BoundExpr& call) {
  if (a[1].IsNull()) return Value::Null();
  if (a[1].i > (1 << 24)) Fail(ErrorKind::kRuntime, "ARRAY_REPEAT count {} is too large", a[1].i);
  return ArrayOf(std::vector<Value>(static_cast<size_t>(std::max<int64_t>(a[1].i, 0)), a[0]), call.type);
}
Value EvElement(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> e = Elements(a[0], ArgType(call, 0));
  if (e.size() > 1) Fail(ErrorKind::kRuntime, "ELEMENT of an array of {} elements", e.size());
  return e.empty() ? Value::Null() : e[0];
}
Value EvField(std::span<const Value> a, const BoundExpr& call) {
  return DecodeRowValue(a[0].s, *ArgType(call, 0).fields)[call.column_index];
}
// The lambda of a higher-order call evaluated over each element of array a[0] (one batch per
// array); the outer values it reads, a[1...], are its columns 1... (the same in every row).
ColumnPtr EvalLambda(std::span<const Value> a, const BoundExpr& call) {
  const SqlType& et = ElementType(ArgType(call, 0));
  std::vector<Value> elements = Elements(a[0], ArgType(call, 0));
  Batch batch;
  for (size_t c = 0; c < a.size(); ++c) {
    auto col = std::make_shared<Column>(c == 0 ? et.phys() : ArgType(call, c).phys());
    col->Reserve(elements.size());
    for (const Value& v : elements) col->Append(c == 0 ? v : a[c]);
    batch.cols.push_back(std::move(col));
  }
  batch.weights.assign(elements.size(), 1);
  return Evaluate(*call.lambda, batch);
}
// TRUE when the predicate is TRUE for some element; else NULL when it is NULL for some; else FALSE.
// (Not strict: only a NULL array makes the result NULL, not a NULL outer value the lambda reads.)
Value EvArrayExists(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull()) return Value::Null();
  ColumnPtr r = EvalLambda(a, call);
  bool unknown = false;
  for (size_t i = 0; i < r->size(); ++i) {
    if (r->IsNull(i)) {
      unknown = true;
    } else if (r->i64[i]) {
      return Bool(true);
    }
  }
  return unknown ? Value::Null() : Bool(false);
}
Value EvTransform(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull()) return Value::Null();
  ColumnPtr r = EvalLambda(a, call);
  std::vector<Value> out;
  out.reserve(r->size());
  for (size_t i = 0; i < r->size(); ++i) out.push_back(r->Get(i));
  return ArrayOf(out, call.type);
}

// ---------------------------------------------------------------- more string and binary evaluators

// INITCAP_SPACES: words are runs of characters between spaces (so 'THOMAS-SON' is one word).
Value EvInitcapSpaces(std::span<const Value> a, const BoundExpr&) {
  bool start = true;
  return Value::String(MapChars(a[0].s, [&](uint32_t c) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    uint32_t r = space ? c : (start ? ToUpperCp(c) : ToLowerCp(c));
    start = space;
    return r;
  }));
}
// REVERSE: the characters in reverse order.
Value EvReverse(std::span<const Value> a, const BoundExpr&) {
  const std::string& s = a[0].s;
  std::vector<size_t> st = CharStarts(s);
  std::string out;
  out.reserve(s.size());
  for (size_t k = st.size() - 1; k > 0; --k) out.append(s, st[k - 1], st[k] - st[k - 1]);
  return Value::String(std::move(out));
}
// MD5(string or binary): the digest as 32 lower-case hex digits.
Value EvMd5(std::span<const Value> a, const BoundExpr&) {
  return Value::String(Md5Hex(a[0].s));
}
// XXHASH(string or binary, seed): XXH64 of the bytes, as a BIGINT.
Value EvXxhash(std::span<const Value> a, const BoundExpr&) {
  return Value::Int(static_cast<int64_t>(Xxh64(a[0].s, static_cast<uint64_t>(a[1].i))));
}
// BIN2UTF8(binary): the bytes as text, NULL when they are not UTF-8.
Value EvBin2Utf8(std::span<const Value> a, const BoundExpr&) {
  if (!IsValidUtf8(a[0].s)) return Value::Null();
  return a[0];
}
// GUNZIP(binary): the gzip-compressed bytes decompressed, as text; not gzip data (or not UTF-8
// text) is a run-time error, as in Feldera.
Value EvGunzip(std::span<const Value> a, const BoundExpr&) {
  const std::string& in = a[0].s;
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) Fail(ErrorKind::kRuntime, "GUNZIP: cannot start zlib");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > (size_t{1} << 30)) rc = Z_MEM_ERROR;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // the input ended before the stream did
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) Fail(ErrorKind::kRuntime, "GUNZIP: the argument is not gzip-compressed data");
  if (!IsValidUtf8(out)) Fail(ErrorKind::kRuntime, "GUNZIP: the decompressed data is not UTF-8 text");
  return Value::String(std::move(out));
}
// LEFT/RIGHT(binary, n): the first/last n bytes (a negative n: none).
Value EvLeftBytes(std::span<const Value> a, const BoundExpr&) {
  const int64_t n = std::clamp<int64_t>(a[1].i, 0, static_cast<int64_t>(a[0].s.size()));
  return Value::String(a[0].s.substr(0, static_cast<size_t>(n)));
}
Value EvRightBytes(std::span<const Value> a, const BoundExpr&) {
  const int64_t n = std::clamp<int64_t>(a[1].i, 0, static_cast<int64_t>(a[0].s.size()));
  return Value::String(a[0].s.substr(a[0].s.size() - static_cast<size_t>(n)));
}

// ---------------------------------------------------------------- more numeric evaluators

// DIV_NULL(a, b): a / b (the call's lambda, over columns 0 and 1), NULL when b is zero or the
// division overflows.
Value EvDivNull(std::span<const Value> a, const BoundExpr& call) {
  Batch batch;
  for (size_t i = 0; i < 2; ++i) {
    auto col = std::make_shared<Column>(ArgType(call, i).phys());
    col->Append(a[i]);
    batch.cols.push_back(std::move(col));
  }
  batch.weights.assign(1, 1);
  try {
    Value r = Evaluate(*call.lambda, batch)->Get(0);
    if (!r.IsNull() && call.type.IsInteger() && !IntegerFits(r.i, call.type.id)) return Value::Null();
    return r;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kRuntime) throw;
    return Value::Null();
  }
}
// FINITE_OR_NULL(x): x, or NULL when it is infinite or NaN.
Value EvFiniteOrNull(std::span<const Value> a, const BoundExpr&) {
  return std::isfinite(D(a[0])) ? Value::Double(D(a[0])) : Value::Null();
}
// GREATEST_IGNORE_NULLS / LEAST_IGNORE_NULLS: the extreme of the non-NULL arguments, NULL when
// all are NULL.
template <bool kMax>
Value EvExtremeIgnoreNulls(std::span<const Value> a, const BoundExpr&) {
  Value best;
  for (const Value& v : a) {
    if (v.IsNull()) continue;
    if (best.IsNull() || (kMax ? best < v : v < best)) best = v;
  }
  return best;
}
// SEQUENCE(start, end): the integers start..end, empty when end < start.
Value EvSequence(std::span<const Value> a, const BoundExpr& call) {
  const int64_t lo = a[0].i, hi = a[1].i;
  if (hi >= lo && hi - lo >= (1 << 24)) Fail(ErrorKind::kRuntime, "SEQUENCE({}, {}) is too long", lo, hi);
  std::vector<Value> out;
  for (int64_t i = lo; i <= hi; ++i) out.push_back(Value::Int(i));
  return ArrayOf(out, call.type);
}

// ---------------------------------------------------------------- date/time constructors

// Days since 1970-01-01 of y-m-d, or false when that is no date.
bool MakeDays(int64_t y, int64_t m, int64_t d, int64_t* days) {
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > 31) return false;
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  int64_t yy;
  unsigned mm, dd;
  CivilFromDays(*days, &yy, &mm, &dd);
  return yy == y && mm == m && dd == d;
}
// Microseconds since midnight of h:m and `us` microseconds of seconds, or false when that is no
// time.
bool MakeMicros(int64_t h, int64_t m, int64_t us, int64_t* micros) {
  if (h < 0 || h > 23 || m < 0 || m > 59 || us < 0 || us >= 60 * kMicrosPerSecond) return false;
  *micros = (h * 3600 + m * 60) * kMicrosPerSecond + us;
  return true;
}
Value EvMakeDate(std::span<const Value> a, const BoundExpr&) {
  int64_t days;
  return MakeDays(a[0].i, a[1].i, a[2].i, &days) ? Value::Int(days) : Value::Null();
}
Value EvMakeTime(std::span<const Value> a, const BoundExpr&) {
  int64_t us;
  return MakeMicros(a[0].i, a[1].i, a[2].i, &us) ? Value::Int(us) : Value::Null();
}
Value EvMakeTimestamp(std::span<const Value> a, const BoundExpr&) {
  int64_t days, us;
  if (!MakeDays(a[0].i, a[1].i, a[2].i, &days) || !MakeMicros(a[3].i, a[4].i, a[5].i, &us)) return Value::Null();
  return Value::Int(days * kMicrosPerDay + us);
}

// CONVERT_TIMEZONE(from, to, ts): NULL when a zone is unknown or ts is no single local time of
// `from` (core/expr/tz.h).
Value EvConvertTimezone(std::span<const Value> a, const BoundExpr&) {
  const TimeZone* from = FindTimeZone(a[0].s);
  const TimeZone* to = FindTimeZone(a[1].s);
  if (!from || !to) return Value::Null();
  std::optional<int64_t> r = ConvertTimeZone(*from, *to, a[2].i);
  return r ? Value::Int(*r) : Value::Null();
}

// ---------------------------------------------------------------- maps

// MAP_CONCAT(m1, m2, ...): the entries of all maps; a key of a later map wins.
Value EvMapConcat(std::span<const Value> a, const BoundExpr& call) {
  std::vector<std::pair<Value, Value>> entries;
  for (size_t i = 0; i < a.size(); ++i)
    for (auto& kv : DecodeMapValue(a[i].s, ArgType(call, i))) entries.push_back(std::move(kv));
  return Value::String(EncodeMapValue(std::move(entries), call.type));
}

// ---------------------------------------------------------------- VARIANT / JSON

// The text of a VARIANT holding a VARCHAR, or nullopt.
std::optional<std::string> VariantString(std::string_view v) {
  if (VariantTypeName(v) != "VARCHAR") return std::nullopt;
  Value s;
  if (!VariantToValue(v, kVarcharType, &s) || s.IsNull()) return std::nullopt;
  return s.s;
}
// JSON_OBJECT_KEYS(v): the string keys of a map, sorted; empty for anything else.
Value EvJsonObjectKeys(std::span<const Value> a, const BoundExpr& call) {
  std::vector<Value> keys;
  if (auto entries = VariantMapEntries(a[0].s))
    for (const auto& [k, v] : *entries)
      if (auto s = VariantString(k)) keys.push_back(Value::String(std::move(*s)));
  std::sort(keys.begin(), keys.end(), [](const Value& x, const Value& y) { return x.s < y.s; });
  return ArrayOf(keys, call.type);
}
// A path component: the key itself when it is an identifier, else double-quoted with \ before
// embedded quotes and backslashes (Feldera's paths, as BigQuery's JSON_KEYS writes them).
std::string PathComponent(const std::string& prefix, std::string_view key) {
  std::string out = prefix;
  if (!out.empty()) out += '.';
  bool ident = !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_');
  for (char c : key) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (ident) return out.append(key);
  out += '"';
  for (char c : key) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out += '"';
}
void CollectJsonKeys(std::string_view v, const std::string& prefix, std::vector<std::string>* out) {
  auto entries = VariantMapEntries(v);
  if (!entries) return;
  for (const auto& [k, val] : *entries) {
    auto s = VariantString(k);
    if (!s) continue;
    std::string path = PathComponent(prefix, *s);
    CollectJsonKeys(val, path, out);
    out->push_back(std::move(path));
  }
}
// JSON_KEYS(v): the dot-joined paths of the keys of all nested objects (not inside arrays),
// deduplicated and sorted.
Value EvJsonKeys(std::span<const Value> a, const BoundExpr& call) {
  std::vector<std::string> paths;
  CollectJsonKeys(a[0].s, "", &paths);
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  std::vector<Value> out;
  for (auto& p : paths) out.push_back(Value::String(std::move(p)));
  return ArrayOf(out, call.type);
}
// The value of the JSON_EACH_<type> field v for the call's MAP value type, or NULL when v does
// not qualify (Feldera's rules: numbers with no fractional part that fit BIGINT; strings; booleans;
// dates, times and timestamps, or strings with their literal's syntax).
Value JsonEachValue(std::string_view v, const SqlType& t) {
  const std::string type = VariantTypeName(v);
  Value out;
  switch (t.id) {
    case TypeId::kBigInt: {
      if (type == "TINYINT" || type == "SMALLINT" || type == "INTEGER" || type == "BIGINT" ||
          type == "BIGINT UNSIGNED") {
        if (type == "BIGINT UNSIGNED") {
          Value d;
          if (!VariantToValue(v, SqlType::Of(TypeId::kDouble), &d) || d.IsNull() || d.d >= 9223372036854775808.0)
            return Value::Null();
        }
        if (VariantToValue(v, t, &out)) return out;
        return Value::Null();
      }
      if (type == "REAL" || type == "DOUBLE") {
        Value d;
        if (!VariantToValue(v, SqlType::Of(TypeId::kDouble), &d) || d.IsNull()) return Value::Null();
        if (std::trunc(d.d) != d.d || !(d.d >= -9223372036854775808.0 && d.d < 9223372036854775808.0))
          return Value::Null();
        return Value::Int(static_cast<int64_t>(d.d));
      }
      if (type.starts_with("DECIMAL")) {
        std::optional<std::string> text = VariantJson(v);  // "-12.50": no exponent
        if (!text) return Value::Null();
        const size_t dot = text->find('.');
        if (dot != std::string::npos && text->find_first_not_of('0', dot + 1) != std::string::npos)
          return Value::Null();
        int64_t i = 0;
        const std::string whole = text->substr(0, dot);
        auto [ptr, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), i);
        if (ec != std::errc() || ptr != whole.data() + whole.size()) return Value::Null();
        return Value::Int(i);
      }
      return Value::Null();
    }
    case TypeId::kVarchar:
      if (type != "VARCHAR" || !VariantToValue(v, t, &out)) return Value::Null();
      return out;
    case TypeId::kBoolean:
      if (type != "BOOLEAN" || !VariantToValue(v, t, &out)) return Value::Null();
      return out;
    default: {  // DATE, TIME, TIMESTAMP
      if (type == "VARCHAR") {
        std::optional<std::string> s = VariantString(v);
        if (!s) return Value::Null();
        if (ParseValue(*s, t, &out)) return out;
        if (t.id == TypeId::kTimestamp && ParseValue(*s, SqlType::Of(TypeId::kDate), &out))
          return Value::Int(out.i * kMicrosPerDay);
        return Value::Null();
      }
      const char* want = t.id == TypeId::kDate ? "DATE" : t.id == TypeId::kTime ? "TIME" : "TIMESTAMP";
      if (type != want) return Value::Null();
      if (!VariantToValue(v, t, &out)) return Value::Null();
      return out;
    }
  }
}
// JSON_EACH_<type>(v): the string-keyed fields of a VARIANT object whose values qualify.
Value EvJsonEach(std::span<const Value> a, const BoundExpr& call) {
  const SqlType& vt = (*call.type.fields)[1];
  std::vector<std::pair<Value, Value>> entries;
  if (auto fields = VariantMapEntries(a[0].s)) {
    for (const auto& [k, val] : *fields) {
      auto key = VariantString(k);
      if (!key) continue;
      Value x = JsonEachValue(val, vt);
      if (!x.IsNull()) entries.emplace_back(Value::String(std::move(*key)), std::move(x));
    }
  }
  return Value::String(EncodeMapValue(std::move(entries), call.type));
}
// VARIANT_MERGE(a, b): objects merge field by field, recursively; otherwise b wins (a JSON null
// in b replaces; it does not remove).
std::string VariantMerge(std::string_view x, std::string_view y) {
  auto left = VariantMapEntries(x);
  auto right = VariantMapEntries(y);
  if (!left || !right) return std::string(y);
  std::vector<std::pair<std::string, std::string>> out = *left;
  for (auto& [k, v] : *right) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == k; });
    if (it == out.end())
      out.emplace_back(k, v);
    else
      it->second = VariantMerge(it->second, v);
  }
  return VariantMapOf(std::move(out));
}
Value EvVariantMerge(std::span<const Value> a, const BoundExpr&) {
  return Value::String(VariantMerge(a[0].s, a[1].s));
}

// The (k, x) -> lambda of a VARIANT_FILTER / VARIANT_MAP call (and the DEEP ones) on one item:
// its key k (a VARIANT encoding, or a VARCHAR path for the DEEP ones; NULL when there is none)
// is column 0, its value x column 1, and the outer values the lambda reads, a[1...], columns 2...
Value EvalItemLambda(std::span<const Value> a, const BoundExpr& call, const Value& key, std::string_view x) {
  Batch batch;
  for (size_t c = 0; c <= a.size(); ++c) {
    auto col = std::make_shared<Column>(c < 2 ? SqlType::Of(TypeId::kVarchar).phys() : ArgType(call, c - 1).phys());
    col->Append(c == 0 ? key : c == 1 ? Value::String(std::string(x)) : a[c - 1]);
    batch.cols.push_back(std::move(col));
  }
  batch.weights.assign(1, 1);
  return Evaluate(*call.lambda, batch)->Get(0);
}
bool IsTrue(const Value& v) {
  return !v.IsNull() && v.i != 0;
}
// VARIANT_FILTER(v, (k, x) -> p): an object's fields for which p is TRUE; anything else is one
// item with a NULL key, kept whole or dropped to NULL (Feldera's json.md).
Value EvVariantFilter(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull()) return Value::Null();
  auto entries = VariantMapEntries(a[0].s);
  if (!entries) return IsTrue(EvalItemLambda(a, call, Value::Null(), a[0].s)) ? a[0] : Value::Null();
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& [k, v] : *entries)
    if (IsTrue(EvalItemLambda(a, call, Value::String(k), v))) out.emplace_back(std::move(k), std::move(v));
  return Value::String(VariantMapOf(std::move(out)));
}
// The path of element i (0-based) of the array at `prefix`: 1-based brackets, e.g. e[1].
std::string ElementPath(const std::string& prefix, size_t i) {
  return fmt::format("{}[{}]", prefix, i + 1);
}
// The children of the object or array v (at `path`) that VARIANT_DEEP_FILTER keeps, each itself
// filtered; the predicate sees each item's original value, and never the contents of a dropped
// one. Fields with non-string keys are kept untouched. Anything else is returned unchanged.
std::string DeepFilter(std::span<const Value> a, const BoundExpr& call, std::string_view v, const std::string& path) {
  if (auto entries = VariantMapEntries(v)) {
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& [k, val] : *entries) {
      auto key = VariantString(k);
      if (!key) {
        out.emplace_back(std::move(k), std::move(val));
        continue;
      }
      std::string p = PathComponent(path, *key);
      if (IsTrue(EvalItemLambda(a, call, Value::String(p), val)))
        out.emplace_back(std::move(k), DeepFilter(a, call, val, p));
    }
    return VariantMapOf(std::move(out));
  }
  if (auto elements = VariantArrayElements(v)) {
    std::vector<std::string> out;
    for (size_t i = 0; i < elements->size(); ++i) {
      std::string p = ElementPath(path, i);
      if (IsTrue(EvalItemLambda(a, call, Value::String(p), (*elements)[i])))
        out.push_back(DeepFilter(a, call, (*elements)[i], p));
    }
    return VariantArrayOf(out);
  }
  return std::string(v);
}
Value EvVariantDeepFilter(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull()) return Value::Null();
  if (VariantMapEntries(a[0].s) || VariantArrayElements(a[0].s)) return Value::String(DeepFilter(a, call, a[0].s, ""));
  return IsTrue(EvalItemLambda(a, call, Value::Null(), a[0].s)) ? a[0] : Value::Null();
}
// A lambda's VARIANT result inside an object or array: SQL NULL becomes VARIANT null.
std::string InPlace(const Value& r) {
  return r.IsNull() ? VariantNull() : r.s;
}
// VARIANT_MAP(v, (k, x) -> e): an object's values replaced by e; anything else is one item with
// a NULL key, whose e is the result.
Value EvVariantMap(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull()) return Value::Null();
  auto entries = VariantMapEntries(a[0].s);
  if (!entries) return EvalItemLambda(a, call, Value::Null(), a[0].s);
  for (auto& [k, v] : *entries) v = InPlace(EvalItemLambda(a, call, Value::String(k), v));
  return Value::String(VariantMapOf(std::move(*entries)));
}
// VARIANT_DEEP_MAP's transformation of v at `path`: objects and arrays keep their structure (and
// fields with non-string keys stay untouched); the lambda replaces each leaf.
std::string DeepMap(std::span<const Value> a, const BoundExpr& call, std::string_view v, const std::string& path) {
  if (auto entries = VariantMapEntries(v)) {
    for (auto& [k, val] : *entries)
      if (auto key = VariantString(k)) val = DeepMap(a, call, val, PathComponent(path, *key));
    return VariantMapOf(std::move(*entries));
  }
  if (auto elements = VariantArrayElements(v)) {
    for (size_t i = 0; i < elements->size(); ++i)
      (*elements)[i] = DeepMap(a, call, (*elements)[i], ElementPath(path, i));
    return VariantArrayOf(*elements);
  }
  return InPlace(EvalItemLambda(a, call, Value::String(path), v));
}
Value EvVariantDeepMap(std::span<const Value> a, const BoundExpr& call) {
  if (a[0].IsNull()) return Value::Null();
  if (VariantMapEntries(a[0].s) || VariantArrayElements(a[0].s)) return Value::String(DeepMap(a, call, a[0].s, ""));
  return EvalItemLambda(a, call, Value::Null(), a[0].s);
}

// ---------------------------------------------------------------- period predicates

enum class PeriodOp { kContains, kOverlaps, kEquals, kPrecedes, kImmediatelyPrecedes, kSucceeds, kImmediatelySucceeds };

// (s1, e1) op (s2, e2), or (s1, e1) CONTAINS v: each period ordered so that its start is the
// smaller end (Feldera's rule), then the comparisons of datetime.md's table.
template <PeriodOp kOp>
Value EvPeriod(std::span<const Value> a, const BoundExpr&) {
  const int64_t s1 = std::min(a[0].i, a[1].i), e1 = std::max(a[0].i, a[1].i);
  if (a.size() == 3) return Bool(s1 <= a[2].i && a[2].i <= e1);
  const int64_t s2 = std::min(a[2].i, a[3].i), e2 = std::max(a[2].i, a[3].i);
  switch (kOp) {
    case PeriodOp::kContains:
      return Bool(s1 <= s2 && e1 >= e2);
    case PeriodOp::kOverlaps:
      return Bool(s1 <= e2 && e1 >= s2);
    case PeriodOp::kEquals:
      return Bool(s1 == s2 && e1 == e2);
    case PeriodOp::kPrecedes:
      return Bool(e1 <= s2);
    case PeriodOp::kImmediatelyPrecedes:
      return Bool(e1 == s2);
    case PeriodOp::kSucceeds:
      return Bool(s1 >= e2);
    case PeriodOp::kImmediatelySucceeds:
      return Bool(s1 == e2);
  }
  return Value::Null();
}

// ---------------------------------------------------------------- binder rules

[[noreturn]] void Refuse(const Binder& b, const sql::Expr& call, const std::string& msg) {
  b.ctx().Error(call.pos, msg);
}

sql::Pos ArgPos(const sql::Expr& call, size_t i) {
  return i < call.args.size() ? call.args[i]->pos : call.pos;
}

std::string TypeName(const SqlType& t) {
  return t.WithNullable(true).ToString();
}

bool AnyNullable(const std::vector<BoundExprPtr>& args) {
  for (const auto& a : args)
    if (a->type.nullable) return true;
  return false;
}

BoundExprPtr Call(const FunctionDef& def, SqlType type, std::vector<BoundExprPtr> args) {
  auto e = MakeCall(ExprOp::kCall, type, std::move(args));
  e->function = &def.fn;
  return e;
}

// Argument i converted to `target` (keeping its nullability) when its type is `ok`.
template <typename Ok>
void Convert(const Binder& b, const FunctionDef& def, const sql::Expr& call, std::vector<BoundExprPtr>& args, size_t i,
             const SqlType& target, Ok ok, const char* what) {
  const SqlType& t = args[i]->type;
  if (t.id != TypeId::kNull && !ok(t))
    Refuse(b, call, fmt::format("{} needs {} as argument {}, not {}", def.name, what, i + 1, TypeName(t)));
  args[i] = b.Coerce(std::move(args[i]), target.WithNullable(t.nullable), ArgPos(call, i));
}

const SqlType kVarchar = SqlType::Of(TypeId::kVarchar);
const SqlType kVarbinary = SqlType::Of(TypeId::kVarbinary);
const SqlType kBigint = SqlType::Of(TypeId::kBigInt);
const SqlType kInteger = SqlType::Of(TypeId::kInteger);
const SqlType kDouble = SqlType::Of(TypeId::kDouble);
const SqlType kBoolean = SqlType::Of(TypeId::kBoolean);

bool IsStr(const SqlType& t) {
  return t.IsString();
}
bool IsInt(const SqlType& t) {
  return t.IsInteger();
}
bool IsNum(const SqlType& t) {
  return t.IsNumeric();
}
bool IsBin(const SqlType& t) {
  return t.IsBinary();
}
bool IsBool(const SqlType& t) {
  return t.id == TypeId::kBoolean;
}

void Strings(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr>& a, size_t from,
             size_t to) {
  for (size_t i = from; i < std::min(to, a.size()); ++i) Convert(b, d, c, a, i, kVarchar, IsStr, "a string");
}
void Integers(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr>& a, size_t from,
              size_t to) {
  for (size_t i = from; i < std::min(to, a.size()); ++i) Convert(b, d, c, a, i, kBigint, IsInt, "an integer");
}
void Doubles(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr>& a) {
  for (size_t i = 0; i < a.size(); ++i) Convert(b, d, c, a, i, kDouble, IsNum, "a number");
}

// All arguments strings; the result `R`.
template <TypeId R>
BoundExprPtr RuleStrings(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Strings(b, d, c, a, 0, a.size());
  const bool n = AnyNullable(a);
  return Call(d, SqlType::Of(R, n), std::move(a));
}
// A string then integers; the result VARCHAR.
BoundExprPtr RuleStringInts(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Strings(b, d, c, a, 0, 1);
  Integers(b, d, c, a, 1, a.size());
  const bool n = AnyNullable(a);
  return Call(d, kVarchar.WithNullable(n), std::move(a));
}
// Strings then one integer (SPLIT_PART); the result VARCHAR.
BoundExprPtr RuleStringsInt(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Strings(b, d, c, a, 0, a.size() - 1);
  Integers(b, d, c, a, a.size() - 1, a.size());
  const bool n = AnyNullable(a);
  return Call(d, kVarchar.WithNullable(n), std::move(a));
}
// SUBSTRING/SUBSTR/OVERLAY: a string or binary string (OVERLAY: two), then integers.
BoundExprPtr RuleSubstring(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  const bool binary = a[0]->type.IsBinary();
  const size_t strs = d.name == "OVERLAY" ? 2 : 1;
  for (size_t i = 0; i < strs; ++i) {
    if (binary)
      Convert(b, d, c, a, i, kVarbinary, IsBin, "a binary string");
    else
      Convert(b, d, c, a, i, kVarchar, IsStr, "a string");
  }
  Integers(b, d, c, a, strs, a.size());
  const bool n = AnyNullable(a);
  return Call(d, (binary ? kVarbinary : kVarchar).WithNullable(n), std::move(a));
}
// POSITION / OCTET_LENGTH: strings or binary strings; the result INTEGER.
BoundExprPtr RuleBytes(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  const bool binary = a[0]->type.IsBinary();
  for (size_t i = 0; i < a.size(); ++i) {
    if (binary)
      Convert(b, d, c, a, i, kVarbinary, IsBin, "a binary string");
    else
      Convert(b, d, c, a, i, kVarchar, IsStr, "a string");
  }
  const bool n = AnyNullable(a);
  return Call(d, kInteger.WithNullable(n), std::move(a));
}
// TO_HEX / TO_INT: a binary string.
template <TypeId R>
BoundExprPtr RuleBinary(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Convert(b, d, c, a, 0, kVarbinary, IsBin, "a binary string");
  const bool n = AnyNullable(a);
  return Call(d, SqlType::Of(R, n), std::move(a));
}
BoundExprPtr RuleChr(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Integers(b, d, c, a, 0, 1);
  const bool n = AnyNullable(a);
  return Call(d, kVarchar.WithNullable(n), std::move(a));
}
// CONCAT / CONCAT_WS: any values, as strings.
BoundExprPtr RuleConcat(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = b.Coerce(std::move(a[i]), kVarchar.WithNullable(a[i]->type.nullable), ArgPos(c, i));
  const bool n = d.name == "CONCAT_WS" ? a[0]->type.nullable : AnyNullable(a);
  return Call(d, kVarchar.WithNullable(n), std::move(a));
}
BoundExprPtr RuleSplit(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Strings(b, d, c, a, 0, a.size());
  const bool n = AnyNullable(a);
  return Call(d, SqlType::Array(kVarchar, n), std::move(a));
}
// Numbers as DOUBLE; the result DOUBLE.
BoundExprPtr RuleDoubles(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Doubles(b, d, c, a);
  const bool n = AnyNullable(a);
  return Call(d, kDouble.WithNullable(n), std::move(a));
}
BoundExprPtr RuleStPoint(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Doubles(b, d, c, a);
  const bool n = AnyNullable(a);
  return Call(d, SqlType::Of(TypeId::kGeometry, n), std::move(a));
}
BoundExprPtr RuleGeometries(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  for (size_t i = 0; i < a.size(); ++i)
    Convert(
        b, d, c, a, i, SqlType::Of(TypeId::kGeometry), [](const SqlType& t) { return t.id == TypeId::kGeometry; },
        "a GEOMETRY (ST_POINT)");
  const bool n = AnyNullable(a);
  return Call(d, kDouble.WithNullable(n), std::move(a));
}
BoundExprPtr RuleIsFloat(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Doubles(b, d, c, a);
  const bool n = AnyNullable(a);
  return Call(d, kBoolean.WithNullable(n), std::move(a));
}
BoundExprPtr RuleMod(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  return b.Arith(ExprOp::kMod, std::move(a[0]), std::move(a[1]), c.pos);
}
// ROUND, TRUNCATE, CEIL, FLOOR, SIGN, BROUND: a number [, digits]; the result has its type.
BoundExprPtr RuleNumberSameType(const Binder& b, const FunctionDef& d, const sql::Expr& c,
                                std::vector<BoundExprPtr> a) {
  if (a[0]->type.IsTemporal())
    Refuse(b, c, fmt::format("{} of a {} is not supported yet (FLOOR/CEIL(x TO unit))", d.name, TypeName(a[0]->type)));
  if (a[0]->type.id == TypeId::kNull) a[0] = b.Coerce(std::move(a[0]), kInteger, c.pos);
  if (!a[0]->type.IsNumeric()) Refuse(b, c, fmt::format("{} needs a number, not {}", d.name, TypeName(a[0]->type)));
  Integers(b, d, c, a, 1, a.size());
  const bool n = AnyNullable(a);
  SqlType t = a[0]->type.WithNullable(n);
  return Call(d, t, std::move(a));
}
// GREATEST / LEAST: values of one common type; NULL when any is.
BoundExprPtr RuleExtreme(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  SqlType t = a[0]->type;
  for (size_t i = 1; i < a.size(); ++i) t = b.CommonType(t, a[i]->type, ArgPos(c, i));
  if (t.id == TypeId::kNull) t = kInteger;
  if (t.id == TypeId::kRow) Refuse(b, c, fmt::format("{} of ROW values is not supported yet", d.name));
  const bool n = AnyNullable(a);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = b.Coerce(std::move(a[i]), t.WithNullable(a[i]->type.nullable), ArgPos(c, i));
  return Call(d, t.WithNullable(n), std::move(a));
}
BoundExprPtr RulePi(const Binder&, const FunctionDef& d, const sql::Expr&, std::vector<BoundExprPtr> a) {
  return Call(d, kDouble.WithNullable(false), std::move(a));
}

void RequireArray(const Binder& b, const FunctionDef& d, const sql::Expr& c, const std::vector<BoundExprPtr>& a,
                  size_t i) {
  if (a[i]->type.id != TypeId::kArray)
    Refuse(b, c, fmt::format("{} needs an ARRAY as argument {}, not {}", d.name, i + 1, TypeName(a[i]->type)));
}
// NULL-typed array arguments become INTEGER ARRAY.
void NullToArray(const Binder& b, std::vector<BoundExprPtr>& a, size_t i, const SqlType& like) {
  if (a[i]->type.id == TypeId::kNull) a[i] = b.Coerce(std::move(a[i]), like.WithNullable(true), sql::Pos{});
}

// ARRAY(a, b, ...) / ARRAY[a, b, ...]: elements of their common type.
BoundExprPtr RuleArray(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  SqlType t = SqlType::Of(TypeId::kNull);
  for (size_t i = 0; i < a.size(); ++i) t = b.CommonType(t, a[i]->type, ArgPos(c, i));
  if (t.id == TypeId::kNull) t = kInteger;
  bool elements_nullable = false;
  for (size_t i = 0; i < a.size(); ++i) {
    elements_nullable = elements_nullable || a[i]->type.nullable;
    a[i] = b.Coerce(std::move(a[i]), t.WithNullable(a[i]->type.nullable), ArgPos(c, i));
  }
  return Call(d, SqlType::Array(t.WithNullable(elements_nullable), false), std::move(a));
}
// The element type of array argument 0; the result nullable.
template <int kResult>  // 0: the element type, 1: INTEGER, 2: BIGINT, 3: BOOLEAN
BoundExprPtr RuleArrayScalar(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  NullToArray(b, a, 0, SqlType::Array(kInteger));
  RequireArray(b, d, c, a, 0);
  const SqlType et = ElementType(a[0]->type);
  if (d.name == "ITEM") Integers(b, d, c, a, 1, 2);
  if (a.size() > 1 && d.name != "ITEM") {  // the element to look for
    SqlType t = b.CommonType(et, a[1]->type, ArgPos(c, 1));
    a[1] = b.Coerce(std::move(a[1]), et.WithNullable(a[1]->type.nullable), ArgPos(c, 1));
    (void)t;
  }
  const bool n = AnyNullable(a);
  SqlType r = kResult == 0   ? et.WithNullable(true)
              : kResult == 1 ? kInteger.WithNullable(n)
              : kResult == 2 ? kBigint.WithNullable(n)
                             : kBoolean.WithNullable(n);
  return Call(d, r, std::move(a));
}
// An array (and an element of it, ARRAY_APPEND/PREPEND/REMOVE) to an array of the same type.
BoundExprPtr RuleArraySame(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  NullToArray(b, a, 0, SqlType::Array(kInteger));
  RequireArray(b, d, c, a, 0);
  SqlType et = ElementType(a[0]->type);
  const bool array_nullable = a[0]->type.nullable;
  if (d.name == "SORT_ARRAY" && a.size() > 1) Convert(b, d, c, a, 1, kBoolean, IsBool, "a BOOLEAN");
  if (d.name == "ARRAY_APPEND" || d.name == "ARRAY_PREPEND" || d.name == "ARRAY_REMOVE") {
    et = b.CommonType(et, a[1]->type, ArgPos(c, 1));
    if (d.name != "ARRAY_REMOVE") et = et.WithNullable(ElementType(a[0]->type).nullable || a[1]->type.nullable);
    a[0] = b.Coerce(std::move(a[0]), SqlType::Array(et, array_nullable), ArgPos(c, 0));
    a[1] = b.Coerce(std::move(a[1]), et.WithNullable(a[1]->type.nullable), ArgPos(c, 1));
  }
  const bool n = d.name == "ARRAY_APPEND" || d.name == "ARRAY_PREPEND" ? array_nullable : AnyNullable(a);
  return Call(d, SqlType::Array(et, n), std::move(a));
}
// Arrays of one common type (ARRAY_CONCAT, ARRAYS_OVERLAP, ARRAY_EXCEPT ...).
BoundExprPtr RuleArrays(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  SqlType t = SqlType::Of(TypeId::kNull);
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i]->type.id != TypeId::kNull) RequireArray(b, d, c, a, i);
    t = b.CommonType(t, a[i]->type, ArgPos(c, i));
  }
  if (t.id == TypeId::kNull) t = SqlType::Array(kInteger);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = b.Coerce(std::move(a[i]), t.WithNullable(a[i]->type.nullable), ArgPos(c, i));
  const bool n = AnyNullable(a);
  if (d.name == "ARRAYS_OVERLAP") return Call(d, kBoolean.WithNullable(n), std::move(a));
  return Call(d, t.WithNullable(n), std::move(a));
}
BoundExprPtr RuleArrayToString(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  NullToArray(b, a, 0, SqlType::Array(kVarchar));
  RequireArray(b, d, c, a, 0);
  Strings(b, d, c, a, 1, a.size());
  const bool n = a[0]->type.nullable || a[1]->type.nullable;
  return Call(d, kVarchar.WithNullable(n), std::move(a));
}
BoundExprPtr RuleArrayInsert(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  NullToArray(b, a, 0, SqlType::Array(kInteger));
  RequireArray(b, d, c, a, 0);
  Integers(b, d, c, a, 1, 2);
  SqlType et = b.CommonType(ElementType(a[0]->type), a[2]->type, ArgPos(c, 2)).WithNullable(true);
  const bool n = a[0]->type.nullable || a[1]->type.nullable;
  a[0] = b.Coerce(std::move(a[0]), SqlType::Array(et, a[0]->type.nullable), ArgPos(c, 0));
  a[2] = b.Coerce(std::move(a[2]), et.WithNullable(a[2]->type.nullable), ArgPos(c, 2));
  return Call(d, SqlType::Array(et, n), std::move(a));
}
BoundExprPtr RuleArrayRepeat(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  if (a[0]->type.id == TypeId::kNull) a[0] = b.Coerce(std::move(a[0]), kInteger, c.pos);
  Integers(b, d, c, a, 1, 2);
  const bool n = a[1]->type.nullable;
  SqlType et = a[0]->type;
  return Call(d, SqlType::Array(et, n), std::move(a));
}
// ARRAY_EXISTS(array, x -> predicate), TRANSFORM(array, x -> expr): the binder has bound the
// lambda's body with x as column 0 (binder.cc); it moves from the arguments to the call's lambda.
BoundExprPtr RuleLambda(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  if (c.args[0]->kind == sql::ExprKind::kLambda || c.args[1]->kind != sql::ExprKind::kLambda)
    Refuse(b, c, fmt::format("{} needs an ARRAY and a lambda (x -> ...) as arguments", d.name));
  if (!c.args[1]->text.empty())
    Refuse(b, c, fmt::format("{} needs a lambda of one parameter (x -> ...), not two", d.name));
  BoundExprPtr body = std::move(a[1]);
  a.pop_back();
  SqlType r;
  if (d.name == "ARRAY_EXISTS") {
    if (body->type.id != TypeId::kNull && body->type.id != TypeId::kBoolean)
      Refuse(b, c, fmt::format("ARRAY_EXISTS needs a BOOLEAN lambda, not {}", TypeName(body->type)));
    body = b.Coerce(std::move(body), kBoolean.WithNullable(true), ArgPos(c, 1));
    r = kBoolean.WithNullable(a[0]->type.nullable || body->type.nullable);
  } else {
    if (body->type.id == TypeId::kNull) body = b.Coerce(std::move(body), kInteger.WithNullable(true), ArgPos(c, 1));
    r = SqlType::Array(body->type, a[0]->type.nullable);
  }
  auto e = Call(d, r, std::move(a));
  e->lambda = std::move(body);
  return e;
}
// VARIANT_FILTER / VARIANT_MAP (and the DEEP ones)(variant, (k, x) -> ...): the binder has bound
// the lambda's body with k and x as columns 0 and 1 (binder.cc); it moves to the call's lambda.
// A filter's body is a BOOLEAN predicate; a map's any value, converted to VARIANT.
BoundExprPtr RuleVariantLambda(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  if (c.args[0]->kind == sql::ExprKind::kLambda || c.args[1]->kind != sql::ExprKind::kLambda ||
      a[0]->type.id != TypeId::kVariant || c.args[1]->text.empty())
    Refuse(b, c, fmt::format("{} needs a VARIANT and a lambda of two parameters ((k, x) -> ...) as arguments", d.name));
  BoundExprPtr body = std::move(a[1]);
  a.pop_back();
  if (d.name.find("FILTER") != std::string_view::npos) {
    if (body->type.id != TypeId::kNull && body->type.id != TypeId::kBoolean)
      Refuse(b, c, fmt::format("{} needs a BOOLEAN lambda, not {}", d.name, TypeName(body->type)));
    body = b.Coerce(std::move(body), kBoolean.WithNullable(true), ArgPos(c, 1));
  } else {
    body = b.Coerce(std::move(body), SqlType::Of(TypeId::kVariant, true), ArgPos(c, 1));
  }
  auto e = Call(d, SqlType::Of(TypeId::kVariant, true), std::move(a));
  e->lambda = std::move(body);
  return e;
}
// MD5: a string or a binary string; the result VARCHAR.
BoundExprPtr RuleMd5(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  if (a[0]->type.IsBinary())
    Convert(b, d, c, a, 0, kVarbinary, IsBin, "a binary string");
  else
    Convert(b, d, c, a, 0, kVarchar, IsStr, "a string or a binary string");
  const bool n = AnyNullable(a);
  return Call(d, kVarchar.WithNullable(n), std::move(a));
}
// XXHASH(string or binary, seed): BIGINT.
BoundExprPtr RuleXxhash(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  if (a[0]->type.IsBinary())
    Convert(b, d, c, a, 0, kVarbinary, IsBin, "a binary string");
  else
    Convert(b, d, c, a, 0, kVarchar, IsStr, "a string or a binary string");
  Integers(b, d, c, a, 1, 2);
  const bool n = AnyNullable(a);
  return Call(d, kBigint.WithNullable(n), std::move(a));
}
// BIN2UTF8(binary): VARCHAR, NULL for bytes that are not UTF-8.
BoundExprPtr RuleBin2Utf8(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Convert(b, d, c, a, 0, kVarbinary, IsBin, "a binary string");
  return Call(d, kVarchar.WithNullable(true), std::move(a));
}
const ScalarFunction kLeftBytesFn{"LEFT", true, EvLeftBytes};
const ScalarFunction kRightBytesFn{"RIGHT", true, EvRightBytes};
// LEFT/RIGHT(s, n): characters of a string, or bytes of a binary string.
BoundExprPtr RuleLeftRight(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  if (!a[0]->type.IsBinary()) return RuleStringInts(b, d, c, std::move(a));
  Convert(b, d, c, a, 0, kVarbinary, IsBin, "a binary string");
  Integers(b, d, c, a, 1, 2);
  const bool n = AnyNullable(a);
  auto e = Call(d, kVarbinary.WithNullable(n), std::move(a));
  e->function = d.name == "LEFT" ? &kLeftBytesFn : &kRightBytesFn;
  return e;
}
// DIV_NULL(a, b): the division a / b, bound as the call's lambda over columns 0 and 1.
BoundExprPtr RuleDivNull(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  for (size_t i = 0; i < 2; ++i) {
    if (a[i]->type.id == TypeId::kNull) a[i] = b.Coerce(std::move(a[i]), kInteger.WithNullable(true), ArgPos(c, i));
    if (!a[i]->type.IsNumeric()) Refuse(b, c, fmt::format("DIV_NULL needs numbers, not {}", TypeName(a[i]->type)));
  }
  BoundExprPtr div = b.Arith(ExprOp::kDiv, MakeColumn(0, a[0]->type), MakeColumn(1, a[1]->type), c.pos);
  auto e = Call(d, div->type.WithNullable(true), std::move(a));
  e->lambda = std::move(div);
  return e;
}
BoundExprPtr RuleFiniteOrNull(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Doubles(b, d, c, a);
  return Call(d, kDouble.WithNullable(true), std::move(a));
}
// GREATEST_IGNORE_NULLS / LEAST_IGNORE_NULLS: values of one common type; NULL only when all are.
BoundExprPtr RuleExtremeIgnoreNulls(const Binder& b, const FunctionDef& d, const sql::Expr& c,
                                    std::vector<BoundExprPtr> a) {
  SqlType t = a[0]->type;
  for (size_t i = 1; i < a.size(); ++i) t = b.CommonType(t, a[i]->type, ArgPos(c, i));
  if (t.id == TypeId::kNull) t = kInteger;
  if (t.id == TypeId::kRow) Refuse(b, c, fmt::format("{} of ROW values is not supported yet", d.name));
  bool n = true;
  for (const auto& x : a) n = n && (x->type.nullable || x->type.id == TypeId::kNull);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = b.Coerce(std::move(a[i]), t.WithNullable(a[i]->type.nullable), ArgPos(c, i));
  return Call(d, t.WithNullable(n), std::move(a));
}
// SEQUENCE(start, end): INTEGER ARRAY.
BoundExprPtr RuleSequence(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  for (size_t i = 0; i < 2; ++i) Convert(b, d, c, a, i, kInteger, IsInt, "an integer");
  const bool n = AnyNullable(a);
  return Call(d, SqlType::Array(kInteger.WithNullable(false), n), std::move(a));
}
// IF(condition, then, else): a CASE.
BoundExprPtr RuleIf(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Convert(b, d, c, a, 0, kBoolean, IsBool, "a BOOLEAN");
  SqlType t = b.CommonType(a[1]->type, a[2]->type, ArgPos(c, 2));
  if (t.id == TypeId::kNull) t = kInteger;
  const bool n =
      a[1]->type.nullable || a[2]->type.nullable || a[1]->type.id == TypeId::kNull || a[2]->type.id == TypeId::kNull;
  for (size_t i = 1; i < 3; ++i) a[i] = b.Coerce(std::move(a[i]), t.WithNullable(a[i]->type.nullable), ArgPos(c, i));
  auto e = MakeCall(ExprOp::kCase, t.WithNullable(n), std::move(a));
  e->has_else = true;
  return e;
}
// IFNULL(a, b): COALESCE(a, b).
BoundExprPtr RuleIfNull(const Binder& b, const FunctionDef&, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  SqlType t = b.CommonType(a[0]->type, a[1]->type, ArgPos(c, 1));
  if (t.id == TypeId::kNull) t = kInteger;
  const bool n = (a[0]->type.nullable || a[0]->type.id == TypeId::kNull) &&
                 (a[1]->type.nullable || a[1]->type.id == TypeId::kNull);
  for (size_t i = 0; i < 2; ++i) a[i] = b.Coerce(std::move(a[i]), t.WithNullable(a[i]->type.nullable), ArgPos(c, i));
  return MakeCall(ExprOp::kCoalesce, t.WithNullable(n), std::move(a));
}
// MAKE_DATE(y, m, d), MAKE_TIME(h, m, s), MAKE_TIMESTAMP(y, m, d, h, m, s): integers, the seconds
// any number, cast to DECIMAL(18, 6) (so microseconds, the fraction beyond them cut off as
// Feldera does); NULL when the parts make no valid value.
BoundExprPtr RuleMake(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  const bool date = d.name == "MAKE_DATE";
  Integers(b, d, c, a, 0, date ? a.size() : a.size() - 1);
  if (!date) Convert(b, d, c, a, a.size() - 1, SqlType::Decimal(18, 6), IsNum, "a number");
  const TypeId r = date ? TypeId::kDate : d.name == "MAKE_TIME" ? TypeId::kTime : TypeId::kTimestamp;
  return Call(d, SqlType::Of(r, true), std::move(a));
}
// CONVERT_TIMEZONE(from, to, ts): two strings and a TIMESTAMP (a DATE is its midnight); a
// nullable TIMESTAMP, as an unknown zone or a local time a transition skips or repeats gives
// NULL (Feldera's rule).
BoundExprPtr RuleConvertTimezone(const Binder& b, const FunctionDef& d, const sql::Expr& c,
                                 std::vector<BoundExprPtr> a) {
  Strings(b, d, c, a, 0, 2);
  Convert(
      b, d, c, a, 2, SqlType::Of(TypeId::kTimestamp),
      [](const SqlType& t) { return t.id == TypeId::kTimestamp || t.id == TypeId::kDate || t.IsString(); },
      "a TIMESTAMP");
  return Call(d, SqlType::Of(TypeId::kTimestamp, true), std::move(a));
}
// MAP_CONCAT(m1, m2, ...): maps of one common type.
BoundExprPtr RuleMapConcat(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i]->type.id != TypeId::kMap)
      Refuse(b, c, fmt::format("MAP_CONCAT needs MAP arguments, not {}", TypeName(a[i]->type)));
  SqlType t = a[0]->type;
  for (size_t i = 1; i < a.size(); ++i) t = b.CommonType(t, a[i]->type, ArgPos(c, i));
  const bool n = AnyNullable(a);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = b.Coerce(std::move(a[i]), t.WithNullable(a[i]->type.nullable), ArgPos(c, i));
  return Call(d, t.WithNullable(n), std::move(a));
}
// JSON_OBJECT_KEYS / JSON_KEYS / JSON_EACH_<type> / VARIANT_MERGE: VARIANT arguments.
void Variants(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr>& a) {
  for (size_t i = 0; i < a.size(); ++i)
    Convert(
        b, d, c, a, i, SqlType::Of(TypeId::kVariant), [](const SqlType& t) { return t.id == TypeId::kVariant; },
        "a VARIANT");
}
BoundExprPtr RuleJsonKeys(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Variants(b, d, c, a);
  const bool n = AnyNullable(a);
  return Call(d, SqlType::Array(kVarchar.WithNullable(false), n), std::move(a));
}
BoundExprPtr RuleJsonEach(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Variants(b, d, c, a);
  const std::string_view suffix = d.name.substr(std::string_view("JSON_EACH_").size());
  const TypeId vt = suffix == "BIGINT"    ? TypeId::kBigInt
                    : suffix == "STRING"  ? TypeId::kVarchar
                    : suffix == "BOOLEAN" ? TypeId::kBoolean
                    : suffix == "DATE"    ? TypeId::kDate
                    : suffix == "TIME"    ? TypeId::kTime
                                          : TypeId::kTimestamp;
  const bool n = AnyNullable(a);
  return Call(d, SqlType::Map(kVarchar.WithNullable(false), SqlType::Of(vt, true), n), std::move(a));
}
BoundExprPtr RuleVariantMerge(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  Variants(b, d, c, a);
  const bool n = AnyNullable(a);
  return Call(d, SqlType::Of(TypeId::kVariant, n), std::move(a));
}
// Period predicates ($PERIOD_<op>, parsed from `(s1, e1) OVERLAPS (s2, e2)` ...): the ends of
// both periods of one DATE, TIME or TIMESTAMP type; an INTERVAL end is the start plus it.
BoundExprPtr RulePeriod(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr> a) {
  for (size_t i = 1; i < a.size(); i += 2)
    if (a[i]->type.IsInterval()) a[i] = b.Arith(ExprOp::kAdd, a[i - 1]->Clone(), std::move(a[i]), ArgPos(c, i));
  SqlType t = a[0]->type;
  for (size_t i = 1; i < a.size(); ++i) t = b.CommonType(t, a[i]->type, ArgPos(c, i));
  const std::string_view op = d.name.substr(std::string_view("$PERIOD_").size());
  if (!t.IsTemporal())
    Refuse(b, c, fmt::format("{} needs periods of DATE, TIME or TIMESTAMP values, not {}", op, TypeName(t)));
  const bool n = AnyNullable(a);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = b.Coerce(std::move(a[i]), t.WithNullable(a[i]->type.nullable), ArgPos(c, i));
  return Call(d, kBoolean.WithNullable(n), std::move(a));
}
BoundExprPtr RuleRefuse(const Binder& b, const FunctionDef& d, const sql::Expr& c, std::vector<BoundExprPtr>) {
  Refuse(b, c, fmt::format("{} is not supported yet", d.name));
}

constexpr int kAny = -1;

// The library. Names are upper case; a function with several names has a row per name.
const FunctionDef kFunctions[] = {
    // ---- strings
    {"LOWER", 1, 1, RuleStrings<TypeId::kVarchar>, {"LOWER", true, EvLower}},
    {"UPPER", 1, 1, RuleStrings<TypeId::kVarchar>, {"UPPER", true, EvUpper}},
    {"INITCAP", 1, 1, RuleStrings<TypeId::kVarchar>, {"INITCAP", true, EvInitcap}},
    {"LENGTH", 1, 1, RuleStrings<TypeId::kInteger>, {"LENGTH", true, EvCharLength}},
    {"LEN", 1, 1, RuleStrings<TypeId::kInteger>, {"LEN", true, EvCharLength}},
    {"CHAR_LENGTH", 1, 1, RuleStrings<TypeId::kInteger>, {"CHAR_LENGTH", true, EvCharLength}},
    {"CHARACTER_LENGTH", 1, 1, RuleStrings<TypeId::kInteger>, {"CHARACTER_LENGTH", true, EvCharLength}},
    {"OCTET_LENGTH", 1, 1, RuleBytes, {"OCTET_LENGTH", true, EvOctetLength}},
    {"ASCII", 1, 1, RuleStrings<TypeId::kInteger>, {"ASCII", true, EvAscii}},
    {"CHR", 1, 1, RuleChr, {"CHR", true, EvChr}},
    {"SUBSTRING", 2, 3, RuleSubstring, {"SUBSTRING", true, EvSubstring}},
    {"SUBSTR", 2, 3, RuleSubstring, {"SUBSTR", true, EvSubstring}},
    {"OVERLAY", 3, 4, RuleSubstring, {"OVERLAY", true, EvOverlay}},
    {"POSITION", 2, 2, RuleBytes, {"POSITION", true, EvPosition}},
    {"TRIM", 3, 3, RuleStrings<TypeId::kVarchar>, {"TRIM", true, EvTrim}},
    {"LTRIM", 1, 2, RuleStrings<TypeId::kVarchar>, {"LTRIM", true, EvLtrim}},
    {"RTRIM", 1, 2, RuleStrings<TypeId::kVarchar>, {"RTRIM", true, EvRtrim}},
    {"REPLACE", 3, 3, RuleStrings<TypeId::kVarchar>, {"REPLACE", true, EvReplace}},
    {"CONCAT", 1, kAny, RuleConcat, {"CONCAT", true, EvConcat}},
    {"CONCAT_WS", 1, kAny, RuleConcat, {"CONCAT_WS", false, EvConcatWs}},
    {"LEFT", 2, 2, RuleLeftRight, {"LEFT", true, EvLeft}},
    {"RIGHT", 2, 2, RuleLeftRight, {"RIGHT", true, EvRight}},
    {"REPEAT", 2, 2, RuleStringInts, {"REPEAT", true, EvRepeat}},
    {"REGEXP_REPLACE", 2, 3, RuleStrings<TypeId::kVarchar>, {"REGEXP_REPLACE", true, EvRegexpReplace}},
    {"RLIKE", 2, 2, RuleStrings<TypeId::kBoolean>, {"RLIKE", true, EvRlike}},
    {"SPLIT", 1, 2, RuleSplit, {"SPLIT", true, EvSplit}},
    {"SPLIT_PART", 3, 3, RuleStringsInt, {"SPLIT_PART", true, EvSplitPart}},
    {"TO_HEX", 1, 1, RuleBinary<TypeId::kVarchar>, {"TO_HEX", true, EvToHex}},
    {"TO_INT", 1, 1, RuleBinary<TypeId::kInteger>, {"TO_INT", true, EvToInt}},
    {"GUNZIP", 1, 1, RuleBinary<TypeId::kVarchar>, {"GUNZIP", true, EvGunzip}},
    {"INITCAP_SPACES", 1, 1, RuleStrings<TypeId::kVarchar>, {"INITCAP_SPACES", true, EvInitcapSpaces}},
    {"REVERSE", 1, 1, RuleStrings<TypeId::kVarchar>, {"REVERSE", true, EvReverse}},
    {"MD5", 1, 1, RuleMd5, {"MD5", true, EvMd5}},
    {"XXHASH", 2, 2, RuleXxhash, {"XXHASH", true, EvXxhash}},
    {"BIN2UTF8", 1, 1, RuleBin2Utf8, {"BIN2UTF8", true, EvBin2Utf8}},
    // ---- numbers
    {"MOD", 2, 2, RuleMod, {"MOD", true, nullptr}},
    {"POWER", 2, 2, RuleDoubles, {"POWER", true, EvPower}},
    {"SQRT", 1, 1, RuleDoubles, {"SQRT", true, EvDouble1<Sqrt>}},
    {"CBRT", 1, 1, RuleDoubles, {"CBRT", true, EvDouble1<Cbrt>}},
    {"EXP", 1, 1, RuleDoubles, {"EXP", true, EvDouble1<Exp>}},
    {"LN", 1, 1, RuleDoubles, {"LN", true, EvLn}},
    {"LOG10", 1, 1, RuleDoubles, {"LOG10", true, EvLog10}},
    {"LOG", 1, 2, RuleDoubles, {"LOG", true, EvLog}},
    {"SIN", 1, 1, RuleDoubles, {"SIN", true, EvDouble1<Sin>}},
    {"COS", 1, 1, RuleDoubles, {"COS", true, EvDouble1<Cos>}},
    {"TAN", 1, 1, RuleDoubles, {"TAN", true, EvDouble1<Tan>}},
    {"COT", 1, 1, RuleDoubles, {"COT", true, EvDouble1<Cot>}},
    {"SEC", 1, 1, RuleDoubles, {"SEC", true, EvDouble1<Sec>}},
    {"CSC", 1, 1, RuleDoubles, {"CSC", true, EvDouble1<Csc>}},
    {"ASIN", 1, 1, RuleDoubles, {"ASIN", true, EvDouble1<Asin>}},
    {"ACOS", 1, 1, RuleDoubles, {"ACOS", true, EvDouble1<Acos>}},
    {"ATAN", 1, 1, RuleDoubles, {"ATAN", true, EvDouble1<Atan>}},
    {"ATAN2", 2, 2, RuleDoubles, {"ATAN2", true, EvAtan2}},
    {"SINH", 1, 1, RuleDoubles, {"SINH", true, EvDouble1<Sinh>}},
    {"COSH", 1, 1, RuleDoubles, {"COSH", true, EvDouble1<Cosh>}},
    {"TANH", 1, 1, RuleDoubles, {"TANH", true, EvDouble1<Tanh>}},
    {"COTH", 1, 1, RuleDoubles, {"COTH", true, EvDouble1<Coth>}},
    {"SECH", 1, 1, RuleDoubles, {"SECH", true, EvDouble1<Sech>}},
    {"CSCH", 1, 1, RuleDoubles, {"CSCH", true, EvDouble1<Csch>}},
    {"ASINH", 1, 1, RuleDoubles, {"ASINH", true, EvDouble1<Asinh>}},
    {"ACOSH", 1, 1, RuleDoubles, {"ACOSH", true, EvDouble1<Acosh>}},
    {"ATANH", 1, 1, RuleDoubles, {"ATANH", true, EvDouble1<Atanh>}},
    {"DEGREES", 1, 1, RuleDoubles, {"DEGREES", true, EvDouble1<Degrees>}},
    {"RADIANS", 1, 1, RuleDoubles, {"RADIANS", true, EvDouble1<Radians>}},
    {"PI", 0, 0, RulePi, {"PI", true, EvPi}},
    {"ST_POINT", 2, 2, RuleStPoint, {"ST_POINT", true, EvStPoint}},
    {"ST_DISTANCE", 2, 2, RuleGeometries, {"ST_DISTANCE", true, EvStDistance}},
    {"IS_INF", 1, 1, RuleIsFloat, {"IS_INF", true, EvIsInf}},
    {"IS_NAN", 1, 1, RuleIsFloat, {"IS_NAN", true, EvIsNan}},
    {"ROUND", 1, 2, RuleNumberSameType, {"ROUND", true, EvRound<RoundMode::kHalfAwayFromZero>}},
    {"BROUND", 1, 2, RuleNumberSameType, {"BROUND", true, EvRound<RoundMode::kHalfEven>}},
    {"TRUNCATE", 1, 2, RuleNumberSameType, {"TRUNCATE", true, EvRound<RoundMode::kTruncate>}},
    {"TRUNC", 1, 2, RuleNumberSameType, {"TRUNC", true, EvRound<RoundMode::kTruncate>}},
    {"FLOOR", 1, 1, RuleNumberSameType, {"FLOOR", true, EvRound<RoundMode::kFloor>}},
    {"CEIL", 1, 1, RuleNumberSameType, {"CEIL", true, EvRound<RoundMode::kCeil>}},
    {"CEILING", 1, 1, RuleNumberSameType, {"CEILING", true, EvRound<RoundMode::kCeil>}},
    {"SIGN", 1, 1, RuleNumberSameType, {"SIGN", true, EvSign}},
    {"GREATEST", 1, kAny, RuleExtreme, {"GREATEST", true, EvGreatest}},
    {"LEAST", 1, kAny, RuleExtreme, {"LEAST", true, EvLeast}},
    {"GREATEST_IGNORE_NULLS",
     1,
     kAny,
     RuleExtremeIgnoreNulls,
     {"GREATEST_IGNORE_NULLS", false, EvExtremeIgnoreNulls<true>}},
    {"LEAST_IGNORE_NULLS", 1, kAny, RuleExtremeIgnoreNulls, {"LEAST_IGNORE_NULLS", false, EvExtremeIgnoreNulls<false>}},
    {"DIV_NULL", 2, 2, RuleDivNull, {"DIV_NULL", true, EvDivNull}},
    {"FINITE_OR_NULL", 1, 1, RuleFiniteOrNull, {"FINITE_OR_NULL", true, EvFiniteOrNull}},
    // ---- conditionals
    {"IF", 3, 3, RuleIf, {"IF", false, nullptr}},
    {"IFNULL", 2, 2, RuleIfNull, {"IFNULL", false, nullptr}},
    // ---- dates and times
    {"MAKE_DATE", 3, 3, RuleMake, {"MAKE_DATE", true, EvMakeDate}},
    {"MAKE_TIME", 3, 3, RuleMake, {"MAKE_TIME", true, EvMakeTime}},
    {"MAKE_TIMESTAMP", 6, 6, RuleMake, {"MAKE_TIMESTAMP", true, EvMakeTimestamp}},
    {"CONVERT_TIMEZONE", 3, 3, RuleConvertTimezone, {"CONVERT_TIMEZONE", true, EvConvertTimezone}},
    {"$PERIOD_CONTAINS", 3, 4, RulePeriod, {"CONTAINS", true, EvPeriod<PeriodOp::kContains>}},
    {"$PERIOD_OVERLAPS", 4, 4, RulePeriod, {"OVERLAPS", true, EvPeriod<PeriodOp::kOverlaps>}},
    {"$PERIOD_EQUALS", 4, 4, RulePeriod, {"EQUALS", true, EvPeriod<PeriodOp::kEquals>}},
    {"$PERIOD_PRECEDES", 4, 4, RulePeriod, {"PRECEDES", true, EvPeriod<PeriodOp::kPrecedes>}},
    {"$PERIOD_IMMEDIATELY_PRECEDES",
     4,
     4,
     RulePeriod,
     {"IMMEDIATELY PRECEDES", true, EvPeriod<PeriodOp::kImmediatelyPrecedes>}},
    {"$PERIOD_SUCCEEDS", 4, 4, RulePeriod, {"SUCCEEDS", true, EvPeriod<PeriodOp::kSucceeds>}},
    {"$PERIOD_IMMEDIATELY_SUCCEEDS",
     4,
     4,
     RulePeriod,
     {"IMMEDIATELY SUCCEEDS", true, EvPeriod<PeriodOp::kImmediatelySucceeds>}},
    // ---- maps
    {"MAP_CONCAT", 1, kAny, RuleMapConcat, {"MAP_CONCAT", true, EvMapConcat}},
    // ---- arrays
    {"ARRAY", 0, kAny, RuleArray, {"ARRAY", false, EvArray}},
    {"ITEM", 2, 2, RuleArrayScalar<0>, {"ITEM", true, EvItem}},
    {"ELEMENT", 1, 1, RuleArrayScalar<0>, {"ELEMENT", true, EvElement}},
    {"CARDINALITY", 1, 1, RuleArrayScalar<1>, {"CARDINALITY", true, EvCardinality}},
    {"ARRAY_LENGTH", 1, 1, RuleArrayScalar<1>, {"ARRAY_LENGTH", true, EvCardinality}},
    {"ARRAY_SIZE", 1, 1, RuleArrayScalar<1>, {"ARRAY_SIZE", true, EvCardinality}},
    {"ARRAY_CONTAINS", 2, 2, RuleArrayScalar<3>, {"ARRAY_CONTAINS", true, EvArrayContains}},
    {"ARRAY_POSITION", 2, 2, RuleArrayScalar<2>, {"ARRAY_POSITION", true, EvArrayPosition}},
    {"ARRAY_MAX", 1, 1, RuleArrayScalar<0>, {"ARRAY_MAX", true, EvArrayExtreme<true>}},
    {"ARRAY_MIN", 1, 1, RuleArrayScalar<0>, {"ARRAY_MIN", true, EvArrayExtreme<false>}},
    {"ARRAY_APPEND", 2, 2, RuleArraySame, {"ARRAY_APPEND", false, EvArrayAppend}},
    {"ARRAY_PREPEND", 2, 2, RuleArraySame, {"ARRAY_PREPEND", false, EvArrayPrepend}},
    {"ARRAY_REMOVE", 2, 2, RuleArraySame, {"ARRAY_REMOVE", true, EvArrayRemove}},
    {"ARRAY_DISTINCT", 1, 1, RuleArraySame, {"ARRAY_DISTINCT", true, EvArrayDistinct}},
    {"ARRAY_REVERSE", 1, 1, RuleArraySame, {"ARRAY_REVERSE", true, EvArrayReverse}},
    {"ARRAY_COMPACT", 1, 1, RuleArraySame, {"ARRAY_COMPACT", true, EvArrayCompact}},
    {"SORT_ARRAY", 1, 2, RuleArraySame, {"SORT_ARRAY", true, EvSortArray}},
    {"ARRAY_CONCAT", 1, kAny, RuleArrays, {"ARRAY_CONCAT", true, EvArrayConcat}},
    {"ARRAYS_OVERLAP", 2, 2, RuleArrays, {"ARRAYS_OVERLAP", true, EvArraysOverlap}},
    {"ARRAY_EXCEPT", 2, 2, RuleArrays, {"ARRAY_EXCEPT", true, EvArrayExcept}},
    {"ARRAY_INTERSECT", 2, 2, RuleArrays, {"ARRAY_INTERSECT", true, EvArrayIntersect}},
    {"ARRAY_UNION", 2, 2, RuleArrays, {"ARRAY_UNION", true, EvArrayUnion}},
    {"ARRAY_TO_STRING", 2, 3, RuleArrayToString, {"ARRAY_TO_STRING", false, EvArrayToString}},
    {"ARRAY_JOIN", 2, 3, RuleArrayToString, {"ARRAY_JOIN", false, EvArrayToString}},
    {"ARRAY_INSERT", 3, 3, RuleArrayInsert, {"ARRAY_INSERT", false, EvArrayInsert}},
    {"ARRAY_REPEAT", 2, 2, RuleArrayRepeat, {"ARRAY_REPEAT", false, EvArrayRepeat}},
    {"ARRAY_EXISTS", 2, 2, RuleLambda, {"ARRAY_EXISTS", false, EvArrayExists}},
    {"TRANSFORM", 2, 2, RuleLambda, {"TRANSFORM", false, EvTransform}},
    {"SEQUENCE", 2, 2, RuleSequence, {"SEQUENCE", true, EvSequence}},
    // ---- VARIANT / JSON (PARSE_JSON, TO_JSON, TYPEOF, VARIANTNULL: binder.cc)
    {"JSON_OBJECT_KEYS", 1, 1, RuleJsonKeys, {"JSON_OBJECT_KEYS", true, EvJsonObjectKeys}},
    {"JSON_KEYS", 1, 1, RuleJsonKeys, {"JSON_KEYS", true, EvJsonKeys}},
    {"JSON_EACH_BIGINT", 1, 1, RuleJsonEach, {"JSON_EACH_BIGINT", true, EvJsonEach}},
    {"JSON_EACH_STRING", 1, 1, RuleJsonEach, {"JSON_EACH_STRING", true, EvJsonEach}},
    {"JSON_EACH_BOOLEAN", 1, 1, RuleJsonEach, {"JSON_EACH_BOOLEAN", true, EvJsonEach}},
    {"JSON_EACH_DATE", 1, 1, RuleJsonEach, {"JSON_EACH_DATE", true, EvJsonEach}},
    {"JSON_EACH_TIME", 1, 1, RuleJsonEach, {"JSON_EACH_TIME", true, EvJsonEach}},
    {"JSON_EACH_TIMESTAMP", 1, 1, RuleJsonEach, {"JSON_EACH_TIMESTAMP", true, EvJsonEach}},
    {"VARIANT_MERGE", 2, 2, RuleVariantMerge, {"VARIANT_MERGE", true, EvVariantMerge}},
    {"VARIANT_FILTER", 2, 2, RuleVariantLambda, {"VARIANT_FILTER", false, EvVariantFilter}},
    {"VARIANT_DEEP_FILTER", 2, 2, RuleVariantLambda, {"VARIANT_DEEP_FILTER", false, EvVariantDeepFilter}},
    {"VARIANT_MAP", 2, 2, RuleVariantLambda, {"VARIANT_MAP", false, EvVariantMap}},
    {"VARIANT_DEEP_MAP", 2, 2, RuleVariantLambda, {"VARIANT_DEEP_MAP", false, EvVariantDeepMap}},
};

const ScalarFunction kFieldFn{"$FIELD", true, EvField};

}  // namespace

const FunctionDef* FindFunction(std::string_view upper_name) {
  for (const FunctionDef& f : kFunctions)
    if (f.name == upper_name) return &f;
  return nullptr;
}

BoundExprPtr BindLibraryCall(const Binder& b, const FunctionDef& def, const sql::Expr& call,
                             std::vector<BoundExprPtr> args) {
  const int n = static_cast<int>(args.size());
  if (n < def.min_args || (def.max_args >= 0 && n > def.max_args)) {
    std::string want = def.max_args < 0               ? fmt::format("at least {}", def.min_args)
                       : def.min_args == def.max_args ? fmt::format("{}", def.min_args)
                                                      : fmt::format("{} to {}", def.min_args, def.max_args);
    b.ctx().Error(call.pos, fmt::format("{} takes {} argument{}, not {}", def.name, want,
                                        def.max_args == 1 && def.min_args == 1 ? "" : "s", n));
  }
  return def.bind(b, def, call, std::move(args));
}

void RefuseUnsupported(const Binder& b, const sql::Expr& call) {
  const FunctionDef* def = FindFunction(call.name);
  if (def && def->bind == RuleRefuse) RuleRefuse(b, *def, call, {});
}

BoundExprPtr RowField(BoundExprPtr row, size_t i) {
  const SqlType t = row->type;
  SqlType ft = (*t.fields)[i].WithNullable((*t.fields)[i].nullable || t.nullable);
  std::vector<BoundExprPtr> args;
  args.push_back(std::move(row));
  auto e = MakeCall(ExprOp::kCall, ft, std::move(args));
  e->function = &kFieldFn;
  e->column_index = static_cast<int>(i);
  return e;
}

BoundExprPtr BindFieldAccess(const Binder& b, BoundExprPtr row, std::string_view field, sql::Pos pos) {
  const SqlType& t = row->type;
  if (t.id != TypeId::kRow)
    b.ctx().Error(pos, fmt::format("'.{}' needs a ROW or a VARIANT value, not {}", field, TypeName(t)));
  for (size_t i = 0; i < t.fields->size(); ++i)
    if (EqualsIgnoreCase(t.FieldName(i), field)) return RowField(std::move(row), i);
  std::string names;
  for (size_t i = 0; i < t.fields->size(); ++i) names += (i ? ", " : "") + t.FieldName(i);
  b.ctx().Error(pos, fmt::format("{} has no field '{}' (fields: {})", TypeName(t), field, names));
}

}  // namespace fld::plan
