// VARIANT values: Feldera's dynamically typed, JSON-like values.
//
// A VARIANT holds a runtime type and a value of that type. It is stored (in a kStr column, and as
// Value::String) in an order-preserving encoding: one tag byte naming the runtime type, then
//   VARIANT null (JSON null, not SQL NULL): nothing;
//   BOOLEAN, TINYINT..BIGINT, DATE, TIME, TIMESTAMP: 8 big-endian bytes, sign bit flipped;
//   BIGINT UNSIGNED (non-negative JSON integers): 8 big-endian bytes;
//   DECIMAL(p, s): p and s as one byte each, then the 16 bytes of EncodeInt128;
//   REAL, DOUBLE: their IEEE bits made monotonic (8 bytes);
//   VARCHAR, VARBINARY: the bytes, 0x00 escaped as 0x00 0xFF, ended by 0x00 0x00;
//   ARRAY (of VARIANT): per element 0x01 and the element's encoding, then 0x00;
//   MAP (VARIANT to VARIANT): per entry, in key order, 0x01, the key's encoding and the value's,
//   then 0x00.
//   UUID: its 16 bytes.
// Every encoding is self-delimiting and byte order is a total order that groups values by runtime
// type, so equality (same type and same value, as Feldera), DISTINCT, GROUP BY, MIN and MAX work
// on the bytes. Arrays, maps and ROWs cast to VARIANT become VARIANT arrays and maps whose
// elements keep their runtime types (a ROW's fields are keyed by their names, EXPR$0, EXPR$1, ...
// for unnamed ones).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/types/types.h"

namespace fld {

// CAST(v AS VARIANT) for a non-NULL value v of type t.
std::string VariantFromValue(const Value& v, const SqlType& t);
// CAST(variant AS t): false when the runtime type does not convert to t (the CAST is then NULL).
// VARIANT null converts to SQL NULL.
bool VariantToValue(std::string_view variant, const SqlType& t, Value* out);
// The runtime type's name (TYPEOF): "INTEGER", "VARCHAR", "DECIMAL(2, 1)", "VARIANT" for VARIANT
// null, "VARIANT ARRAY", "MAP<VARIANT, VARIANT>" ...
std::string VariantTypeName(std::string_view variant);
// variant[key]: the element at 1-based index `key` of an array, or the value of a map's entry
// whose key equals CAST(key AS VARIANT); nullopt (SQL NULL) otherwise.
std::optional<std::string> VariantIndex(std::string_view variant, const Value& key, const SqlType& key_type);

// PARSE_JSON: one JSON value (surrounding white space allowed). JSON null is VARIANT null,
// booleans BOOLEAN, negative integers BIGINT, other integers BIGINT UNSIGNED, other numbers
// DECIMAL (DOUBLE beyond 38 digits), strings VARCHAR, arrays VARIANT ARRAY, objects
// MAP<VARIANT, VARIANT> with VARCHAR keys. False when the text is not JSON.
bool ParseJsonVariant(std::string_view text, std::string* out);
// TO_JSON: the JSON text of a VARIANT (compact, no spaces); nullopt when a map has keys that
// are not strings.
std::optional<std::string> VariantJson(std::string_view variant);
// The JSON text used for output: as VariantJson, with non-string map keys written as their
// text.
std::string VariantToJson(std::string_view variant);
// The encoding of VARIANT null (VARIANTNULL()).
std::string VariantNull();

// The structure of VARIANT maps and arrays, for the JSON functions (JSON_KEYS, VARIANT_MERGE ...):
// a map's entries as (key, value) encodings in key order, or nullopt when v holds no map;
std::optional<std::vector<std::pair<std::string, std::string>>> VariantMapEntries(std::string_view v);
// an array's element encodings, or nullopt when v holds no array;
std::optional<std::vector<std::string>> VariantArrayElements(std::string_view v);
// the VARIANT map of (key, value) encodings (sorted here; the last of equal keys wins).
std::string VariantMapOf(std::vector<std::pair<std::string, std::string>> entries);
// the VARIANT array of element encodings.
std::string VariantArrayOf(const std::vector<std::string>& elements);

}  // namespace fld
