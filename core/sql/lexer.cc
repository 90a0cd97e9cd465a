#include "core/sql/lexer.h"

#include "core/common/error.h"
#include "core/types/schema.h"

namespace fld::sql {
namespace {

bool IsIdentStart(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

bool IsIdentPart(char c) {
  return IsIdentStart(c) || IsDigit(c) || c == '$';
}

class Lexer {
 public:
  Lexer(std::string_view sql, const SourceInfo& src) : sql_(sql), src_(src) {}

  std::vector<Token> Run() {
    std::vector<Token> tokens;
    tokens.reserve(sql_.size() / 4 + 2);
    for (;;) {
      SkipSpaceAndComments();
      if (i_ >= sql_.size()) break;
      tokens.push_back(Next());
    }
    Token end;
    end.kind = TokenKind::kEnd;
    end.pos = tokens.empty() ? Pos{} : tokens.back().end;
    end.end = end.pos;
    tokens.push_back(std::move(end));
    return tokens;
  }

 private:
  char At(size_t i) const { return i < sql_.size() ? sql_[i] : '\0'; }
  Pos Here() const { return Pos{line_, col_, i_}; }

  // Moves past one byte. A column counts characters, so UTF-8 continuation bytes add nothing.
  void Advance() {
    char c = sql_[i_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++col_;
    }
  }

  [[noreturn]] void Fail(Pos pos, std::string_view message) const {
    throw Error(ErrorKind::kUsage, FormatSqlError(sql_, src_, pos, message));
  }

  void SkipSpaceAndComments() {
    while (i_ < sql_.size()) {
      char c = sql_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        Advance();
      } else if (c == '-' && At(i_ + 1) == '-') {
        while (i_ < sql_.size() && sql_[i_] != '\n') Advance();
      } else if (c == '/' && At(i_ + 1) == '*') {
        Pos start = Here();
        Advance();
        Advance();
        for (;;) {
          if (i_ >= sql_.size()) Fail(start, "unterminated comment");
          if (sql_[i_] == '*' && At(i_ + 1) == '/') {
            Advance();
            Advance();
            break;
          }
          Advance();
        }
      } else {
        break;
      }
    }
  }

  Token Next() {
    Token t;
    t.pos = Here();
    char c = sql_[i_];
    if (IsIdentStart(c)) {
      while (i_ < sql_.size() && IsIdentPart(sql_[i_])) Advance();
      t.kind = TokenKind::kIdent;
      t.text = std::string(sql_.substr(t.pos.offset, i_ - t.pos.offset));
      t.upper = ToUpper(t.text);
    } else if (IsDigit(c) || (c == '.' && IsDigit(At(i_ + 1)))) {
      LexNumber(&t);
    } else if (c == '\'') {
      t.kind = TokenKind::kString;
      t.text = LexQuoted('\'', t.pos, "unterminated string literal");
    } else if (c == '"' || c == '`') {
      t.kind = TokenKind::kQuotedIdent;
      t.text = LexQuoted(c, t.pos, "unterminated quoted identifier");
      if (t.text.empty()) Fail(t.pos, "empty quoted identifier");
    } else {
      LexSymbol(&t);
    }
    t.end = Here();
    t.raw = sql_.substr(t.pos.offset, i_ - t.pos.offset);
    return t;
  }

  void LexNumber(Token* t) {
    t->kind = TokenKind::kInteger;
    while (IsDigit(At(i_))) Advance();
    if (At(i_) == '.') {
      t->kind = TokenKind::kDecimal;
      Advance();
      while (IsDigit(At(i_))) Advance();
    }
    char e = At(i_);
    if (e == 'e' || e == 'E') {
      char s = At(i_ + 1);
      if (IsDigit(s) || ((s == '+' || s == '-') && IsDigit(At(i_ + 2)))) {
        t->kind = TokenKind::kDouble;
        Advance();
        if (s == '+' || s == '-') Advance();
        while (IsDigit(At(i_))) Advance();
      }
    }
    if (IsIdentPart(At(i_))) Fail(t->pos, "malformed number");
    t->text = std::string(sql_.substr(t->pos.offset, i_ - t->pos.offset));
  }

  // Reads a quoted token starting at the opening `quote`; a doubled quote stands for one.
  std::string LexQuoted(char quote, Pos start, std::string_view unterminated) {
    std::string out;
    Advance();
    for (;;) {
      if (i_ >= sql_.size()) Fail(start, unterminated);
      char c = sql_[i_];
      if (c == quote) {
        if (At(i_ + 1) != quote) {
          Advance();
          return out;
        }
        Advance();
      }
      out.push_back(c);
      Advance();
    }
  }

  void LexSymbol(Token* t) {
    static constexpr std::string_view kTwo[] = {"<=>", "||", "<=", ">=", "<>", "!=", "==", "->", "::"};
    static constexpr std::string_view kOne = "+-*/%=<>(),.;[]";
    t->kind = TokenKind::kSymbol;
    std::string_view rest = sql_.substr(i_);
    for (std::string_view two : kTwo) {
      if (rest.starts_with(two)) {
        t->text = std::string(two);
        for (size_t k = 0; k < two.size(); ++k) Advance();
        return;
      }
    }
    char c = sql_[i_];
    if (kOne.find(c) == std::string_view::npos) {
      // Show the whole (possibly multi-byte) character.
      size_t n = 1;
      while (n < 4 && (static_cast<unsigned char>(At(i_ + n)) & 0xC0) == 0x80) ++n;
      Fail(Here(), "unexpected character '" + std::string(sql_.substr(i_, n)) + "'");
    }
    t->text = std::string(1, c);
    Advance();
  }

  std::string_view sql_;
  const SourceInfo& src_;
  size_t i_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

std::vector<Token> Tokenize(std::string_view sql, const SourceInfo& src) {
  return Lexer(sql, src).Run();
}

std::string DescribeToken(const Token& token) {
  if (token.kind == TokenKind::kEnd) return "end of input";
  std::string_view raw = token.raw;
  size_t nl = raw.find_first_of("\r\n");
  bool cut = false;
  if (nl != std::string_view::npos) {
    raw = raw.substr(0, nl);
    cut = true;
  }
  if (raw.size() > 40) {
    size_t n = 40;
    while (n > 0 && (static_cast<unsigned char>(raw[n]) & 0xC0) == 0x80) --n;  // whole characters
    raw = raw.substr(0, n);
    cut = true;
  }
  return "'" + std::string(raw) + (cut ? "...'" : "'");
}

}  // namespace fld::sql
