// Date, time and interval functions, as Feldera defines them (docs: "Date- and Time-Related
// Operations"): time units, EXTRACT, truncation and rounding up to a unit (FLOOR/CEIL ... TO,
// *_TRUNC), calendar arithmetic with months, TIMESTAMPDIFF, strftime-style formatting and
// parsing (FORMAT_*, PARSE_*; chrono's specifiers), interval literals and casts, and the bounds
// of TUMBLE/HOP windows.
//
// Values are in their physical form (core/types/types.h): DATE days, TIME and TIMESTAMP
// microseconds, day-time INTERVAL microseconds, year-month INTERVAL months. The calendar is the
// proleptic Gregorian one, without time zones.
//
// In a bound expression every function is one ExprOp::kTimeFunc node whose args[0] is an integer
// literal naming the TimeFn and its TimeUnit (MakeTimeCall); the operands follow. The binder
// (core/plan) checks the operand types, so evaluation never sees a unit a type does not have.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/expr/expr.h"

namespace fld {

enum class TimeUnit : uint8_t {
  kMicrosecond,
  kMillisecond,
  kSecond,
  kMinute,
  kHour,
  kDay,
  kWeek,
  kMonth,
  kQuarter,
  kYear,
  kDecade,
  kCentury,
  kMillennium,
  kDow,     // EXTRACT only: day of week, Sunday 1 .. Saturday 7
  kIsoDow,  // EXTRACT only: Monday 1 .. Sunday 7
  kDoy,     // EXTRACT only: day of year, 1 .. 366
  kEpoch,   // EXTRACT only: seconds since 1970-01-01
  kNanosecond,
};

// A unit's name as SQL writes it ("DAY", "DAYS", "SQL_TSI_DAY", "DOW" ...), upper case.
std::optional<TimeUnit> ParseTimeUnit(std::string_view upper);
const char* TimeUnitName(TimeUnit u);
// Units counted in microseconds (MICROSECOND .. WEEK) or in months (MONTH .. MILLENNIUM).
bool IsMicrosUnit(TimeUnit u);
bool IsMonthsUnit(TimeUnit u);
// Microseconds (micros units) or months (months units) in one unit.
int64_t UnitSize(TimeUnit u);

enum class TimeFn : uint8_t {
  kExtract,        // (x): EXTRACT(unit FROM x), x DATE/TIME/TIMESTAMP/INTERVAL -> BIGINT
  kTrunc,          // (x): FLOOR(x TO unit), DATE_TRUNC, TIMESTAMP_TRUNC, TIME_TRUNC
  kCeil,           // (x): CEIL(x TO unit)
  kAddMonths,      // (x, months): DATE/TIMESTAMP plus months, the day clamped to the month's last
  kDateAddMicros,  // (date, micros): plus the whole days of a day-time interval, rounded down
  kTimeAddMicros,  // (time, micros): wraps around midnight
  kDiff,           // (a, b): TIMESTAMPDIFF(unit, a, b), b - a in whole units -> INTEGER
  kDiffInterval,   // (a, b): (a - b) unit -> day-time (micros) or year-month (months) INTERVAL
  kFormat,         // (format, x) -> VARCHAR
  kParse,          // (format, text) -> the result type; NULL when the text does not match
  kWindowStart,    // (ts, size, offset): start of the window of `size` (aligned to offset) holding ts;
                   // with unit MONTH size and offset count months: windows start on the first of a
                   // month, offset + k * size months after 1970-01 (calendar-aligned)
  kIntervalMul,    // (interval, DOUBLE): truncated toward zero
  kIntervalDiv,    // (interval, DOUBLE): truncated toward zero; NULL when dividing by 0
};

// Months-sized windows: the month holding a TIMESTAMP (months since 1970-01, floored), and the
// TIMESTAMP at which a month given that way begins.
int64_t MonthIndexOf(int64_t ts_micros);
int64_t MonthStartMicros(int64_t month_index);

BoundExprPtr MakeTimeCall(TimeFn fn, TimeUnit unit, SqlType type, std::vector<BoundExprPtr> operands);
// The function of an ExprOp::kTimeFunc node.
TimeFn TimeFnOf(const BoundExpr& e);
// Evaluates an ExprOp::kTimeFunc node over b.
ColumnPtr EvaluateTimeFunc(const BoundExpr& e, const Batch& b);
// "EXTRACT(DAY FROM $0)", "FORMAT($0, $1)" ... for plans.
std::string TimeFuncToString(const BoundExpr& e);

// The text of `INTERVAL 'text' first [TO last]` ('10', '-1 2:03:04', '20-07', '80.001') as
// microseconds or months; false when it does not fit the fields.
bool ParseIntervalLiteral(std::string_view text, IntervalField first, IntervalField last, int64_t* out);
// Microseconds (day-time) or months (year-month) in one unit of an interval's field.
int64_t IntervalFieldSize(IntervalField f);
// CAST between an INTERVAL and an exact number (the value in the interval's last field) or
// another INTERVAL of its kind; throws fld::Error(kRuntime) otherwise.
Value CastInterval(const Value& v, const SqlType& from, const SqlType& to);

// Calendar helpers shared by the functions above (exposed for tests).
int64_t AddMonthsToDays(int64_t days, int64_t months);
int64_t FloorDiv(int64_t a, int64_t b);
// strftime-style formatting of a DATE/TIME/TIMESTAMP value; throws fld::Error(kRuntime) for an
// unknown specifier.
std::string FormatWithPattern(std::string_view format, const SqlType& type, int64_t v);
// Parses `text` with `format` into a value of `type` (DATE, TIME, TIMESTAMP). Returns false when
// the text does not match; throws fld::Error(kRuntime) when the format cannot give the type.
bool ParseWithPattern(std::string_view format, std::string_view text, const SqlType& type, int64_t* out);

}  // namespace fld
