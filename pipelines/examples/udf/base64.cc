// An example user-defined function (see fld_udf.h): base64(b VARBINARY) RETURNS VARCHAR, as
// Feldera's UDF tutorial (demo 07) declares it: the standard base64 encoding of the bytes
// (RFC 4648 alphabet, '=' padding, no line breaks); NULL for NULL.
#include <string>

#include "fld_udf.h"

extern "C" int fld_udf_base64(const fld_value* args, int nargs, fld_value* result) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  thread_local std::string out;
  result->is_null = 1;
  if (nargs != 1) {
    out = "base64 takes 1 argument";
    result->s = out.data();
    result->len = out.size();
    return 1;
  }
  if (args[0].is_null) return 0;
  const auto* in = reinterpret_cast<const unsigned char*>(args[0].s);
  const size_t n = args[0].len;
  out.clear();
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    const uint32_t b0 = in[i], b1 = i + 1 < n ? in[i + 1] : 0, b2 = i + 2 < n ? in[i + 2] : 0;
    const uint32_t w = (b0 << 16) | (b1 << 8) | b2;
    out.push_back(kAlphabet[(w >> 18) & 63]);
    out.push_back(kAlphabet[(w >> 12) & 63]);
    out.push_back(i + 1 < n ? kAlphabet[(w >> 6) & 63] : '=');
    out.push_back(i + 2 < n ? kAlphabet[w & 63] : '=');
  }
  result->is_null = 0;
  result->s = out.data();
  result->len = out.size();
  return 0;
}
