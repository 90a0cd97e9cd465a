// The two functions Feldera's spreadsheet demo (demo 11) declares without a body, in a small form
// for tests: cells are named by a column letter and a row number (A0, B0, ..., Z0, A1, ...), the
// cell `<letter><row>` having id row * 26 + letter.
//   mentions(cell VARCHAR(64)) RETURNS BIGINT ARRAY: the ids a formula (`=...`) names, in order;
//     empty for a plain value.
//   cell_value(cell VARCHAR(64), mentions_ids BIGINT ARRAY, mentions_values VARCHAR(64) ARRAY)
//     RETURNS VARCHAR(64): a plain value itself; a formula that adds integers and cell
//     references (`=A0+B0+3`) their sum, a reference standing for the value given for its id;
//     NULL for any other formula or a reference without an integer value.
// ARRAY arguments and results are in fld's encoding (core/types/types.h, EncodeArrayValue): per
// element 0x01 then the element as a ROW field (0x00 for NULL; else 0x01 and, for BIGINT, the
// value with its sign bit flipped in 8 big-endian bytes, for VARCHAR the bytes with 0x00 escaped
// as 0x00 0xff and ended by 0x00 0x00); 0x00 ends the array.
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fld_udf.h"

namespace {

struct Ref {
  bool is_ref;
  int64_t v;  // the id of a reference, or the integer
};

// The terms of `=t1+t2+...`, or nullopt when s is not such a formula.
std::optional<std::vector<Ref>> Terms(const std::string& s) {
  if (s.empty() || s[0] != '=') return std::nullopt;
  std::vector<Ref> out;
  size_t i = 1;
  for (;;) {
    bool ref = i < s.size() && std::isupper(static_cast<unsigned char>(s[i]));
    int64_t col = ref ? s[i++] - 'A' : 0;
    size_t start = i;
    int64_t n = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && i - start < 15)
      n = n * 10 + (s[i++] - '0');
    if (i == start) return std::nullopt;
    out.push_back({ref, ref ? n * 26 + col : n});
    if (i == s.size()) return out;
    if (s[i++] != '+') return std::nullopt;
  }
}

void PutI64(std::string& out, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
  for (int b = 7; b >= 0; --b) out.push_back(static_cast<char>((u >> (8 * b)) & 0xff));
}

// The elements of an encoded BIGINT ARRAY (nullopt for NULL elements).
std::vector<std::optional<int64_t>> Ints(const char* s, size_t len) {
  std::vector<std::optional<int64_t>> out;
  size_t p = 0;
  while (p < len && s[p] == '\1') {
    ++p;
    if (s[p++] == '\0') {
      out.push_back(std::nullopt);
      continue;
    }
    uint64_t u = 0;
    for (int b = 0; b < 8; ++b) u = (u << 8) | static_cast<unsigned char>(s[p++]);
    out.push_back(static_cast<int64_t>(u ^ (uint64_t{1} << 63)));
  }
  return out;
}

std::vector<std::optional<std::string>> Strings(const char* s, size_t len) {
  std::vector<std::optional<std::string>> out;
  size_t p = 0;
  while (p < len && s[p] == '\1') {
    ++p;
    if (s[p++] == '\0') {
      out.push_back(std::nullopt);
      continue;
    }
    std::string v;
    while (!(s[p] == '\0' && s[p + 1] == '\0')) {
      v.push_back(s[p]);
      p += s[p] == '\0' ? 2 : 1;
    }
    p += 2;
    out.push_back(std::move(v));
  }
  return out;
}

int Set(fld_value* r, std::string& buf) {
  r->is_null = 0;
  r->s = buf.data();
  r->len = buf.size();
  return 0;
}

}  // namespace

extern "C" int fld_udf_mentions(const fld_value* args, int nargs, fld_value* result) {
  thread_local std::string out;
  result->is_null = 1;
  if (nargs != 1 || args[0].is_null) return 0;
  out.clear();
  if (auto terms = Terms(std::string(args[0].s, args[0].len)))
    for (const Ref& t : *terms)
      if (t.is_ref) {
        out.push_back('\1');
        out.push_back('\1');
        PutI64(out, t.v);
      }
  out.push_back('\0');
  return Set(result, out);
}

extern "C" int fld_udf_cell_value(const fld_value* args, int nargs, fld_value* result) {
  thread_local std::string out;
  result->is_null = 1;
  if (nargs != 3 || args[0].is_null) return 0;
  out.assign(args[0].s, args[0].len);
  if (out.empty() || out[0] != '=') return Set(result, out);
  auto terms = Terms(out);
  if (!terms) return 0;
  std::vector<std::optional<int64_t>> ids;
  std::vector<std::optional<std::string>> values;
  if (!args[1].is_null) ids = Ints(args[1].s, args[1].len);
  if (!args[2].is_null) values = Strings(args[2].s, args[2].len);
  int64_t sum = 0;
  for (const Ref& t : *terms) {
    if (!t.is_ref) {
      sum += t.v;
      continue;
    }
    std::optional<int64_t> v;
    for (size_t i = 0; i < ids.size() && i < values.size(); ++i) {
      if (ids[i] != t.v || !values[i] || values[i]->empty()) continue;
      try {
        size_t used = 0;
        int64_t x = std::stoll(*values[i], &used);
        if (used == values[i]->size()) v = x;
      } catch (const std::exception&) {
      }
    }
    if (!v) return 0;
    sum += *v;
  }
  out = std::to_string(sum);
  return Set(result, out);
}
