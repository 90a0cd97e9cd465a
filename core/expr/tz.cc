#include "core/expr/tz.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/expr/time.h"
#include "core/types/types.h"

namespace fld {

namespace {

constexpr int64_t kDay = 86400;

bool IsLeap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int DaysInMonth(int64_t y, int m) {
  static const int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// A small cursor over a POSIX-TZ string.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool AtEnd() const { return i >= s.size(); }
  char Peek() const { return AtEnd() ? '\0' : s[i]; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++i;
    return true;
  }
  // Digits as a number (at most `max_digits`), or -1 when there are none.
  int64_t Number(int max_digits) {
    int64_t v = 0;
    int n = 0;
    while (n < max_digits && Peek() >= '0' && Peek() <= '9') {
      v = v * 10 + (s[i++] - '0');
      ++n;
    }
    return n == 0 ? -1 : v;
  }
};

// A zone abbreviation: <...> (letters, digits, + and -) or at least three letters.
bool ParseName(Cursor& c) {
  if (c.Eat('<')) {
    size_t n = 0;
    while (!c.AtEnd() && c.Peek() != '>') {
      const char ch = c.Peek();
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '+' && ch != '-') return false;
      ++c.i;
      ++n;
    }
    return c.Eat('>') && n >= 3;
  }
  size_t n = 0;
  while (std::isalpha(static_cast<unsigned char>(c.Peek()))) {
    ++c.i;
    ++n;
  }
  return n >= 3;
}

// [+-]hh[:mm[:ss]] in seconds, hours up to max_hours.
std::optional<int32_t> ParseHms(Cursor& c, int max_hours) {
  int sign = 1;
  if (c.Eat('-'))
    sign = -1;
  else
    c.Eat('+');
  const int64_t h = c.Number(3);
  if (h < 0 || h > max_hours) return std::nullopt;
  int64_t m = 0, sec = 0;
  if (c.Eat(':')) {
    m = c.Number(2);
    if (m < 0 || m > 59) return std::nullopt;
    if (c.Eat(':')) {
      sec = c.Number(2);
      if (sec < 0 || sec > 59) return std::nullopt;
    }
  }
  return static_cast<int32_t>(sign * (h * 3600 + m * 60 + sec));
}

std::optional<PosixTzRule::Date> ParseDate(Cursor& c) {
  PosixTzRule::Date d;
  using K = PosixTzRule::Date::Kind;
  if (c.Eat('M')) {
    d.kind = K::kMonthWeekDay;
    d.month = static_cast<int>(c.Number(2));
    if (d.month < 1 || d.month > 12 || !c.Eat('.')) return std::nullopt;
    d.week = static_cast<int>(c.Number(1));
    if (d.week < 1 || d.week > 5 || !c.Eat('.')) return std::nullopt;
    d.day = static_cast<int>(c.Number(1));
    if (d.day < 0 || d.day > 6) return std::nullopt;
  } else if (c.Eat('J')) {
    d.kind = K::kJulian1;
    d.day = static_cast<int>(c.Number(3));
    if (d.day < 1 || d.day > 365) return std::nullopt;
  } else {
    d.kind = K::kJulian0;
    d.day = static_cast<int>(c.Number(3));
    if (d.day < 0 || d.day > 365) return std::nullopt;
  }
  d.time = 7200;
  if (c.Eat('/')) {
    auto t = ParseHms(c, 167);  // RFC 8536 allows -167..167 hours
    if (!t) return std::nullopt;
    d.time = *t;
  }
  return d;
}

// The day (since 1970-01-01) a rule date falls on in year y.
int64_t DayOf(const PosixTzRule::Date& d, int64_t y) {
  const int64_t jan1 = DaysFromCivil(y, 1, 1);
  using K = PosixTzRule::Date::Kind;
  switch (d.kind) {
    case K::kJulian1:
      return jan1 + d.day - 1 + (IsLeap(y) && d.day >= 60 ? 1 : 0);
    case K::kJulian0:
      return jan1 + d.day;
    case K::kMonthWeekDay: {
      const int64_t first = DaysFromCivil(y, static_cast<unsigned>(d.month), 1);
      const int64_t wday = ((first % 7) + 7 + 4) % 7;  // 1970-01-01 was a Thursday (4)
      int64_t mday = 1 + (d.day - wday + 7) % 7 + (d.week - 1) * 7;
      while (mday > DaysInMonth(y, d.month)) mday -= 7;
      return first + mday - 1;
    }
  }
  return jan1;
}

uint32_t Be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

int64_t Be64(const unsigned char* p) {
  return static_cast<int64_t>((uint64_t{Be32(p)} << 32) | uint64_t{Be32(p + 4)});
}

}  // namespace

std::optional<PosixTzRule> PosixTzRule::Parse(std::string_view s) {
  Cursor c{s};
  PosixTzRule r;
  if (!ParseName(c)) return std::nullopt;
  auto std_off = ParseHms(c, 24);
  if (!std_off) return std::nullopt;
  r.std_offset = -*std_off;
  if (c.AtEnd()) return r;
  if (!ParseName(c)) return std::nullopt;
  r.has_dst = true;
  r.dst_offset = r.std_offset + 3600;
  if (c.Peek() != ',' && !c.AtEnd()) {
    auto dst_off = ParseHms(c, 24);
    if (!dst_off) return std::nullopt;
    r.dst_offset = -*dst_off;
  }
  if (c.AtEnd()) {
    // No dates: the United States' rules since 2007, as glibc assumes.
    r.start = {Date::Kind::kMonthWeekDay, 0, 3, 2, 7200};
    r.end = {Date::Kind::kMonthWeekDay, 0, 11, 1, 7200};
    return r;
  }
  if (!c.Eat(',')) return std::nullopt;
  auto start = ParseDate(c);
  if (!start || !c.Eat(',')) return std::nullopt;
  auto end = ParseDate(c);
  if (!end || !c.AtEnd()) return std::nullopt;
  r.start = *start;
  r.end = *end;
  return r;
}

int32_t PosixTzRule::OffsetAt(int64_t t) const {
  if (!has_dst) return std_offset;
  int64_t y;
  unsigned m, d;
  CivilFromDays(FloorDiv(t + std_offset, kDay), &y, &m, &d);
  const int64_t s = DayOf(start, y) * kDay + start.time - std_offset;
  const int64_t e = DayOf(end, y) * kDay + end.time - dst_offset;
  const bool dst = s < e ? (s <= t && t < e) : !(e <= t && t < s);
  return dst ? dst_offset : std_offset;
}

TimeZone TimeZone::Fixed(int32_t offset) {
  TimeZone z;
  z.initial_ = offset;
  return z;
}

std::optional<TimeZone> TimeZone::FromTzif(std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const size_t size = data.size();
  constexpr size_t kHeader = 44;
  struct Counts {
    uint32_t isut, isstd, leap, time, type, chars;
  };
  auto header = [&](size_t at, Counts* n) {
    if (at + kHeader > size || data.substr(at, 4) != "TZif") return false;
    const unsigned char* h = p + at + 20;
    *n = {Be32(h), Be32(h + 4), Be32(h + 8), Be32(h + 12), Be32(h + 16), Be32(h + 20)};
    return n->type >= 1 && n->type <= 256 && n->time <= 1000000 && n->leap <= 100000 && n->chars <= 100000 &&
           (n->isut == 0 || n->isut == n->type) && (n->isstd == 0 || n->isstd == n->type);
  };
  auto block_size = [](const Counts& n, size_t tsize) {
    return n.time * tsize + n.time + n.type * 6 + n.chars + n.leap * (tsize + 4) + n.isstd + n.isut;
  };
  Counts n;
  if (!header(0, &n)) return std::nullopt;
  const char version = data[4];
  size_t at = kHeader;
  size_t tsize = 4;
  if (version != '\0') {
    // Version 2+: skip the 32-bit block to the 64-bit one.
    at += block_size(n, 4);
    if (!header(at, &n)) return std::nullopt;
    at += kHeader;
    tsize = 8;
  }
  if (at + block_size(n, tsize) > size) return std::nullopt;
  TimeZone z;
  const unsigned char* times = p + at;
  const unsigned char* idx = times + n.time * tsize;
  const unsigned char* types = idx + n.time;
  std::vector<int32_t> utoff(n.type);
  for (uint32_t i = 0; i < n.type; ++i) utoff[i] = static_cast<int32_t>(Be32(types + 6 * i));
  for (uint32_t i = 0; i < n.time; ++i) {
    const int64_t t = tsize == 8 ? Be64(times + 8 * i) : static_cast<int32_t>(Be32(times + 4 * i));
    if (idx[i] >= n.type) return std::nullopt;
    if (!z.transitions_.empty() && t <= z.transitions_.back()) return std::nullopt;
    z.transitions_.push_back(t);
    z.offsets_.push_back(utoff[idx[i]]);
  }
  z.initial_ = utoff[0];  // RFC 8536: type 0 before the first transition
  at += block_size(n, tsize);
  if (tsize == 8 && at < size && data[at] == '\n') {
    const size_t nl = data.find('\n', at + 1);
    if (nl == std::string_view::npos) return std::nullopt;
    const std::string_view footer = data.substr(at + 1, nl - at - 1);
    if (!footer.empty()) {
      z.footer_ = PosixTzRule::Parse(footer);
      if (!z.footer_) return std::nullopt;
    }
  }
  return z;
}

int32_t TimeZone::OffsetAt(int64_t t) const {
  if (transitions_.empty()) return footer_ ? footer_->OffsetAt(t) : initial_;
  if (t < transitions_.front()) return initial_;
  if (footer_ && t > transitions_.back()) return footer_->OffsetAt(t);
  const size_t i =
      static_cast<size_t>(std::upper_bound(transitions_.begin(), transitions_.end(), t) - transitions_.begin()) - 1;
  return offsets_[i];
}

std::vector<int64_t> TimeZone::FromLocal(int64_t local) const {
  // Every instant whose local time is `local` lies within a day and two hours of it (no offset
  // is larger), so its offset is one of those in force over that span: try each.
  constexpr int64_t kReach = 26 * 3600;
  const int64_t lo = local - kReach, hi = local + kReach;
  std::vector<int32_t> cand{OffsetAt(lo)};
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), lo);
  for (; it != transitions_.end() && *it <= hi; ++it) cand.push_back(offsets_[it - transitions_.begin()]);
  if (footer_ && (transitions_.empty() || hi > transitions_.back())) {
    cand.push_back(footer_->std_offset);
    if (footer_->has_dst) cand.push_back(footer_->dst_offset);
  }
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
  std::vector<int64_t> out;
  for (int32_t o : cand)
    if (OffsetAt(local - o) == o) out.push_back(local - o);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<int32_t> ParseFixedOffset(std::string_view s) {
  // Exactly [+-]HH, [+-]HH:MM or [+-]HH:MM:SS.
  if (s.size() != 3 && s.size() != 6 && s.size() != 9) return std::nullopt;
  if (s[0] != '+' && s[0] != '-') return std::nullopt;
  int fields[3] = {0, 0, 0};
  for (size_t f = 0; f * 3 + 1 < s.size(); ++f) {
    const size_t at = f * 3 + 1;
    if (f > 0 && s[at - 1] != ':') return std::nullopt;
    if (!std::isdigit(static_cast<unsigned char>(s[at])) || !std::isdigit(static_cast<unsigned char>(s[at + 1])))
      return std::nullopt;
    fields[f] = (s[at] - '0') * 10 + (s[at + 1] - '0');
  }
  if (fields[0] > 23 || fields[1] > 59 || fields[2] > 59) return std::nullopt;
  const int32_t secs = fields[0] * 3600 + fields[1] * 60 + fields[2];
  return s[0] == '-' ? -secs : secs;
}

namespace {

// Whether `name` may name a file of the IANA tree: components of letters, digits, '_', '-', '+'
// and '.', none empty, "." or "..", and not the trees of other formats or the system's links.
bool IsZoneName(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  size_t start = 0;
  while (true) {
    const size_t slash = name.find('/', start);
    const std::string_view part = name.substr(start, slash == std::string_view::npos ? name.npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (char ch : part)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '+' && ch != '.')
        return false;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  for (std::string_view no : {"posix/", "right/"})
    if (name.substr(0, no.size()) == no) return false;
  return name != "posix" && name != "right" && name != "localtime" && name != "posixrules";
}

std::optional<TimeZone> LoadZone(const std::string& name) {
  if (!IsZoneName(name)) return std::nullopt;
  const char* env = std::getenv("TZDIR");
  std::string dir = env && *env ? env : "/usr/share/zoneinfo";
  std::ifstream f(dir + "/" + name, std::ios::binary);
  if (!f) return std::nullopt;
  std::string data;
  char buf[4096];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    data.append(buf, static_cast<size_t>(f.gcount()));
    if (data.size() > (1 << 20)) return std::nullopt;
  }
  if (f.bad()) return std::nullopt;
  return TimeZone::FromTzif(data);
}

}  // namespace

const TimeZone* FindTimeZone(std::string_view name) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::unique_ptr<TimeZone>> cache;
  std::lock_guard<std::mutex> lock(mu);
  std::string key(name);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second.get();
  std::unique_ptr<TimeZone> z;
  if (auto loaded = LoadZone(key))
    z = std::make_unique<TimeZone>(std::move(*loaded));
  else if (auto off = ParseFixedOffset(name))
    z = std::make_unique<TimeZone>(TimeZone::Fixed(*off));
  const TimeZone* r = z.get();
  // Unknown names are remembered too, but not without bound (they may come from data).
  if (r || cache.size() < 4096) cache.emplace(std::move(key), std::move(z));
  return r;
}

std::optional<int64_t> ConvertTimeZone(const TimeZone& from, const TimeZone& to, int64_t ts_micros) {
  const int64_t secs = FloorDiv(ts_micros, kMicrosPerSecond);
  const int64_t frac = ts_micros - secs * kMicrosPerSecond;
  const std::vector<int64_t> at = from.FromLocal(secs);
  if (at.size() != 1) return std::nullopt;
  return (at[0] + to.OffsetAt(at[0])) * kMicrosPerSecond + frac;
}

}  // namespace fld
