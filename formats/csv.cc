#include "formats/csv.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "formats/json.h"

namespace fld {

namespace {

// Integer columns take the fast path (no temporary string); everything else goes through
// ParseValue, which also handles the integer forms the fast path rejects ("+5", " 5").
bool ParseField(std::string_view text, const SqlType& type, Value* out) {
  if (type.IsInteger() && !text.empty()) {
    int64_t v;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec == std::errc() && r.ptr == text.data() + text.size()) {
      if (!IntegerFits(v, type.id)) return false;
      out->kind = Value::Kind::kInt;
      out->i = v;
      return true;
    }
  }
  if (type.id == TypeId::kArray || type.id == TypeId::kMap || type.id == TypeId::kRow) {
    // CSV has no nested values: the field holds the value's JSON text, as Feldera documents for
    // arrays (`[1, 2]`; a MAP is an object `{"a": 1}`, a ROW an object keyed by field names),
    // read as the JSON format reads it.
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return false;
    std::string why;
    return JsonToValue(j, type, out, &why);
  }
  return ParseValue(text, type, out);
}

std::string Shorten(std::string_view s) {
  if (s.size() <= 40) return std::string(s);
  return std::string(s.substr(0, 37)) + "...";
}

}  // namespace

CsvParser::CsvParser(const Schema& schema, CsvOptions options) : schema_(schema), options_(options) {
  row_.resize(schema_.size());
  const char d = options_.delimiter;
  bool ints =
      options_.integer_fast_path && !options_.weight_field && schema_.size() > 0 && d != '-' && (d < '0' || d > '9');
  for (const auto& f : schema_.fields) ints = ints && f.type.IsInteger();
  if (!ints) return;
  for (const auto& f : schema_.fields) int_types_.push_back(f.type.id);
  ints_.resize(schema_.size());
}

bool CsvParser::ParseInts(std::string_view rec, BatchBuilder* out) {
  const char* p = rec.data();
  const char* const end = p + rec.size();
  const size_t ncols = int_types_.size();
  for (size_t c = 0; c < ncols; ++c) {
    const bool neg = p < end && *p == '-';
    if (neg) ++p;
    const char* const digits = p;
    uint64_t v = 0;
    while (p < end && static_cast<unsigned>(*p - '0') < 10) v = v * 10 + static_cast<unsigned>(*p++ - '0');
    if (p == digits || p - digits > 18) return false;
    const int64_t x = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    if (!IntegerFits(x, int_types_[c])) return false;
    ints_[c] = x;
    if (c + 1 < ncols) {
      if (p == end || *p != options_.delimiter) return false;
      ++p;
    }
  }
  if (p != end) return false;
  for (size_t c = 0; c < ncols; ++c) {  // (integer columns are kI64)
    Column& col = out->col(c);
    col.i64.push_back(ints_[c]);
    if (!col.nulls.empty()) col.nulls.push_back(0);
  }
  out->AddWeight(1);
  return true;
}

bool CsvInsideQuotes(std::string_view text) {
  // Quotes pair up inside a quoted field ("" is an escaped quote), so an odd count means the
  // record is still inside one.
  if (std::memchr(text.data(), '"', text.size()) == nullptr) return false;  // the common case
  size_t n = 0;
  for (char c : text) n += c == '"';
  return n % 2 == 1;
}

bool CsvParser::Split(std::string_view rec, FormatError* error) {
  fields_.clear();
  size_t used_buffers = 0;
  const char d = options_.delimiter;
  size_t pos = 0;
  for (;;) {
    RawField f;
    f.column = pos + 1;
    if (pos < rec.size() && rec[pos] == '"') {
      // Quoted field: runs to the closing quote; "" inside is one quote.
      size_t start = pos + 1;
      size_t q = rec.find('"', start);
      bool simple = true;
      std::string* buf = nullptr;
      for (;;) {
        if (q == std::string_view::npos) {
          error->message = "unterminated quoted field";
          error->column = f.column;
          return false;
        }
        if (q + 1 < rec.size() && rec[q + 1] == '"') {
          if (simple) {
            simple = false;
            if (unescaped_.size() <= used_buffers) unescaped_.emplace_back();
            buf = &unescaped_[used_buffers++];
            buf->assign(rec.substr(start, q - start));
          } else {
            buf->append(rec.substr(start, q - start));
          }
          buf->push_back('"');
          start = q + 2;
          q = rec.find('"', start);
          continue;
        }
        break;
      }
      if (simple) {
        f.text = rec.substr(start, q - start);
      } else {
        buf->append(rec.substr(start, q - start));
        f.text = *buf;
      }
      f.quoted = true;
      pos = q + 1;
      if (pos < rec.size() && rec[pos] != d) {
        error->message = fmt::format("unexpected character '{}' after a closing quote", rec[pos]);
        error->column = pos + 1;
        return false;
      }
    } else {
      size_t e = rec.find(d, pos);
      if (e == std::string_view::npos) e = rec.size();
      f.text = rec.substr(pos, e - pos);
      pos = e;
    }
    fields_.push_back(f);
    if (pos >= rec.size()) break;
    ++pos;  // skip the delimiter; a trailing delimiter yields one more (empty) field
  }
  return true;
}

bool CsvParser::Parse(std::string_view rec, BatchBuilder* out, FormatError* error) {
  if (!int_types_.empty() && ParseInts(rec, out)) return true;
  if (!Split(rec, error)) return false;
  const size_t ncols = schema_.size();
  const size_t expected = ncols + (options_.weight_field ? 1 : 0);
  // A record may stop before trailing columns that all have a DEFAULT.
  size_t given = ncols;
  if (!options_.weight_field && fields_.size() < ncols) {
    given = fields_.size();
    for (size_t c = given; c < ncols; ++c)
      if (!schema_.fields[c].default_value) given = ncols;
  }
  if (fields_.size() != expected && given == ncols) {
    error->message = fmt::format("expected {} fields but found {}", expected, fields_.size());
    error->column = fields_.size() > expected ? fields_[expected].column : rec.size() + 1;
    return false;
  }
  for (size_t c = 0; c < ncols; ++c) {
    if (c >= given) {
      row_[c] = *schema_.fields[c].default_value;
      continue;
    }
    const RawField& f = fields_[c];
    const SqlType& type = schema_.fields[c].type;
    Value& v = row_[c];
    v.kind = Value::Kind::kNull;
    if (f.text.empty() && !f.quoted) {
      if (type.nullable) continue;
      if (type.IsString()) {
        v = Value::String(std::string());
        continue;
      }
      error->message = fmt::format("expected {} but found an empty field (NULL) in field {} ({}), which is NOT NULL",
                                   type.WithNullable(true).ToString(), c + 1, schema_.fields[c].name);
      error->column = f.column;
      return false;
    }
    if (type.IsString()) {
      v.kind = Value::Kind::kString;
      v.s.assign(f.text);
      continue;
    }
    if (!ParseField(f.text, type, &v)) {
      error->message = fmt::format("expected {} but found '{}' in field {} ({})", type.WithNullable(true).ToString(),
                                   Shorten(f.text), c + 1, schema_.fields[c].name);
      error->column = f.column;
      return false;
    }
  }
  int64_t weight = 1;
  if (options_.weight_field) {
    const RawField& f = fields_[ncols];
    std::string_view t = f.text;
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    auto r = std::from_chars(t.data(), t.data() + t.size(), weight);
    if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size()) {
      error->message = fmt::format("expected an integer weight but found '{}' in field {}", Shorten(f.text), ncols + 1);
      error->column = f.column;
      return false;
    }
  }
  for (size_t c = 0; c < ncols; ++c) out->col(c).Append(row_[c]);
  out->AddWeight(weight);
  return true;
}

CsvWriter::CsvWriter(const Schema& schema, CsvOptions options) : schema_(schema), options_(options) {}

void CsvWriter::AppendText(std::string_view s, std::string* out) const {
  bool quote = s.empty() || s.front() == ' ' || s.front() == '\t' || s.back() == ' ' || s.back() == '\t';
  if (!quote) {
    for (char c : s) {
      if (c == options_.delimiter || c == '"' || c == '\n' || c == '\r') {
        quote = true;
        break;
      }
    }
  }
  if (!quote) {
    out->append(s);
    return;
  }
  out->push_back('"');
  for (char c : s) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void CsvWriter::AppendHeader(std::string* out) const {
  for (const auto& f : schema_.fields) {
    AppendText(f.name, out);
    out->push_back(options_.delimiter);
  }
  out->append("weight\n");
}

void CsvWriter::AppendRow(const Batch& b, size_t r, std::string* out) const {
  // Integers and delimiters go through a local buffer, appended once per row (or before any
  // other value): a row of integers costs one append, not one per field.
  char buf[256];
  size_t n = 0;
  auto flush = [&] {
    out->append(buf, n);
    n = 0;
  };
  auto put_int = [&](int64_t v) {
    if (n + 24 > sizeof buf) flush();
    n = static_cast<size_t>(std::to_chars(buf + n, buf + sizeof buf, v).ptr - buf);
  };
  auto put_char = [&](char c) {
    if (n + 1 > sizeof buf) flush();
    buf[n++] = c;
  };
  for (size_t c = 0; c < schema_.size(); ++c) {
    const Column& col = *b.cols[c];
    const SqlType& type = schema_.fields[c].type;
    if (!col.IsNull(r)) {
      if (col.phys == PhysType::kI64 && type.IsInteger()) {
        put_int(col.i64[r]);
      } else {
        flush();
        switch (col.phys) {
          case PhysType::kStr:
            if (type.IsString())
              AppendText(col.str[r], out);
            else  // BINARY (hex, as the parser reads it), DECIMAL(p > 18), ROW, ARRAY, MAP, ...: text
              AppendText(FormatValue(col.Get(r), type), out);
            break;
          case PhysType::kI64:
            out->append(FormatValue(col.Get(r), type));
            break;
          case PhysType::kF64:
            // REAL holds a float: print its shortest float form (0.1, not 0.10000000149011612).
            if (type.id == TypeId::kReal && std::isfinite(col.f64[r]) && col.f64[r] != 0)
              fmt::format_to(std::back_inserter(*out), "{}", static_cast<float>(col.f64[r]));
            else
              out->append(FormatValue(col.Get(r), type));
            break;
        }
      }
    }
    put_char(options_.delimiter);
  }
  put_int(b.weights[r]);
  put_char('\n');
  flush();
}

}  // namespace fld
