#include "core/expr/time.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "core/common/error.h"

namespace fld {

namespace {

constexpr int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;
constexpr int64_t kMicrosPerHour = 60 * kMicrosPerMinute;

struct UnitName {
  std::string_view name;
  TimeUnit unit;
};

constexpr UnitName kUnitNames[] = {
    {"MICROSECOND", TimeUnit::kMicrosecond},
    {"MILLISECOND", TimeUnit::kMillisecond},
    {"SECOND", TimeUnit::kSecond},
    {"MINUTE", TimeUnit::kMinute},
    {"HOUR", TimeUnit::kHour},
    {"DAY", TimeUnit::kDay},
    {"WEEK", TimeUnit::kWeek},
    {"MONTH", TimeUnit::kMonth},
    {"QUARTER", TimeUnit::kQuarter},
    {"YEAR", TimeUnit::kYear},
    {"DECADE", TimeUnit::kDecade},
    {"CENTURY", TimeUnit::kCentury},
    {"MILLENNIUM", TimeUnit::kMillennium},
    {"DOW", TimeUnit::kDow},
    {"ISODOW", TimeUnit::kIsoDow},
    {"DOY", TimeUnit::kDoy},
    {"EPOCH", TimeUnit::kEpoch},
    {"NANOSECOND", TimeUnit::kNanosecond},
};

// Days since 1970-01-01 and microseconds into the day of a TIMESTAMP.
void SplitTimestamp(int64_t ts, int64_t* days, int64_t* tod) {
  *days = FloorDiv(ts, kMicrosPerDay);
  *tod = ts - *days * kMicrosPerDay;
}

unsigned DaysInMonth(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// Sunday 0 .. Saturday 6 (1970-01-01 was a Thursday).
int64_t WeekdaySunday0(int64_t days) {
  return ((days + 4) % 7 + 7) % 7;
}

int64_t IsoDow(int64_t days) {
  int64_t w = WeekdaySunday0(days);
  return w == 0 ? 7 : w;
}

// ISO-8601 week number and week-based year.
void IsoWeek(int64_t days, int64_t* week, int64_t* year) {
  int64_t thursday = days - (IsoDow(days) - 1) + 3;
  int64_t y;
  unsigned m, d;
  CivilFromDays(thursday, &y, &m, &d);
  *year = y;
  *week = (thursday - DaysFromCivil(y, 1, 1)) / 7 + 1;
}

int64_t DayOfYear(int64_t days) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  return days - DaysFromCivil(y, 1, 1) + 1;
}

[[noreturn]] void Overflow(const char* what) {
  Fail(ErrorKind::kRuntime, "integer overflow in {}", what);
}

int64_t CheckedAdd(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) Overflow(what);
  return r;
}

int64_t CheckedMul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) Overflow(what);
  return r;
}

// Days of the first day of the period (MONTH .. MILLENNIUM, WEEK) holding `days`.
int64_t TruncDays(int64_t days, TimeUnit unit) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  switch (unit) {
    case TimeUnit::kWeek:
      return days - (IsoDow(days) - 1);
    case TimeUnit::kMonth:
      return DaysFromCivil(y, m, 1);
    case TimeUnit::kQuarter:
      return DaysFromCivil(y, (m - 1) / 3 * 3 + 1, 1);
    case TimeUnit::kYear:
      return DaysFromCivil(y, 1, 1);
    case TimeUnit::kDecade:
      return DaysFromCivil(FloorDiv(y, 10) * 10, 1, 1);
    case TimeUnit::kCentury:  // centuries start at years ending in 01, as in PostgreSQL
      return DaysFromCivil(FloorDiv(y - 1, 100) * 100 + 1, 1, 1);
    case TimeUnit::kMillennium:
      return DaysFromCivil(FloorDiv(y - 1, 1000) * 1000 + 1, 1, 1);
    default:
      return days;
  }
}

// Truncation of a value of `type` (DATE days, TIME/TIMESTAMP microseconds).
int64_t Trunc(TypeId type, int64_t v, TimeUnit unit) {
  if (type == TypeId::kDate) return IsMicrosUnit(unit) && unit != TimeUnit::kWeek ? v : TruncDays(v, unit);
  if (IsMicrosUnit(unit) && unit != TimeUnit::kWeek) return FloorDiv(v, UnitSize(unit)) * UnitSize(unit);
  if (type == TypeId::kTime) return 0;
  int64_t days, tod;
  SplitTimestamp(v, &days, &tod);
  return TruncDays(days, unit) * kMicrosPerDay;
}

// One unit later than `v` (a truncated value).
int64_t AddUnit(TypeId type, int64_t v, TimeUnit unit) {
  if (type == TypeId::kDate) {
    if (unit == TimeUnit::kWeek) return v + 7;
    if (IsMonthsUnit(unit)) return AddMonthsToDays(v, UnitSize(unit));
    return v;
  }
  if (IsMicrosUnit(unit)) {
    int64_t r = CheckedAdd(v, UnitSize(unit), "CEIL");
    return type == TypeId::kTime ? r % kMicrosPerDay : r;
  }
  int64_t days, tod;
  SplitTimestamp(v, &days, &tod);
  return AddMonthsToDays(days, UnitSize(unit)) * kMicrosPerDay + tod;
}

int64_t Extract(TypeId type, int64_t v, TimeUnit unit) {
  if (type == TypeId::kIntervalDayTime) {
    switch (unit) {
      case TimeUnit::kDay:
        return v / kMicrosPerDay;
      case TimeUnit::kHour:
        return (v / kMicrosPerHour) % 24;
      case TimeUnit::kMinute:
        return (v / kMicrosPerMinute) % 60;
      case TimeUnit::kSecond:
        return (v / kMicrosPerSecond) % 60;
      case TimeUnit::kMillisecond:
        return (v / 1000) % 60000;
      case TimeUnit::kMicrosecond:
        return v % kMicrosPerMinute;
      case TimeUnit::kEpoch:
        return v / kMicrosPerSecond;
      default:
        return 0;
    }
  }
  if (type == TypeId::kIntervalYearMonth) {
    switch (unit) {
      case TimeUnit::kYear:
        return v / 12;
      case TimeUnit::kMonth:
        return v % 12;
      case TimeUnit::kQuarter:
        return v % 12 / 3 + 1;
      case TimeUnit::kDecade:
        return v / 120;
      case TimeUnit::kCentury:
        return v / 1200;
      case TimeUnit::kMillennium:
        return v / 12000;
      default:
        return 0;
    }
  }
  int64_t days = 0, tod = 0;
  if (type == TypeId::kDate)
    days = v;
  else if (type == TypeId::kTime)
    tod = v;
  else
    SplitTimestamp(v, &days, &tod);
  switch (unit) {
    case TimeUnit::kMicrosecond:
      return tod % kMicrosPerMinute;
    case TimeUnit::kNanosecond:
      return tod % kMicrosPerMinute * 1000;
    case TimeUnit::kMillisecond:
      return tod % kMicrosPerMinute / 1000;
    case TimeUnit::kSecond:
      return tod / kMicrosPerSecond % 60;
    case TimeUnit::kMinute:
      return tod / kMicrosPerMinute % 60;
    case TimeUnit::kHour:
      return tod / kMicrosPerHour;
    case TimeUnit::kEpoch:
      if (type == TypeId::kDate) return v * 86400;
      if (type == TypeId::kTime) return tod / kMicrosPerSecond;
      return FloorDiv(v, kMicrosPerSecond);
    case TimeUnit::kDow:
      return WeekdaySunday0(days) + 1;
    case TimeUnit::kIsoDow:
      return IsoDow(days);
    case TimeUnit::kDoy:
      return DayOfYear(days);
    case TimeUnit::kWeek: {
      int64_t w, y;
      IsoWeek(days, &w, &y);
      return w;
    }
    default:
      break;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  switch (unit) {
    case TimeUnit::kDay:
      return d;
    case TimeUnit::kMonth:
      return m;
    case TimeUnit::kQuarter:
      return (m - 1) / 3 + 1;
    case TimeUnit::kYear:
      return y;
    case TimeUnit::kDecade:
      return FloorDiv(y, 10);
    case TimeUnit::kCentury:
      return y > 0 ? (y + 99) / 100 : -((99 - y) / 100);
    case TimeUnit::kMillennium:
      return y > 0 ? (y + 999) / 1000 : -((999 - y) / 1000);
    default:
      return 0;
  }
}

// Microseconds of a DATE/TIME/TIMESTAMP value on one time line (DATE at midnight).
int64_t AsMicros(TypeId type, int64_t v) {
  return type == TypeId::kDate ? CheckedMul(v, kMicrosPerDay, "date arithmetic") : v;
}

// Whole months from a to b (microseconds): a month has elapsed when the calendar month has
// advanced and the day and time of day are at least a's.
int64_t MonthsBetween(int64_t a, int64_t b) {
  int64_t da, ta, db, tb;
  SplitTimestamp(a, &da, &ta);
  SplitTimestamp(b, &db, &tb);
  int64_t ya, yb;
  unsigned ma, mb, dda, ddb;
  CivilFromDays(da, &ya, &ma, &dda);
  CivilFromDays(db, &yb, &mb, &ddb);
  int64_t months = (yb * 12 + mb) - (ya * 12 + ma);
  auto before = [](unsigned d1, int64_t t1, unsigned d2, int64_t t2) { return d1 < d2 || (d1 == d2 && t1 < t2); };
  if (months > 0 && before(ddb, tb, dda, ta)) --months;
  if (months < 0 && before(dda, ta, ddb, tb)) ++months;
  return months;
}

// ---- strftime-style formatting ----

const char* const kMonthNames[] = {"January", "February", "March",     "April",   "May",      "June",
                                   "July",    "August",   "September", "October", "November", "December"};
const char* const kDayNames[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

struct Broken {
  int64_t days = 0, tod = 0;
  int64_t year = 1970;
  unsigned month = 1, day = 1;
};

Broken Break(TypeId type, int64_t v) {
  Broken b;
  if (type == TypeId::kDate)
    b.days = v;
  else if (type == TypeId::kTime)
    b.tod = v;
  else
    SplitTimestamp(v, &b.days, &b.tod);
  CivilFromDays(b.days, &b.year, &b.month, &b.day);
  return b;
}

void Num(std::string* out, int64_t v, int width, char pad) {
  if (pad == 0 || width <= 1) {
    *out += fmt::format("{}", v);
  } else if (pad == '0') {
    *out += v < 0 ? fmt::format("-{:0{}}", -v, width - 1) : fmt::format("{:0{}}", v, width);
  } else {
    *out += fmt::format("{:>{}}", v, width);
  }
}

// Nanosecond digits of the fraction of a second: `digits` of them (3, 6, 9), or the fewest of
// 3/6/9 that show it exactly (0 when it is 0) for digits = -1.
std::string Fraction(int64_t tod, int digits) {
  int64_t nanos = tod % kMicrosPerSecond * 1000;
  if (digits < 0) {
    if (nanos == 0) return "";
    digits = nanos % 1000000 == 0 ? 3 : nanos % 1000 == 0 ? 6 : 9;
  }
  return fmt::format("{:09}", nanos).substr(0, digits);
}

}  // namespace

std::optional<TimeUnit> ParseTimeUnit(std::string_view upper) {
  if (upper.starts_with("SQL_TSI_")) upper.remove_prefix(8);
  for (const auto& [name, unit] : kUnitNames) {
    if (upper == name) return unit;
    // Plurals: DAYS, SECONDS, MILLENNIA is not a thing here.
    if (upper.size() == name.size() + 1 && upper.back() == 'S' && upper.starts_with(name)) return unit;
  }
  if (upper == "MILLENNIA") return TimeUnit::kMillennium;
  if (upper == "CENTURIES") return TimeUnit::kCentury;
  return std::nullopt;
}

const char* TimeUnitName(TimeUnit u) {
  for (const auto& [name, unit] : kUnitNames)
    if (unit == u) return name.data();
  return "?";
}

bool IsMicrosUnit(TimeUnit u) {
  return u <= TimeUnit::kWeek;
}

bool IsMonthsUnit(TimeUnit u) {
  return u >= TimeUnit::kMonth && u <= TimeUnit::kMillennium;
}

int64_t UnitSize(TimeUnit u) {
  switch (u) {
    case TimeUnit::kMicrosecond:
      return 1;
    case TimeUnit::kMillisecond:
      return 1000;
    case TimeUnit::kSecond:
      return kMicrosPerSecond;
    case TimeUnit::kMinute:
      return kMicrosPerMinute;
    case TimeUnit::kHour:
      return kMicrosPerHour;
    case TimeUnit::kDay:
      return kMicrosPerDay;
    case TimeUnit::kWeek:
      return 7 * kMicrosPerDay;
    case TimeUnit::kMonth:
      return 1;
    case TimeUnit::kQuarter:
      return 3;
    case TimeUnit::kYear:
      return 12;
    case TimeUnit::kDecade:
      return 120;
    case TimeUnit::kCentury:
      return 1200;
    case TimeUnit::kMillennium:
      return 12000;
    default:
      return 1;
  }
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t AddMonthsToDays(int64_t days, int64_t months) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  int64_t total = CheckedAdd(y * 12 + (m - 1), months, "month arithmetic");
  int64_t ny = FloorDiv(total, 12);
  unsigned nm = static_cast<unsigned>(total - ny * 12) + 1;
  return DaysFromCivil(ny, nm, std::min(d, DaysInMonth(ny, nm)));
}

int64_t MonthIndexOf(int64_t ts_micros) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(FloorDiv(ts_micros, kMicrosPerDay), &y, &m, &d);
  return (y - 1970) * 12 + (m - 1);
}

int64_t MonthStartMicros(int64_t month_index) {
  const int64_t y = 1970 + FloorDiv(month_index, 12);
  const unsigned m = static_cast<unsigned>(month_index - FloorDiv(month_index, 12) * 12) + 1;
  return CheckedMul(DaysFromCivil(y, m, 1), kMicrosPerDay, "window bounds");
}

int64_t IntervalFieldSize(IntervalField f) {
  switch (f) {
    case IntervalField::kSecond:
      return kMicrosPerSecond;
    case IntervalField::kMinute:
      return kMicrosPerMinute;
    case IntervalField::kHour:
      return kMicrosPerHour;
    case IntervalField::kDay:
      return kMicrosPerDay;
    case IntervalField::kMonth:
      return 1;
    case IntervalField::kYear:
      return 12;
  }
  return 1;
}

bool ParseIntervalLiteral(std::string_view text, IntervalField first, IntervalField last, int64_t* out) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  bool neg = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    neg = text.front() == '-';
    text.remove_prefix(1);
  }
  __int128 total = 0;
  size_t i = 0;
  for (int f = static_cast<int>(first); f >= static_cast<int>(last); --f) {
    const IntervalField field = static_cast<IntervalField>(f);
    if (f != static_cast<int>(first)) {
      // The separator before this field: 'Y-M', 'D H', 'H:M:S'.
      char sep = field == IntervalField::kMonth ? '-' : field == IntervalField::kHour ? ' ' : ':';
      if (i >= text.size() || text[i] != sep) return false;
      ++i;
      while (sep == ' ' && i < text.size() && text[i] == ' ') ++i;
    }
    size_t start = i;
    int64_t v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (v > 1000000000000LL) return false;
      v = v * 10 + (text[i++] - '0');
    }
    if (i == start) return false;
    total += static_cast<__int128>(v) * IntervalFieldSize(field);
    if (field == IntervalField::kSecond && i < text.size() && text[i] == '.') {
      ++i;
      int64_t frac = 0, scale = kMicrosPerSecond;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        if (scale > 1) {
          scale /= 10;
          frac += (text[i] - '0') * scale;
        }
        ++i;
      }
      total += frac;
    }
  }
  if (i != text.size() || total > INT64_MAX) return false;
  *out = neg ? -static_cast<int64_t>(total) : static_cast<int64_t>(total);
  return true;
}

Value CastInterval(const Value& v, const SqlType& from, const SqlType& to) {
  if (v.IsNull()) return v;
  auto bad = [&]() -> Value {
    Fail(ErrorKind::kRuntime, "cannot cast {} to {}", from.WithNullable(true).ToString(),
         to.WithNullable(true).ToString());
  };
  if (from.IsInterval() && to.IsInterval()) return from.id == to.id ? v : bad();
  if (from.IsInterval()) {
    if (!to.IsInteger() && to.id != TypeId::kDecimal) return bad();
    int64_t n = v.i / IntervalFieldSize(static_cast<IntervalField>(from.scale));
    return CastValue(Value::Int(n), SqlType::Of(TypeId::kBigInt), to);
  }
  if (!from.IsExactNumeric()) return bad();
  Value n = CastValue(v, from, SqlType::Of(TypeId::kBigInt));
  return Value::Int(CheckedMul(n.i, IntervalFieldSize(static_cast<IntervalField>(to.scale)), "CAST"));
}

std::string FormatWithPattern(std::string_view format, const SqlType& type, int64_t v) {
  const Broken b = Break(type.id, v);
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    if (++i >= format.size()) Fail(ErrorKind::kRuntime, "format '{}' ends with '%'", format);
    char pad = 1;  // 1: the specifier's default padding
    if (format[i] == '-' || format[i] == '_' || format[i] == '0') {
      pad = format[i] == '-' ? 0 : format[i] == '_' ? ' ' : '0';
      if (++i >= format.size()) Fail(ErrorKind::kRuntime, "format '{}' ends in a specifier", format);
    }
    auto num = [&](int64_t x, int width, char dflt) { Num(&out, x, width, pad == 1 ? dflt : pad); };
    const int64_t hour = b.tod / kMicrosPerHour, minute = b.tod / kMicrosPerMinute % 60,
                  second = b.tod / kMicrosPerSecond % 60;
    const int64_t hour12 = hour % 12 == 0 ? 12 : hour % 12;
    const int64_t wday = WeekdaySunday0(b.days), yday = DayOfYear(b.days) - 1;
    char spec = format[i];
    if (spec == '.' || (spec >= '1' && spec <= '9')) {
      // %.f, %.3f, %.6f, %.9f, %3f, %6f, %9f
      bool dot = spec == '.';
      if (dot && ++i >= format.size()) Fail(ErrorKind::kRuntime, "format '{}' ends in a specifier", format);
      int digits = -1;
      if (format[i] >= '1' && format[i] <= '9') digits = format[i++] - '0';
      if (i >= format.size() || format[i] != 'f' || (digits != -1 && digits != 3 && digits != 6 && digits != 9) ||
          (!dot && digits < 0))
        Fail(ErrorKind::kRuntime, "unsupported format specifier in '{}'", format);
      std::string f = Fraction(b.tod, digits);
      if (dot && !f.empty()) out.push_back('.');
      out += f;
      continue;
    }
    switch (spec) {
      case 'Y':
        if (b.year < 0 || b.year > 9999) out += b.year < 0 ? "-" : "+";
        num(b.year < 0 ? -b.year : b.year, 4, '0');
        break;
      case 'C':
        num(FloorDiv(b.year, 100), 2, '0');
        break;
      case 'y':
        num(((b.year % 100) + 100) % 100, 2, '0');
        break;
      case 'm':
        num(b.month, 2, '0');
        break;
      case 'b':
      case 'h':
        out += std::string_view(kMonthNames[b.month - 1]).substr(0, 3);
        break;
      case 'B':
        out += kMonthNames[b.month - 1];
        break;
      case 'd':
        num(b.day, 2, '0');
        break;
      case 'e':
        num(b.day, 2, ' ');
        break;
      case 'a':
        out += std::string_view(kDayNames[wday]).substr(0, 3);
        break;
      case 'A':
        out += kDayNames[wday];
        break;
      case 'w':
        num(wday, 1, 0);
        break;
      case 'u':
        num(IsoDow(b.days), 1, 0);
        break;
      case 'U':
        num((yday + 7 - wday) / 7, 2, '0');
        break;
      case 'W':
        num((yday + 7 - (wday + 6) % 7) / 7, 2, '0');
        break;
      case 'G':
      case 'g':
      case 'V': {
        int64_t w, y;
        IsoWeek(b.days, &w, &y);
        if (spec == 'V')
          num(w, 2, '0');
        else if (spec == 'G')
          num(y, 4, '0');
        else
          num(((y % 100) + 100) % 100, 2, '0');
        break;
      }
      case 'j':
        num(yday + 1, 3, '0');
        break;
      case 'D':
        out += FormatWithPattern("%m/%d/%y", type, v);
        break;
      case 'x':
        out += FormatWithPattern("%m/%d/%y", type, v);
        break;
      case 'F':
        out += FormatWithPattern("%Y-%m-%d", type, v);
        break;
      case 'H':
        num(hour, 2, '0');
        break;
      case 'k':
        num(hour, 2, ' ');
        break;
      case 'I':
        num(hour12, 2, '0');
        break;
      case 'l':
        num(hour12, 2, ' ');
        break;
      case 'P':
        out += hour < 12 ? "am" : "pm";
        break;
      case 'p':
        out += hour < 12 ? "AM" : "PM";
        break;
      case 'M':
        num(minute, 2, '0');
        break;
      case 'S':
        num(second, 2, '0');
        break;
      case 'f':
        out += fmt::format("{:09}", b.tod % kMicrosPerSecond * 1000);
        break;
      case 'R':
        out += FormatWithPattern("%H:%M", type, v);
        break;
      case 'T':
      case 'X':
        out += FormatWithPattern("%H:%M:%S", type, v);
        break;
      case 'r':
        out += FormatWithPattern("%I:%M:%S %p", type, v);
        break;
      case 'c':
        out += FormatWithPattern("%a %b %e %H:%M:%S %Y", type, v);
        break;
      case 's':
        num(type.id == TypeId::kDate ? b.days * 86400 : FloorDiv(v, kMicrosPerSecond), 1, 0);
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case '%':
        out.push_back('%');
        break;
      default:
        Fail(ErrorKind::kRuntime, "unsupported format specifier '%{}' in '{}'", spec, format);
    }
  }
  return out;
}

bool ParseWithPattern(std::string_view format, std::string_view text, const SqlType& type, int64_t* out) {
  std::optional<int64_t> year, month, day, doy, hour, hour12, minute, second, nanos;
  std::optional<bool> pm;
  size_t t = 0;
  bool ok = true;  // false once the text stops matching (the format is still checked to its end)
  auto number = [&](int max_digits, bool sign) -> std::optional<int64_t> {
    if (!ok) return 0;
    bool neg = false;
    if (sign && t < text.size() && (text[t] == '-' || text[t] == '+')) neg = text[t++] == '-';
    size_t start = t;
    int64_t v = 0;
    while (t < text.size() && t - start < static_cast<size_t>(max_digits) &&
           std::isdigit(static_cast<unsigned char>(text[t])))
      v = v * 10 + (text[t++] - '0');
    if (t == start) {
      ok = false;
      return 0;
    }
    return neg ? -v : v;
  };
  auto name = [&](const char* const* names, int count) -> int64_t {
    if (!ok) return 0;
    for (int k = 0; k < count; ++k) {
      std::string_view full = names[k];
      for (size_t len : {full.size(), size_t{3}}) {
        if (t + len > text.size()) continue;
        bool same = true;
        for (size_t j = 0; j < len && same; ++j)
          same = std::toupper(static_cast<unsigned char>(text[t + j])) == std::toupper(full[j]);
        if (same) {
          t += len;
          return k;
        }
      }
    }
    ok = false;
    return 0;
  };
  std::string expanded;
  for (size_t i = 0; i < format.size(); ++i) {
    // %F, %T, %R, %D expand to their parts.
    if (format[i] == '%' && i + 1 < format.size()) {
      char s = format[i + 1];
      const char* sub = s == 'F'   ? "%Y-%m-%d"
                        : s == 'T' ? "%H:%M:%S"
                        : s == 'R' ? "%H:%M"
                        : s == 'D' ? "%m/%d/%y"
                                   : nullptr;
      if (sub) {
        expanded += sub;
        ++i;
        continue;
      }
      expanded += format[i];
      expanded += format[++i];
      continue;
    }
    expanded += format[i];
  }
  format = expanded;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      while (t < text.size() && std::isspace(static_cast<unsigned char>(text[t]))) ++t;
      continue;
    }
    if (c != '%') {
      if (ok && (t >= text.size() || text[t] != c)) ok = false;
      if (ok) ++t;
      continue;
    }
    if (++i >= format.size()) Fail(ErrorKind::kRuntime, "format '{}' ends with '%'", format);
    char spec = format[i];
    if (spec == '-' || spec == '_' || spec == '0') {
      if (++i >= format.size()) Fail(ErrorKind::kRuntime, "format '{}' ends in a specifier", format);
      spec = format[i];
    }
    switch (spec) {
      case 'Y':
        year = number(9, true);
        break;
      case 'y': {
        int64_t y = number(2, false).value_or(0);
        year = y < 69 ? 2000 + y : 1900 + y;
        break;
      }
      case 'm':
        month = number(2, false);
        break;
      case 'd':
      case 'e':
        if (ok && t < text.size() && text[t] == ' ') ++t;
        day = number(2, false);
        break;
      case 'j':
        doy = number(3, false);
        break;
      case 'b':
      case 'h':
      case 'B':
        month = name(kMonthNames, 12) + 1;
        break;
      case 'a':
      case 'A':
        name(kDayNames, 7);
        break;
      case 'H':
      case 'k':
        if (ok && t < text.size() && text[t] == ' ') ++t;
        hour = number(2, false);
        break;
      case 'I':
      case 'l':
        if (ok && t < text.size() && text[t] == ' ') ++t;
        hour12 = number(2, false);
        break;
      case 'p':
      case 'P': {
        static const char* const kAmPm[] = {"AM", "PM"};
        pm = name(kAmPm, 2) == 1;
        break;
      }
      case 'M':
        minute = number(2, false);
        break;
      case 'S':
        second = number(2, false);
        break;
      case 'f':
      case '.': {
        if (spec == '.') {
          while (i + 1 < format.size() && std::isdigit(static_cast<unsigned char>(format[i + 1]))) ++i;
          if (i + 1 >= format.size() || format[i + 1] != 'f')
            Fail(ErrorKind::kRuntime, "unsupported format specifier in '{}'", format);
          ++i;
          // The dot and its fraction are optional.
          if (!ok || t >= text.size() || text[t] != '.') break;
          ++t;
        }
        size_t start = t;
        int64_t v = 0;
        while (ok && t < text.size() && std::isdigit(static_cast<unsigned char>(text[t]))) {
          if (t - start < 9) v = v * 10 + (text[t] - '0');
          ++t;
        }
        if (ok && t == start) ok = false;
        for (size_t k = t - start; k < 9; ++k) v *= 10;
        nanos = v;
        break;
      }
      case '%':
        if (ok && (t >= text.size() || text[t] != '%')) ok = false;
        if (ok) ++t;
        break;
      default:
        Fail(ErrorKind::kRuntime, "unsupported format specifier '%{}' in '{}'", spec, format);
    }
  }
  const bool want_date = type.id != TypeId::kTime, want_time = type.id != TypeId::kDate;
  if (want_date && !(year && ((month && day) || doy)))
    Fail(ErrorKind::kRuntime, "format '{}' does not give a whole date (year, month and day)", format);
  if (want_time && !((hour || (hour12 && pm)) && minute))
    Fail(ErrorKind::kRuntime, "format '{}' does not give a time of day (hour and minute)", format);
  if (!ok || t != text.size()) return false;
  int64_t days = 0, tod = 0;
  if (want_date) {
    if (doy) {
      if (*doy < 1 || *doy > (DaysInMonth(*year, 2) == 29 ? 366 : 365)) return false;
      days = DaysFromCivil(*year, 1, 1) + *doy - 1;
    } else {
      if (*month < 1 || *month > 12 || *day < 1 || *day > DaysInMonth(*year, static_cast<unsigned>(*month)))
        return false;
      days = DaysFromCivil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day));
    }
  }
  if (want_time) {
    int64_t h = hour ? *hour : (*hour12 % 12) + (*pm ? 12 : 0);
    if (hour12 && (*hour12 < 1 || *hour12 > 12)) return false;
    int64_t s = second.value_or(0);
    if (h > 23 || *minute > 59 || s > 59) return false;
    tod = h * kMicrosPerHour + *minute * kMicrosPerMinute + s * kMicrosPerSecond + nanos.value_or(0) / 1000;
  }
  *out = type.id == TypeId::kDate ? days : type.id == TypeId::kTime ? tod : days * kMicrosPerDay + tod;
  return true;
}

BoundExprPtr MakeTimeCall(TimeFn fn, TimeUnit unit, SqlType type, std::vector<BoundExprPtr> operands) {
  std::vector<BoundExprPtr> args;
  args.push_back(MakeLiteral(Value::Int(static_cast<int64_t>(fn) * 256 + static_cast<int64_t>(unit)),
                             SqlType::Of(TypeId::kInteger, false)));
  for (auto& o : operands) args.push_back(std::move(o));
  return MakeCall(ExprOp::kTimeFunc, type, std::move(args));
}

TimeFn TimeFnOf(const BoundExpr& e) {
  return static_cast<TimeFn>(e.args[0]->literal.i / 256);
}

namespace {

TimeFn FnOf(const BoundExpr& e) {
  return static_cast<TimeFn>(e.args[0]->literal.i / 256);
}
TimeUnit UnitOf(const BoundExpr& e) {
  return static_cast<TimeUnit>(e.args[0]->literal.i % 256);
}

}  // namespace

std::string TimeFuncToString(const BoundExpr& e) {
  static const char* kNames[] = {"EXTRACT",      "TRUNC",        "CEIL",          "ADD_MONTHS", "DATE_ADD_MICROS",
                                 "TIME_ADD",     "DIFF",         "DIFF_INTERVAL", "FORMAT",     "PARSE",
                                 "WINDOW_START", "INTERVAL_MUL", "INTERVAL_DIV"};
  const TimeFn fn = FnOf(e);
  const bool unit = fn == TimeFn::kExtract || fn == TimeFn::kTrunc || fn == TimeFn::kCeil || fn == TimeFn::kDiff;
  std::string s = fmt::format("{}(", kNames[static_cast<int>(fn)]);
  if (unit) s += TimeUnitName(UnitOf(e));
  for (size_t i = 1; i < e.args.size(); ++i) s += (i > 1 || unit ? ", " : "") + e.args[i]->ToString();
  return s + ")";
}

ColumnPtr EvaluateTimeFunc(const BoundExpr& e, const Batch& b) {
  const size_t n = b.size();
  const TimeFn fn = FnOf(e);
  const TimeUnit unit = UnitOf(e);
  std::vector<ColumnPtr> in;
  for (size_t i = 1; i < e.args.size(); ++i) in.push_back(Evaluate(*e.args[i], b));
  auto out = std::make_shared<Column>(e.type.phys());
  if (out->phys == PhysType::kStr)
    out->str.resize(n);
  else
    out->i64.resize(n);
  out->nulls.assign(n, 0);
  for (size_t r = 0; r < n; ++r)
    for (const auto& c : in)
      if (c->IsNull(r)) out->nulls[r] = 1;
  const TypeId t0 = e.args.size() > 1 ? e.args[1]->type.id : TypeId::kNull;
  const TypeId t1 = e.args.size() > 2 ? e.args[2]->type.id : TypeId::kNull;
  for (size_t r = 0; r < n; ++r) {
    if (out->nulls[r]) continue;
    int64_t unused = 0;
    int64_t& res = out->phys == PhysType::kStr ? unused : out->i64[r];
    switch (fn) {
      case TimeFn::kExtract:
        res = Extract(t0, in[0]->i64[r], unit);
        break;
      case TimeFn::kTrunc:
        res = Trunc(t0, in[0]->i64[r], unit);
        break;
      case TimeFn::kCeil: {
        int64_t v = in[0]->i64[r], tr = Trunc(t0, v, unit);
        res = tr == v ? v : AddUnit(t0, tr, unit);
        break;
      }
      case TimeFn::kAddMonths: {
        int64_t v = in[0]->i64[r], months = in[1]->i64[r];
        if (t0 == TypeId::kTime) {
          res = v;
        } else if (t0 == TypeId::kDate) {
          res = AddMonthsToDays(v, months);
        } else {
          int64_t days, tod;
          SplitTimestamp(v, &days, &tod);
          res = CheckedAdd(CheckedMul(AddMonthsToDays(days, months), kMicrosPerDay, "+"), tod, "+");
        }
        break;
      }
      case TimeFn::kDateAddMicros:
        res = CheckedAdd(in[0]->i64[r], FloorDiv(in[1]->i64[r], kMicrosPerDay), "+");
        break;
      case TimeFn::kTimeAddMicros: {
        int64_t x = (in[0]->i64[r] + in[1]->i64[r] % kMicrosPerDay) % kMicrosPerDay;
        res = x < 0 ? x + kMicrosPerDay : x;
        break;
      }
      case TimeFn::kDiff: {
        int64_t a = AsMicros(t0, in[0]->i64[r]), c = AsMicros(t1, in[1]->i64[r]);
        int64_t d;
        if (IsMonthsUnit(unit)) {
          d = MonthsBetween(a, c) / UnitSize(unit);
        } else {
          __int128 diff = static_cast<__int128>(c) - a;
          d = static_cast<int64_t>(diff / UnitSize(unit));
        }
        if (d > INT32_MAX || d < INT32_MIN) Overflow("TIMESTAMPDIFF");
        res = d;
        break;
      }
      case TimeFn::kDiffInterval: {
        int64_t a = AsMicros(t0, in[0]->i64[r]), c = AsMicros(t1, in[1]->i64[r]);
        if (e.type.id == TypeId::kIntervalYearMonth) {
          res = MonthsBetween(c, a);
        } else {
          int64_t d;
          if (__builtin_sub_overflow(a, c, &d)) Overflow("-");
          res = d;
        }
        break;
      }
      case TimeFn::kFormat:
        out->str[r] = FormatWithPattern(in[0]->str[r], e.args[2]->type, in[1]->i64[r]);
        break;
      case TimeFn::kParse: {
        int64_t v;
        if (ParseWithPattern(in[0]->str[r], in[1]->str[r], e.type, &v))
          res = v;
        else
          out->nulls[r] = 1;
        break;
      }
      case TimeFn::kWindowStart: {
        int64_t size = in[1]->i64[r], offset = in[2]->i64[r];
        if (size <= 0) Fail(ErrorKind::kRuntime, "a window's size must be positive");
        if (unit == TimeUnit::kMonth)
          res = MonthStartMicros(FloorDiv(MonthIndexOf(in[0]->i64[r]) - offset, size) * size + offset);
        else
          res = FloorDiv(in[0]->i64[r] - offset, size) * size + offset;
        break;
      }
      case TimeFn::kIntervalMul:
      case TimeFn::kIntervalDiv: {
        double x = static_cast<double>(in[0]->i64[r]), f = in[1]->f64[r];
        if (fn == TimeFn::kIntervalDiv && f == 0) {
          out->nulls[r] = 1;
          break;
        }
        double v = std::trunc(fn == TimeFn::kIntervalMul ? x * f : x / f);
        if (!(v >= -9.2233720368547758e18 && v < 9.2233720368547758e18)) Overflow("interval arithmetic");
        res = static_cast<int64_t>(v);
        break;
      }
    }
  }
  out->CompactNulls();
  return out;
}

}  // namespace fld
