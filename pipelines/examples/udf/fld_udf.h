/* fld's C ABI for user-defined functions (version 1).
 *
 * A SQL program declares a function without a body:
 *     CREATE FUNCTION re_extract(s VARCHAR, p VARCHAR, grp INTEGER) RETURNS VARCHAR;
 * and the pipeline spec names a shared library:
 *     udf: {library: build/libfld_udf_example.so}
 * For each such function, the library exports (the SQL name in lower case):
 *     int fld_udf_re_extract(const fld_value* args, int nargs, fld_value* result);
 * fld calls it once per row, from one thread at a time, with the arguments cast to the declared
 * parameter types. It returns 0 and fills `result` (is_null, or the value in the field of the
 * return type), or returns non-zero on a fatal error, with `result->s`/`len` holding a message:
 * the pipeline then stops with a run-time error (exit 1). The function must be deterministic:
 * fld recomputes steps after a crash and checks that they reproduce.
 *
 * Values are in fld's physical form:
 *   i: BOOLEAN (0/1), TINYINT..BIGINT, DECIMAL(p, s) (the value times 10^s), DATE (days since
 *      1970-01-01), TIME (microseconds since midnight), TIMESTAMP (microseconds since 1970-01-01)
 *   d: REAL, DOUBLE
 *   s, len: CHAR/VARCHAR (UTF-8 bytes), BINARY/VARBINARY (bytes), ARRAY and ROW (fld's encoding,
 *      core/types/types.h: EncodeArrayValue / EncodeRowValue)
 * Argument strings are valid only during the call. A result string must stay valid until the
 * next call of the same function (a static or thread-local buffer will do); fld copies it.
 */
#ifndef FLD_UDF_H_
#define FLD_UDF_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fld_value {
  int32_t is_null;
  int32_t reserved;
  int64_t i;
  double d;
  const char* s;
  size_t len;
} fld_value;

typedef int (*fld_udf_fn)(const fld_value* args, int nargs, fld_value* result);

#ifdef __cplusplus
}
#endif

#endif /* FLD_UDF_H_ */
