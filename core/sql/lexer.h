// The SQL lexer: splits SQL text into tokens, each carrying its exact position (1-based line and
// column, byte offset) so the parser can point errors at it. Whitespace and comments (`-- ...` to
// the end of the line, `/* ... */`) are skipped; lines may end with "\n" or "\r\n". Keywords are
// not recognised here: an unquoted word is a kIdent and the parser compares its upper-case form.
// Columns count characters (UTF-8 code points), not bytes, so a caret lines up under the token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/sql/ast.h"
#include "core/sql/parser.h"

namespace fld::sql {

enum class TokenKind : uint8_t {
  kEnd,          // end of input; always the last token
  kIdent,        // unquoted word: letters, digits, '_' ('$' after the first character)
  kQuotedIdent,  // "x" or `x`: case kept, doubled quote is an escaped quote
  kString,       // 'x': '' is an escaped quote
  kInteger,      // 123
  kDecimal,      // 1.5, .5, 5.
  kDouble,       // 1e3, 2.5E-3
  kSymbol,       // [ ] + - * / % || = == <> != < <= > >= ( ) , . ;
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view raw;  // the token's source text, quotes included (empty for kEnd)
  // kIdent, numbers and symbols: the text as written; kQuotedIdent and kString: the contents with
  // quotes removed and escapes resolved.
  std::string text;
  std::string upper;  // kIdent only: text in upper case, for keyword comparisons
  Pos pos;            // of the first character
  Pos end;            // just after the last character
};

// Splits `sql` into tokens. The result always ends with one kEnd token, positioned right after the
// last real token (or at the start when there is none). Throws fld::Error(kUsage), formatted by
// FormatSqlError with `src`, for an unterminated string, quoted identifier or comment, a malformed
// number (digits running into letters) and a character that starts no token.
std::vector<Token> Tokenize(std::string_view sql, const SourceInfo& src = {});

// How a token is named in an error message: "'FROM'", "','", "end of input". Long or multi-line
// tokens (a JSON property value) are cut short.
std::string DescribeToken(const Token& token);

}  // namespace fld::sql
