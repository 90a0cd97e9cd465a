// SQL types and scalar values.
//
// Every SQL type maps to one of three physical representations, which is what column vectors
// (core/zset/batch.h) store:
//   kI64: BOOLEAN (0/1), TINYINT..BIGINT, DECIMAL(p,s) with p <= 18 (the value times 10^s),
//         DATE (days since 1970-01-01), TIME (microseconds since midnight),
//         TIMESTAMP (microseconds since 1970-01-01 00:00:00, no time zone),
//         day-time INTERVALs (microseconds), year-month INTERVALs (months)
//   kF64: REAL, DOUBLE
//   kStr: CHAR(n), VARCHAR(n), VARCHAR; BINARY(n), VARBINARY(n) (the bytes themselves; text
//         forms are lower-case hex, JSON forms arrays of byte values, as Feldera writes them);
//         ROW(t1, t2, ...) (the fields in an order-preserving encoding, EncodeRowValue: comparing
//         two encodings as byte strings compares the rows field by field, NULL first, so MIN,
//         MAX, DISTINCT, GROUP BY and IS DISTINCT FROM work on them unchanged); t ARRAY
//         (EncodeArrayValue, ordered element by element, a prefix first);
//         DECIMAL(p,s) with 18 < p <= 38 (EncodeInt128: the value times 10^s as 16 big-endian
//         bytes, sign bit flipped, so byte order is numeric order);
//         MAP<K, V> (EncodeMapValue: the entries sorted by key, ordered as Feldera orders maps);
//         VARIANT (core/types/variant.h: a runtime type tag and the value, order-preserving);
//         GEOMETRY (a point: EncodeGeoPoint, ordered by x then y);
//         UUID (its 16 bytes, so byte order is PostgreSQL's and Feldera's uuid order)
// `Value` is a scalar in that physical form plus NULL; it is used for literals, keys of
// operator state and query results, never on the per-row path of an expression.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fld {

enum class TypeId : uint8_t {
  kNull = 0,  // the type of a bare NULL literal; unifies with anything
  kBoolean,
  kTinyInt,
  kSmallInt,
  kInteger,
  kBigInt,
  kDecimal,
  kReal,
  kDouble,
  kChar,
  kVarchar,
  kDate,
  kTime,
  kTimestamp,
  kBinary,     // BINARY(n): bytes (not padded to n)
  kVarbinary,  // VARBINARY(n), VARBINARY
  kRow,        // ROW(t1, t2, ...): `fields` holds the field types, `names` their names (when absent:
               // EXPR$0, EXPR$1 ...)
  kArray,      // t ARRAY: `fields` holds the one element type
  kMap,        // MAP<K, V>: `fields` holds the key type and the value type
  kVariant,    // VARIANT: a dynamically typed value (core/types/variant.h)
  // INTERVAL DAY/HOUR/MINUTE/SECOND and their ranges (DAY TO SECOND ...): microseconds.
  // `precision` and `scale` hold the first and last IntervalField; CAST to a number gives the value
  // in the last field's unit.
  kIntervalDayTime,
  kIntervalYearMonth,  // INTERVAL YEAR/MONTH, YEAR TO MONTH: months
  kGeometry,           // GEOMETRY: a point (x, y) of doubles, as Feldera's (ST_POINT)
  kUuid,               // UUID: 16 bytes, written 8-4-4-4-12 in lower-case hex
};

// The fields an INTERVAL type is declared with (`INTERVAL DAY TO MINUTE`), smallest first.
enum class IntervalField : uint8_t { kSecond = 0, kMinute, kHour, kDay, kMonth, kYear };

// DECIMAL precisions: up to 18 digits in an int64, up to 38 (Feldera's maximum) in 128 bits.
constexpr int kMaxDecimalPrecision = 38;
constexpr int kMaxNarrowDecimalPrecision = 18;

enum class PhysType : uint8_t { kI64 = 0, kF64 = 1, kStr = 2 };

struct SqlType {
  TypeId id = TypeId::kNull;
  int32_t precision = 0;  // DECIMAL precision
  int32_t scale = 0;      // DECIMAL scale
  int32_t length = -1;    // CHAR/VARCHAR/BINARY/VARBINARY length; -1 = unbounded
  bool nullable = true;
  std::shared_ptr<const std::vector<SqlType>> fields;  // ROW: the field types
  // ROW: the field names (CREATE TYPE t AS (a INT, ...), ROW(a INT, ...)); null: EXPR$0, ...
  std::shared_ptr<const std::vector<std::string>> names;

  static SqlType Of(TypeId id, bool nullable = true) {
    SqlType t;
    t.id = id;
    t.nullable = nullable;
    return t;
  }
  static SqlType Decimal(int p, int s, bool nullable = true) {
    SqlType t = Of(TypeId::kDecimal, nullable);
    t.precision = p;
    t.scale = s;
    return t;
  }

  PhysType phys() const {
    switch (id) {
      case TypeId::kReal:
      case TypeId::kDouble:
        return PhysType::kF64;
      case TypeId::kChar:
      case TypeId::kVarchar:
      case TypeId::kBinary:
      case TypeId::kVarbinary:
      case TypeId::kRow:
      case TypeId::kArray:
      case TypeId::kMap:
      case TypeId::kVariant:
      case TypeId::kGeometry:
      case TypeId::kUuid:
        return PhysType::kStr;
      case TypeId::kDecimal:
        return precision > kMaxNarrowDecimalPrecision ? PhysType::kStr : PhysType::kI64;
      default:
        return PhysType::kI64;
    }
  }
  bool IsInteger() const { return id >= TypeId::kTinyInt && id <= TypeId::kBigInt; }
  bool IsExactNumeric() const { return IsInteger() || id == TypeId::kDecimal; }
  bool IsNumeric() const { return IsExactNumeric() || IsFloat(); }
  bool IsFloat() const { return id == TypeId::kReal || id == TypeId::kDouble; }
  bool IsString() const { return id == TypeId::kChar || id == TypeId::kVarchar; }
  bool IsBinary() const { return id == TypeId::kBinary || id == TypeId::kVarbinary; }
  bool IsWideDecimal() const { return id == TypeId::kDecimal && precision > kMaxNarrowDecimalPrecision; }
  bool IsTemporal() const { return id == TypeId::kDate || id == TypeId::kTime || id == TypeId::kTimestamp; }
  bool IsInterval() const { return id == TypeId::kIntervalDayTime || id == TypeId::kIntervalYearMonth; }
  // INTERVAL `first` [TO `last`].
  static SqlType Interval(IntervalField first, IntervalField last, bool nullable = true) {
    SqlType t = Of(first >= IntervalField::kMonth ? TypeId::kIntervalYearMonth : TypeId::kIntervalDayTime, nullable);
    t.precision = static_cast<int32_t>(first);
    t.scale = static_cast<int32_t>(last);
    return t;
  }
  SqlType WithNullable(bool n) const {
    SqlType t = *this;
    t.nullable = n;
    return t;
  }
  // Same type ignoring nullability.
  bool SameAs(const SqlType& o) const {
    if (id != o.id || precision != o.precision || scale != o.scale || length != o.length) return false;
    if (id != TypeId::kRow && id != TypeId::kArray && id != TypeId::kMap) return true;
    if (fields->size() != o.fields->size()) return false;
    for (size_t i = 0; i < fields->size(); ++i)
      if (!(*fields)[i].SameAs((*o.fields)[i]) || (*fields)[i].nullable != (*o.fields)[i].nullable) return false;
    return true;
  }
  static SqlType Array(SqlType element, bool nullable = true) {
    SqlType t = Row({std::move(element)}, nullable);
    t.id = TypeId::kArray;
    return t;
  }
  static SqlType Map(SqlType key, SqlType value, bool nullable = true) {
    SqlType t = Row({std::move(key), std::move(value)}, nullable);
    t.id = TypeId::kMap;
    return t;
  }
  static SqlType Row(std::vector<SqlType> field_types, bool nullable = true) {
    SqlType t = Of(TypeId::kRow, nullable);
    t.fields = std::make_shared<const std::vector<SqlType>>(std::move(field_types));
    return t;
  }
  // The name of ROW field i: its declared name, else EXPR$i.
  std::string FieldName(size_t i) const;
  // "INT NOT NULL", "DECIMAL(10, 2)", "VARCHAR(40)" ...
  std::string ToString() const;
};

// A scalar in physical form. Ordering: NULL first, then integers/doubles numerically, then strings.
struct Value {
  enum class Kind : uint8_t { kNull = 0, kInt = 1, kDouble = 2, kString = 3 };
  Kind kind = Kind::kNull;
  int64_t i = 0;
  double d = 0;
  std::string s;

  static Value Null() { return Value(); }
  static Value Int(int64_t v) {
    Value x;
    x.kind = Kind::kInt;
    x.i = v;
    return x;
  }
  static Value Double(double v) {
    Value x;
    x.kind = Kind::kDouble;
    x.d = v;
    return x;
  }
  static Value String(std::string v) {
    Value x;
    x.kind = Kind::kString;
    x.s = std::move(v);
    return x;
  }
  bool IsNull() const { return kind == Kind::kNull; }
  std::strong_ordering operator<=>(const Value& o) const;
  bool operator==(const Value& o) const { return (*this <=> o) == 0; }
};

// ---- Calendar helpers (proleptic Gregorian, no time zones) ----
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d);
void CivilFromDays(int64_t days, int64_t* y, unsigned* m, unsigned* d);
constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerDay = 86400LL * kMicrosPerSecond;

// Parse text into the physical value of `type`. Returns false (and leaves *out untouched) when the
// text is not a valid literal of that type. Accepted forms: integers "-12"; decimals "12.50",
// "1e3" for DOUBLE; booleans true/false/t/f/1/0 (any case); DATE "2024-03-01";
// TIME "12:30:00[.ffffff]"; TIMESTAMP "2024-03-01 12:30:00[.ffffff]" or with 'T' and optional 'Z';
// BINARY/VARBINARY as hex digits "0a1B" (an even number of them).
bool ParseValue(std::string_view text, const SqlType& type, Value* out);

// True when `v` lies in the range of the integer type `id` (TINYINT, SMALLINT, INT, BIGINT).
inline bool IntegerFits(int64_t v, TypeId id) {
  switch (id) {
    case TypeId::kTinyInt:
      return v >= INT8_MIN && v <= INT8_MAX;
    case TypeId::kSmallInt:
      return v >= INT16_MIN && v <= INT16_MAX;
    case TypeId::kInteger:
      return v >= INT32_MIN && v <= INT32_MAX;
    default:
      return true;
  }
}

// Text form of a value of `type` as written to CSV/JSON/tables: booleans true/false, decimals
// with exactly `scale` digits, dates ISO-8601, timestamps "YYYY-MM-DD HH:MM:SS[.ffffff]",
// doubles in shortest round-trip form, binary strings as lower-case hex. NULL is "NULL" (callers that need another
// spelling check IsNull first).
std::string FormatValue(const Value& v, const SqlType& type);

// ROW values: the fields' values (physical form, NULL allowed) <-> the order-preserving
// encoding stored in a kStr column. Per field: 0x00 for NULL, else 0x01 then the value: integers
// as 8 big-endian bytes with the sign bit flipped, doubles as their IEEE bits made monotonic,
// strings (and nested rows) with 0x00 escaped as 0x00 0xFF and ended by 0x00 0x00.
std::string EncodeRowValue(const std::vector<Value>& fields, const std::vector<SqlType>& types);
std::vector<Value> DecodeRowValue(std::string_view encoded, const std::vector<SqlType>& types);
// ARRAY values: per element 0x01 and the element as one ROW field; 0x00 ends the array.
std::string EncodeArrayValue(const std::vector<Value>& elements, const SqlType& element_type);
std::vector<Value> DecodeArrayValue(std::string_view encoded, const SqlType& element_type);

// MAP values: the entries (key, value) sorted by the key's encoding, each 0x01 then the key and
// the value as ROW fields; 0x00 ends the map. Later duplicates of a key win (as MAP[...] does).
std::string EncodeMapValue(std::vector<std::pair<Value, Value>> entries, const SqlType& map_type);
std::vector<std::pair<Value, Value>> DecodeMapValue(std::string_view encoded, const SqlType& map_type);

// UUID values: the text forms Feldera reads (its uuid library's): 32 hex digits, optionally
// hyphenated 8-4-4-4-12, the hyphenated form in braces {...} or after "urn:uuid:"; digits in
// either case. False when `text` is none of them. FormatUuid writes the hyphenated lower-case
// form of 16 bytes.
bool ParseUuid(std::string_view text, std::string* bytes);
std::string FormatUuid(std::string_view bytes);

// GEOMETRY values (points): x and y encoded as the two DOUBLE fields of a ROW (EncodeRowValue),
// so byte order is (x, y) order. Text form "POINT (x y)" (WKT); ParseValue accepts it back.
std::string EncodeGeoPoint(double x, double y);
std::pair<double, double> DecodeGeoPoint(std::string_view encoded);

// 10^n for 0 <= n <= 18.
int64_t Pow10(int n);

// ---- DECIMAL in 128 bits ----
using Int128 = __int128;
// 10^n for 0 <= n <= 38.
Int128 Pow10Wide(int n);
std::string EncodeInt128(Int128 v);
Int128 DecodeInt128(std::string_view bytes);
// The unscaled value (value times 10^scale) of a non-NULL exact numeric of type t.
Int128 UnscaledDecimal(const Value& v, const SqlType& t);
// The physical value of unscaled x in DECIMAL type t (no range check).
Value DecimalValue(Int128 x, const SqlType& t);
// |x| < 10^precision.
bool DecimalFits(Int128 x, int precision);
// x / 10^n rounded half away from zero (n >= 0).
Int128 RoundDiv10(Int128 x, int n);
// "-12.50": unscaled x with `scale` digits after the point.
std::string FormatDecimal(Int128 x, int scale);
// Text of a decimal number ("12.5", "-1e3", "1.5E-2") as an unscaled value with `scale` digits,
// rounded half away from zero; false when it is not a number or does not fit 38 digits.
bool ParseDecimalText(std::string_view text, int scale, Int128* out);

}  // namespace fld
