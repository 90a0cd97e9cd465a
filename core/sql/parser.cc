#include "core/sql/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <unordered_set>

#include "core/common/error.h"
#include "core/sql/lexer.h"
#include "core/types/schema.h"

namespace fld::sql {
namespace {

// Nesting deeper than this (parentheses, prefix operators, subqueries) is reported as an error
// rather than risking the stack.
constexpr int kMaxDepth = 1000;

// Words that can never be an implicit alias, a column or a table name without quotes. Kept small:
// every word that may follow an expression or a table reference must be here, so that
// `FROM t WHERE ...` does not read WHERE as an alias of t.
bool IsReserved(std::string_view upper) {
  static const std::unordered_set<std::string_view> kWords = {
      "ALL",   "AND",      "AS",    "ASC",   "BETWEEN", "BY",        "CASE",   "CAST",   "CREATE", "CROSS", "DELETE",
      "DESC",  "DISTINCT", "DROP",  "ELSE",  "END",     "ESCAPE",    "EXCEPT", "EXISTS", "FALSE",  "FROM",  "FULL",
      "GROUP", "HAVING",   "IN",    "INNER", "INSERT",  "INTERSECT", "INTO",   "IS",     "JOIN",   "LEFT",  "LIKE",
      "LIMIT", "NATURAL",  "NOT",   "NULL",  "OFFSET",  "ON",        "OR",     "ORDER",  "OUTER",  "RIGHT", "SELECT",
      "THEN",  "TRUE",     "UNION", "USING", "VALUES",  "WHEN",      "WHERE",  "WITH",
  };
  return kWords.contains(upper);
}

// Reserved words that are still fine as a function name: LEFT('abc', 2).
bool IsReservedFunctionName(std::string_view upper) {
  return upper == "LEFT" || upper == "RIGHT";
}

// The comparison operator a symbol token stands for, or kNone.
Op ComparisonOp(const Token& t) {
  if (t.kind != TokenKind::kSymbol) return Op::kNone;
  const std::string& s = t.text;
  if (s == "=" || s == "==") return Op::kEq;
  if (s == "<>" || s == "!=") return Op::kNe;
  if (s == "<") return Op::kLt;
  if (s == "<=") return Op::kLe;
  if (s == ">") return Op::kGt;
  if (s == ">=") return Op::kGe;
  return Op::kNone;
}

ExprPtr NewExpr(ExprKind kind, Pos pos) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->pos = pos;
  return e;
}

ExprPtr NewBinary(Op op, ExprPtr l, ExprPtr r) {
  auto e = NewExpr(ExprKind::kBinary, l->pos);
  e->op = op;
  e->args.push_back(std::move(l));
  e->args.push_back(std::move(r));
  return e;
}

class Parser {
 public:
  Parser(std::string_view sql, const SourceInfo& src) : sql_(sql), src_(src), toks_(Tokenize(sql, src)) {}

  std::vector<Statement> Program() {
    std::vector<Statement> out;
    for (;;) {
      while (AcceptSym(";")) {
      }
      if (AtEnd()) break;
      out.push_back(ParseStatement());
      if (!AtEnd() && !IsSym(Peek(), ";")) Expected("';'");
    }
    return out;
  }

  std::unique_ptr<Query> SingleQuery() {
    auto q = ParseQueryExpr();
    AcceptSym(";");
    if (!AtEnd()) Expected("end of input");
    return q;
  }

 private:
  // ---- tokens ----

  const Token& Peek(size_t k = 0) const {
    size_t j = i_ + k;
    return j < toks_.size() ? toks_[j] : toks_.back();
  }
  bool AtEnd() const { return Peek().kind == TokenKind::kEnd; }
  const Token& Take() {
    const Token& t = toks_[i_];
    if (t.kind != TokenKind::kEnd) {
      last_end_ = t.end.offset;
      ++i_;
    }
    return t;
  }

  static bool IsSym(const Token& t, std::string_view s) { return t.kind == TokenKind::kSymbol && t.text == s; }
  static bool IsKw(const Token& t, std::string_view kw) { return t.kind == TokenKind::kIdent && t.upper == kw; }
  bool AcceptSym(std::string_view s) {
    if (!IsSym(Peek(), s)) return false;
    Take();
    return true;
  }
  bool AcceptKw(std::string_view kw) {
    if (!IsKw(Peek(), kw)) return false;
    Take();
    return true;
  }
  const Token& ExpectSym(std::string_view s) {
    if (!IsSym(Peek(), s)) Expected(fmt::format("'{}'", s));
    return Take();
  }
  const Token& ExpectKw(std::string_view kw) {
    if (!IsKw(Peek(), kw)) Expected(kw);
    return Take();
  }

  [[noreturn]] void FailAt(Pos pos, std::string_view message) const {
    throw Error(ErrorKind::kUsage, FormatSqlError(sql_, src_, pos, message));
  }
  [[noreturn]] void Expected(std::string_view what) const {
    FailAt(Peek().pos, fmt::format("expected {} but found {}", what, DescribeToken(Peek())));
  }

  // Counts nesting; every recursive path of the grammar passes through one of these.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser* p) : p_(p) {
      if (++p_->depth_ > kMaxDepth) {
        --p_->depth_;
        p_->FailAt(p_->Peek().pos, fmt::format("SQL nested too deeply (more than {} levels)", kMaxDepth));
      }
    }
    ~DepthGuard() { --p_->depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser* p_;
  };

  // An identifier: an unquoted non-reserved word or a quoted identifier. `what` names it in errors.
  std::string ParseName(std::string_view what) {
    const Token& t = Peek();
    if (t.kind == TokenKind::kQuotedIdent || (t.kind == TokenKind::kIdent && !IsReserved(t.upper))) {
      return Take().text;
    }
    Expected(what);
  }

  // True when the current token can be read as an alias given without AS.
  bool AtImplicitAlias() const {
    const Token& t = Peek();
    // `FROM t WINDOW w AS (...)`: WINDOW starts the clause of named windows.
    if (t.kind == TokenKind::kIdent && t.upper == "WINDOW" && IsKw(Peek(2), "AS")) return false;
    if (t.kind == TokenKind::kIdent && (t.upper == "MATCH_CONDITION" || (t.upper == "ASOF" && IsKw(Peek(1), "JOIN"))))
      return false;  // ASOF JOIN's words are not reserved, but never an alias
    return t.kind == TokenKind::kQuotedIdent || (t.kind == TokenKind::kIdent && !IsReserved(t.upper));
  }

  // [AS] alias, or nothing.
  std::string ParseOptionalAlias() {
    if (AcceptKw("AS")) {
      if (Peek().kind == TokenKind::kString) return Take().text;  // AS 'day' (Calcite accepts it)
      return ParseName("an alias");
    }
    if (AtImplicitAlias()) return Take().text;
    return {};
  }

  int64_t ParseInteger(std::string_view what) {
    const Token& t = Peek();
    if (t.kind != TokenKind::kInteger) Expected(what);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size()) FailAt(t.pos, "integer out of range");
    Take();
    return v;
  }

  std::string ParseStringLiteral(std::string_view what) {
    if (Peek().kind != TokenKind::kString) Expected(what);
    return Take().text;
  }

  // (name, name, ...)
  std::vector<std::string> ParseNameList(std::string_view what) {
    std::vector<std::string> names;
    ExpectSym("(");
    do {
      names.push_back(ParseName(what));
    } while (AcceptSym(","));
    ExpectSym(")");
    return names;
  }

  // True when the tokens after the '(' at `k` (skipping further '(') start a query.
  bool ParenStartsQuery(size_t k) const {
    while (IsSym(Peek(k), "(")) ++k;
    return IsKw(Peek(k), "SELECT") || IsKw(Peek(k), "VALUES") || IsKw(Peek(k), "WITH");
  }

  // ---- statements ----

  Statement ParseStatement() {
    Statement st;
    const Token& first = Peek();
    st.pos = first.pos;
    st.begin = first.pos.offset;
    if (IsKw(first, "CREATE")) {
      ParseCreate(&st);
    } else if (IsKw(first, "INSERT")) {
      st.kind = Statement::Kind::kInsert;
      st.insert = ParseInsert();
    } else if (IsKw(first, "DELETE")) {
      st.kind = Statement::Kind::kDelete;
      Take();
      ExpectKw("FROM");
      st.del = std::make_unique<Delete>();
      st.del->table = ParseName("a table name");
      if (AcceptKw("WHERE")) st.del->where = ParseExpr();
    } else if (IsKw(first, "DROP")) {
      Take();
      if (AcceptKw("TABLE")) {
        st.kind = Statement::Kind::kDropTable;
      } else if (AcceptKw("VIEW")) {
        st.kind = Statement::Kind::kDropView;
      } else {
        Expected("TABLE or VIEW");
      }
      if (AcceptKw("IF")) {
        ExpectKw("EXISTS");
        st.if_exists = true;
      }
      st.drop_name = ParseName(st.kind == Statement::Kind::kDropTable ? "a table name" : "a view name");
    } else if (IsKw(first, "SELECT") || IsKw(first, "VALUES") || IsKw(first, "WITH") || IsSym(first, "(")) {
      st.kind = Statement::Kind::kQuery;
      st.query = ParseQueryExpr();
    } else if (IsKw(first, "DECLARE")) {
      // DECLARE RECURSIVE VIEW v (c type, ...): the forward declaration of a recursive view.
      Take();
      ExpectKw("RECURSIVE");
      ExpectKw("VIEW");
      st.kind = Statement::Kind::kDeclareRecursiveView;
      st.create_table = std::make_unique<CreateTable>();
      st.create_table->name = ParseName("a view name");
      ExpectSym("(");
      do {
        st.create_table->columns.push_back(ParseColumnDef(st.create_table.get()));
      } while (AcceptSym(","));
      ExpectSym(")");
    } else if (IsKw(first, "LATENESS")) {
      // LATENESS view.column <expression>: the expression is kept as text (it is often an
      // INTERVAL) and bound by the planner.
      st.kind = Statement::Kind::kLateness;
      Take();
      st.lateness_view = ParseName("a view name");
      ExpectSym(".");
      st.lateness_column = ParseName("a column name");
      if (AtEnd() || IsSym(Peek(), ";")) Expected("the lateness (an expression)");
      st.lateness_pos = Peek().pos;
      size_t begin = Peek().pos.offset;
      while (!AtEnd() && !IsSym(Peek(), ";")) Take();
      st.lateness_text = std::string(sql_.substr(begin, last_end_ - begin));
    } else if (IsKw(first, "SET")) {
      // SET key = value (Feldera's compiler options): accepted and ignored.
      st.kind = Statement::Kind::kSet;
      Take();
      if (Peek().kind == TokenKind::kString)
        Take();
      else
        ParseName("an option name");
      ExpectSym("=");
      if (AtEnd() || IsSym(Peek(), ";")) Expected("a value");
      while (!AtEnd() && !IsSym(Peek(), ";")) Take();
    } else {
      Expected("a statement (CREATE, INSERT, DELETE, DROP, SELECT, SET or LATENESS)");
    }
    st.end = last_end_;
    return st;
  }

  void ParseCreate(Statement* st) {
    Take();  // CREATE
    if (IsKw(Peek(), "TABLE")) {
      Take();
      st->kind = Statement::Kind::kCreateTable;
      st->create_table = ParseCreateTable();
      return;
    }
    if (IsKw(Peek(), "INDEX") || (IsKw(Peek(), "UNIQUE") && IsKw(Peek(1), "INDEX"))) {
      // Indexes mean nothing to an incremental engine: skip to the end of the statement.
      st->kind = Statement::Kind::kCreateIndex;
      while (!AtEnd() && !IsSym(Peek(), ";")) Take();
      return;
    }
    if (AcceptKw("FUNCTION")) {
      st->kind = Statement::Kind::kCreateFunction;
      st->create_function = ParseCreateFunction();
      return;
    }
    if (AcceptKw("TYPE")) {
      st->kind = Statement::Kind::kCreateType;
      ParseCreateType();
      return;
    }
    if (IsKw(Peek(), "AGGREGATE")) FailAt(Peek().pos, "CREATE AGGREGATE is not supported yet");
    auto view = std::make_unique<CreateView>();
    for (;;) {
      if (!view->materialized && AcceptKw("MATERIALIZED")) {
        view->materialized = true;
      } else if (!view->local && AcceptKw("LOCAL")) {
        view->local = true;
      } else {
        break;
      }
    }
    if (!IsKw(Peek(), "VIEW")) Expected(view->materialized || view->local ? "VIEW" : "TABLE, VIEW or INDEX");
    Take();
    st->kind = Statement::Kind::kCreateView;
    view->name = ParseName("a view name");
    if (IsSym(Peek(), "(")) view->column_names = ParseNameList("a column name");
    if (AcceptKw("WITH")) view->properties = ParseProperties();
    ExpectKw("AS");
    view->query_begin = Peek().pos.offset;
    view->query = ParseQueryExpr();
    view->query_end = last_end_;
    st->create_view = std::move(view);
  }

  // CREATE FUNCTION (after the two keywords): name(param type [NOT NULL], ...) RETURNS type
  // [NOT NULL] [AS expression]. Parameters and the result are nullable unless NOT NULL.
  std::unique_ptr<CreateFunction> ParseCreateFunction() {
    auto f = std::make_unique<CreateFunction>();
    f->pos = Peek().pos;
    f->name = ParseName("a function name");
    ExpectSym("(");
    if (!AcceptSym(")")) {
      do {
        std::string name = ParseName("a parameter name");
        SqlType t = ParseType(/*for_cast=*/false);
        ParseNullability(&t);
        f->params.emplace_back(std::move(name), t);
      } while (AcceptSym(","));
      ExpectSym(")");
    }
    ExpectKw("RETURNS");
    f->result = ParseType(/*for_cast=*/false);
    ParseNullability(&f->result);
    if (AcceptKw("AS")) f->body = ParseExpr();
    return f;
  }

  // [NOT NULL | NULL] after a type.
  void ParseNullability(SqlType* t) {
    if (IsKw(Peek(), "NOT") && IsKw(Peek(1), "NULL")) {
      Take();
      Take();
      t->nullable = false;
    } else {
      AcceptKw("NULL");
    }
  }

  // CREATE TYPE (after the two keywords): name AS (field type, ...) | name AS type. The name
  // then stands for the type in the rest of the program.
  void ParseCreateType() {
    const Token& name_tok = Peek();
    std::string name = ParseName("a type name");
    std::string upper = ToUpper(name);
    if (user_types_.contains(upper)) FailAt(name_tok.pos, fmt::format("type '{}' is already declared", name));
    ExpectKw("AS");
    SqlType t;
    if (IsSym(Peek(), "(")) {
      Take();
      t = ParseRowFields();
    } else {
      t = ParseType(/*for_cast=*/false);
    }
    t.nullable = true;
    user_types_[upper] = t;
  }

  // `name type [NOT NULL], ...)` of a ROW type (the '(' already consumed).
  SqlType ParseRowFields() {
    std::vector<SqlType> types;
    auto names = std::make_shared<std::vector<std::string>>();
    do {
      const Token& ft = Peek();
      std::string fname = ParseName("a field name");
      for (const auto& n : *names)
        if (EqualsIgnoreCase(n, fname)) FailAt(ft.pos, fmt::format("field '{}' appears twice", fname));
      names->push_back(fname);
      SqlType t = ParseType(/*for_cast=*/false);
      ParseNullability(&t);
      types.push_back(t);
    } while (AcceptSym(","));
    ExpectSym(")");
    SqlType row = SqlType::Row(std::move(types));
    row.names = std::move(names);
    return row;
  }

  std::unique_ptr<CreateTable> ParseCreateTable() {
    auto table = std::make_unique<CreateTable>();
    table->name = ParseName("a table name");
    ExpectSym("(");
    do {
      if (IsKw(Peek(), "PRIMARY")) {
        Take();
        ExpectKw("KEY");
        for (std::string& name : ParseNameList("a column name")) {
          table->primary_key.push_back(std::move(name));
        }
      } else if (IsKw(Peek(), "UNIQUE") && IsSym(Peek(1), "(")) {
        Take();
        ParseNameList("a column name");  // UNIQUE (a, b): not enforced, ignored
      } else if (IsKw(Peek(), "FOREIGN") && IsKw(Peek(1), "KEY")) {
        // FOREIGN KEY (a) REFERENCES t (b): accepted and not enforced, as in Feldera.
        Take();
        Take();
        ParseNameList("a column name");
        ParseReferences();
      } else {
        table->columns.push_back(ParseColumnDef(table.get()));
      }
    } while (AcceptSym(","));
    ExpectSym(")");
    if (AcceptKw("WITH")) table->properties = ParseProperties();
    // Table-level PRIMARY KEY columns are NOT NULL as well.
    for (const std::string& key : table->primary_key) {
      for (ColumnDef& col : table->columns) {
        if (EqualsIgnoreCase(col.name, key)) col.type.nullable = false;
      }
    }
    return table;
  }

  ColumnDef ParseColumnDef(CreateTable* table) {
    ColumnDef col;
    col.pos = Peek().pos;
    col.name = ParseName("a column name or PRIMARY KEY");
    col.type = ParseType(/*for_cast=*/false);
    for (;;) {
      if (IsKw(Peek(), "NOT")) {
        Take();
        ExpectKw("NULL");
        col.type.nullable = false;
      } else if (AcceptKw("NULL")) {
        // Explicitly nullable: the default.
      } else if (IsKw(Peek(), "PRIMARY")) {
        Take();
        ExpectKw("KEY");
        if (!col.primary_key) table->primary_key.push_back(col.name);
        col.primary_key = true;
        col.type.nullable = false;
      } else if (AcceptKw("UNIQUE")) {
        // Not enforced: ignored.
      } else if (AcceptKw("DEFAULT")) {
        col.default_value = ParseUnary();
      } else if (IsKw(Peek(), "FOREIGN") && IsKw(Peek(1), "KEY")) {
        Take();
        Take();
        ParseReferences();
      } else if (IsKw(Peek(), "REFERENCES")) {
        ParseReferences();
      } else if (IsKw(Peek(), "LATENESS") || IsKw(Peek(), "WATERMARK")) {
        // LATENESS / WATERMARK <expression> (often an INTERVAL): kept as text up to the next ','
        // or ')' outside parentheses, and bound by the planner.
        const bool lateness = IsKw(Peek(), "LATENESS");
        Pos at = Take().pos;
        (lateness ? col.lateness_pos : col.watermark_pos) = Peek().pos;
        size_t begin = Peek().pos.offset;
        int depth = 0;
        while (!AtEnd() && !(depth == 0 && (IsSym(Peek(), ",") || IsSym(Peek(), ")")))) {
          if (IsSym(Peek(), "(")) ++depth;
          if (IsSym(Peek(), ")")) --depth;
          Take();
        }
        if (last_end_ <= begin) FailAt(at, lateness ? "LATENESS needs an expression" : "WATERMARK needs an expression");
        (lateness ? col.lateness : col.watermark) = std::string(sql_.substr(begin, last_end_ - begin));
      } else {
        break;
      }
    }
    return col;
  }

  // REFERENCES table [(columns)]: accepted and not enforced.
  void ParseReferences() {
    ExpectKw("REFERENCES");
    ParseName("a table name");
    if (IsSym(Peek(), "(")) ParseNameList("a column name");
  }

  // WITH ('key' = 'value', ...); the WITH is already consumed.
  std::vector<Property> ParseProperties() {
    std::vector<Property> props;
    ExpectSym("(");
    do {
      Property p;
      p.pos = Peek().pos;
      if (Peek().kind == TokenKind::kString || Peek().kind == TokenKind::kQuotedIdent) {
        p.key = Take().text;
      } else {
        Expected("a property name (a string literal)");
      }
      ExpectSym("=");
      p.value_pos = Peek().pos;
      p.value = ParseStringLiteral("a property value (a string literal)");
      props.push_back(std::move(p));
    } while (AcceptSym(","));
    ExpectSym(")");
    return props;
  }

  std::unique_ptr<Insert> ParseInsert() {
    Take();  // INSERT
    ExpectKw("INTO");
    auto ins = std::make_unique<Insert>();
    ins->table = ParseName("a table name");
    if (IsSym(Peek(), "(") && !ParenStartsQuery(1)) ins->columns = ParseNameList("a column name");
    if (AcceptKw("VALUES")) {
      do {
        ExpectSym("(");
        std::vector<ExprPtr> row;
        do {
          row.push_back(ParseExpr());
        } while (AcceptSym(","));
        ExpectSym(")");
        ins->rows.push_back(std::move(row));
      } while (AcceptSym(","));
    } else if (IsKw(Peek(), "SELECT") || IsKw(Peek(), "WITH") || IsSym(Peek(), "(")) {
      ins->query = ParseQueryExpr();
    } else {
      Expected("VALUES or a query");
    }
    return ins;
  }

  // ---- types ----

  int32_t ParseTypeParam(std::string_view what) {
    const Token& t = Peek();
    int64_t v = ParseInteger(what);
    if (v > 1000000000) FailAt(t.pos, fmt::format("{} is too large", what));
    return static_cast<int32_t>(v);
  }

  // Optional "(n)" after CHAR / VARCHAR / FLOAT; returns `dflt` when absent.
  int32_t ParseOptionalLength(int32_t dflt) {
    if (!AcceptSym("(")) return dflt;
    const Token& t = Peek();
    int32_t n = ParseTypeParam("a length");
    if (n < 1) FailAt(t.pos, "a length must be at least 1");
    ExpectSym(")");
    return n;
  }

  SqlType ParseType(bool for_cast) {
    const Token& name = Peek();
    if (name.kind != TokenKind::kIdent) Expected("a type name");
    Take();
    SqlType t = ParseBaseType(name, for_cast);
    // t ARRAY [ARRAY ...]; NOT NULL right after the element type belongs to the elements.
    while (IsKw(Peek(), "ARRAY")) {
      Take();
      t = SqlType::Array(t);
    }
    if (IsKw(Peek(), "MULTISET")) FailAt(Peek().pos, "MULTISET types are not supported yet");
    return t;
  }

  SqlType ParseBaseType(const Token& name, bool for_cast) {
    std::string u = name.upper;
    Pos pos = name.pos;
    if (u == "BOOLEAN" || u == "BOOL") return SqlType::Of(TypeId::kBoolean);
    if (u == "TINYINT" || u == "INT1") return SqlType::Of(TypeId::kTinyInt);
    if (u == "SMALLINT" || u == "INT2") return SqlType::Of(TypeId::kSmallInt);
    if (u == "INT" || u == "INTEGER" || u == "INT4") return SqlType::Of(TypeId::kInteger);
    if (u == "BIGINT" || u == "INT8") return SqlType::Of(TypeId::kBigInt);
    if (u == "DECIMAL" || u == "NUMERIC" || u == "DEC") return ParseDecimalArgs();
    if (u == "REAL" || u == "FLOAT4") return SqlType::Of(TypeId::kReal);
    if (u == "DOUBLE") {
      AcceptKw("PRECISION");
      return SqlType::Of(TypeId::kDouble);
    }
    if (u == "FLOAT" || u == "FLOAT8") {
      ParseOptionalLength(53);
      return SqlType::Of(TypeId::kDouble);
    }
    if (u == "VARCHAR" || u == "STRING" || u == "TEXT") {
      SqlType t = SqlType::Of(TypeId::kVarchar);
      if (u == "VARCHAR") t.length = ParseOptionalLength(-1);
      return t;
    }
    if (u == "CHAR" || u == "CHARACTER") {
      if (AcceptKw("VARYING")) {
        SqlType t = SqlType::Of(TypeId::kVarchar);
        t.length = ParseOptionalLength(-1);
        return t;
      }
      SqlType t = SqlType::Of(TypeId::kChar);
      t.length = ParseOptionalLength(1);
      return t;
    }
    if (u == "DATE") return SqlType::Of(TypeId::kDate);
    if (u == "TIME" || u == "TIMESTAMP") {
      // TIME(p) / TIMESTAMP(p): fld keeps microseconds whatever the precision.
      if (AcceptSym("(")) {
        ParseTypeParam("a precision");
        ExpectSym(")");
      }
      if (IsKw(Peek(), "WITHOUT") && IsKw(Peek(1), "TIME") && IsKw(Peek(2), "ZONE")) {
        Take();
        Take();
        Take();
      } else if (IsKw(Peek(), "WITH") && IsKw(Peek(1), "TIME") && IsKw(Peek(2), "ZONE")) {
        FailAt(Peek().pos, "time zones (WITH TIME ZONE) are not supported yet");
      }
      return SqlType::Of(u == "TIME" ? TypeId::kTime : TypeId::kTimestamp);
    }
    if (u == "BINARY" || u == "VARBINARY") {
      if (u == "BINARY" && AcceptKw("VARYING")) u = "VARBINARY";
      SqlType t = SqlType::Of(u == "BINARY" ? TypeId::kBinary : TypeId::kVarbinary);
      t.length = ParseOptionalLength(u == "BINARY" ? 1 : -1);
      return t;
    }
    if (u == "ROW" && AcceptSym("(")) return ParseRowFields();
    if (auto it = user_types_.find(u); it != user_types_.end()) return it->second;
    if (u == "MAP") {
      // MAP<K, V>: keys NOT NULL, values nullable (as Feldera).
      ExpectSym("<");
      SqlType k = ParseType(for_cast).WithNullable(false);
      ExpectSym(",");
      SqlType v = ParseType(for_cast);
      ExpectSym(">");
      if (k.id == TypeId::kMap) FailAt(pos, "MAP keys cannot be MAPs");
      return SqlType::Map(k, v.WithNullable(true));
    }
    if (u == "VARIANT") return SqlType::Of(TypeId::kVariant);
    if (u == "GEOMETRY") return SqlType::Of(TypeId::kGeometry);
    if (u == "UUID") return SqlType::Of(TypeId::kUuid);
    if (u == "INTERVAL") {
      if (!for_cast) FailAt(pos, "a table column cannot be an INTERVAL (as in Feldera)");
      return ParseIntervalQualifier();
    }
    if (for_cast && (u == "SIGNED" || u == "UNSIGNED")) {
      AcceptKw("INTEGER") || AcceptKw("INT");
      return SqlType::Of(TypeId::kBigInt);
    }
    FailAt(pos, fmt::format("unknown type '{}'", name.text));
  }

  // An interval field word (YEAR, MONTHS, DAY, ...) at the current token, or nullopt.
  std::optional<IntervalField> PeekIntervalField(size_t k = 0) const {
    const Token& t = Peek(k);
    if (t.kind != TokenKind::kIdent) return std::nullopt;
    std::string_view u = t.upper;
    if (u.size() > 1 && u.back() == 'S') u.remove_suffix(1);
    if (u == "SECOND") return IntervalField::kSecond;
    if (u == "MINUTE") return IntervalField::kMinute;
    if (u == "HOUR") return IntervalField::kHour;
    if (u == "DAY") return IntervalField::kDay;
    if (u == "MONTH") return IntervalField::kMonth;
    if (u == "YEAR") return IntervalField::kYear;
    return std::nullopt;
  }

  // field [(p)] [TO field [(p)]]: an INTERVAL type (precisions are accepted and ignored).
  SqlType ParseIntervalQualifier() {
    auto field = [&]() {
      std::optional<IntervalField> f = PeekIntervalField();
      if (!f) Expected("an interval unit (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND)");
      Take();
      if (AcceptSym("(")) {
        ParseTypeParam("a precision");
        if (AcceptSym(",")) ParseTypeParam("a precision");
        ExpectSym(")");
      }
      return *f;
    };
    Pos pos = Peek().pos;
    IntervalField first = field(), last = first;
    if (AcceptKw("TO")) {
      Pos to_pos = Peek().pos;
      last = field();
      const bool ym_first = first >= IntervalField::kMonth, ym_last = last >= IntervalField::kMonth;
      if (last >= first || ym_first != ym_last)
        FailAt(to_pos, "not a valid interval range (YEAR TO MONTH, or DAY/HOUR/MINUTE TO HOUR/MINUTE/SECOND)");
    }
    (void)pos;
    return SqlType::Interval(first, last);
  }

  SqlType ParseDecimalArgs() {
    // DECIMAL alone is DECIMAL(38, 0), as in Feldera.
    int32_t p = kMaxDecimalPrecision, s = 0;
    if (AcceptSym("(")) {
      const Token& pt = Peek();
      p = ParseTypeParam("a precision");
      if (p < 1) FailAt(pt.pos, "DECIMAL precision must be at least 1");
      if (p > kMaxDecimalPrecision)
        FailAt(pt.pos, fmt::format("DECIMAL precision {} is above the maximum, {}", p, kMaxDecimalPrecision));
      if (AcceptSym(",")) {
        const Token& st = Peek();
        s = ParseTypeParam("a scale");
        if (s > p) FailAt(st.pos, fmt::format("DECIMAL scale {} is larger than its precision {}", s, p));
      }
      ExpectSym(")");
    }
    return SqlType::Decimal(p, s);
  }

  // ---- queries ----

  // WITH name [(cols)] AS (query), ... ; the WITH is already consumed.
  std::vector<CommonTableExpr> ParseWith() {
    if (IsKw(Peek(), "RECURSIVE")) FailAt(Peek().pos, "WITH RECURSIVE (recursive queries) is not supported yet");
    std::vector<CommonTableExpr> ctes;
    do {
      CommonTableExpr cte;
      cte.pos = Peek().pos;
      cte.name = ParseName("a name for the WITH query");
      if (IsSym(Peek(), "(")) cte.column_names = ParseNameList("a column name");
      ExpectKw("AS");
      ExpectSym("(");
      cte.query = ParseQueryExpr();
      ExpectSym(")");
      ctes.push_back(std::move(cte));
    } while (AcceptSym(","));
    return ctes;
  }

  // [WITH ...] set_expr [ORDER BY ...] [LIMIT n] [OFFSET m]
  std::unique_ptr<Query> ParseQueryExpr() {
    DepthGuard guard(this);
    std::vector<CommonTableExpr> with;
    if (AcceptKw("WITH")) with = ParseWith();
    auto q = ParseUnionLevel();
    if (!with.empty()) {
      if (!q->with.empty()) {
        // WITH a AS (...) (WITH b AS (...) SELECT ...): keep both, the outer ones first.
        for (auto& c : q->with) with.push_back(std::move(c));
      }
      q->with = std::move(with);
    }
    bool has_order = IsKw(Peek(), "ORDER");
    bool has_limit = IsKw(Peek(), "LIMIT") || IsKw(Peek(), "OFFSET");
    if ((has_order || has_limit) && (!q->order_by.empty() || q->limit || q->offset)) {
      FailAt(Peek().pos, "a query in parentheses with its own ORDER BY or LIMIT cannot take another one");
    }
    if (AcceptKw("ORDER")) {
      ExpectKw("BY");
      do {
        q->order_by.push_back(ParseOrderItem());
      } while (AcceptSym(","));
    }
    if (AcceptKw("LIMIT")) q->limit = ParseInteger("an integer");
    if (AcceptKw("OFFSET")) q->offset = ParseInteger("an integer");
    return q;
  }

  // expr [ASC | DESC] [NULLS FIRST | NULLS LAST]
  OrderItem ParseOrderItem() {
    OrderItem item;
    item.expr = ParseExpr();
    if (AcceptKw("DESC")) {
      item.desc = true;
    } else {
      AcceptKw("ASC");
    }
    if (AcceptKw("NULLS")) {
      if (AcceptKw("FIRST")) {
        item.nulls_first = true;
      } else if (AcceptKw("LAST")) {
        item.nulls_first = false;
      } else {
        Expected("FIRST or LAST");
      }
    }
    return item;
  }

  // The inside of a window's parentheses: [name] [PARTITION BY e, ...] [ORDER BY item, ...]
  // [{ROWS | RANGE | GROUPS} {bound | BETWEEN bound AND bound} [EXCLUDE ...]].
  std::unique_ptr<WindowSpec> ParseWindowBody(Pos pos) {
    auto w = std::make_unique<WindowSpec>();
    w->pos = pos;
    if (AtImplicitAlias() && !IsKw(Peek(), "PARTITION") && !IsKw(Peek(), "ROWS") && !IsKw(Peek(), "RANGE") &&
        !IsKw(Peek(), "GROUPS"))
      w->ref = Take().text;
    if (AcceptKw("PARTITION")) {
      ExpectKw("BY");
      do {
        w->partition_by.push_back(ParseExpr());
      } while (AcceptSym(","));
    }
    if (AcceptKw("ORDER")) {
      ExpectKw("BY");
      do {
        w->order_by.push_back(ParseOrderItem());
      } while (AcceptSym(","));
    }
    if (IsKw(Peek(), "ROWS") || IsKw(Peek(), "RANGE") || IsKw(Peek(), "GROUPS")) {
      w->has_frame = true;
      const std::string unit = Take().upper;
      w->unit = unit == "ROWS" ? FrameUnit::kRows : unit == "RANGE" ? FrameUnit::kRange : FrameUnit::kGroups;
      if (AcceptKw("BETWEEN")) {
        ParseFrameBound(&w->start);
        ExpectKw("AND");
        ParseFrameBound(&w->end);
      } else {
        ParseFrameBound(&w->start);
        w->end.kind = FrameBound::Kind::kCurrentRow;
        w->end.pos = w->start.pos;
      }
      // EXCLUDE CURRENT ROW | GROUP | TIES | NO OTHERS
      if (AcceptKw("EXCLUDE")) {
        if (AcceptKw("CURRENT")) {
          ExpectKw("ROW");
          w->exclude = FrameExclude::kCurrentRow;
        } else if (AcceptKw("GROUP")) {
          w->exclude = FrameExclude::kGroup;
        } else if (AcceptKw("TIES")) {
          w->exclude = FrameExclude::kTies;
        } else if (AcceptKw("NO")) {
          ExpectKw("OTHERS");
          w->exclude = FrameExclude::kNoOthers;
        } else {
          Expected("CURRENT ROW, GROUP, TIES or NO OTHERS");
        }
      }
    }
    return w;
  }

  // UNBOUNDED PRECEDING | UNBOUNDED FOLLOWING | CURRENT ROW | offset PRECEDING | offset FOLLOWING
  void ParseFrameBound(FrameBound* b) {
    b->pos = Peek().pos;
    if (AcceptKw("UNBOUNDED")) {
      if (AcceptKw("PRECEDING")) {
        b->kind = FrameBound::Kind::kUnboundedPreceding;
      } else if (AcceptKw("FOLLOWING")) {
        b->kind = FrameBound::Kind::kUnboundedFollowing;
      } else {
        Expected("PRECEDING or FOLLOWING");
      }
      return;
    }
    if (AcceptKw("CURRENT")) {
      ExpectKw("ROW");
      b->kind = FrameBound::Kind::kCurrentRow;
      return;
    }
    b->offset = ParseAdditive();
    if (AcceptKw("PRECEDING")) {
      b->kind = FrameBound::Kind::kPreceding;
    } else if (AcceptKw("FOLLOWING")) {
      b->kind = FrameBound::Kind::kFollowing;
    } else {
      Expected("PRECEDING or FOLLOWING");
    }
  }

  static std::unique_ptr<Query> NewSetOp(SetOp op, bool all, std::unique_ptr<Query> l, std::unique_ptr<Query> r) {
    auto q = std::make_unique<Query>();
    q->pos = l->pos;
    q->set_op = op;
    q->set_all = all;
    q->left = std::move(l);
    q->right = std::move(r);
    return q;
  }

  // ALL -> true, DISTINCT or nothing -> false.
  bool ParseSetQuantifier() {
    if (AcceptKw("ALL")) return true;
    AcceptKw("DISTINCT");
    return false;
  }

  // UNION and EXCEPT: left-associative, looser than INTERSECT.
  std::unique_ptr<Query> ParseUnionLevel() {
    auto q = ParseIntersectLevel();
    for (;;) {
      SetOp op;
      if (AcceptKw("UNION")) {
        op = SetOp::kUnion;
      } else if (AcceptKw("EXCEPT")) {
        op = SetOp::kExcept;
      } else {
        return q;
      }
      bool all = ParseSetQuantifier();
      q = NewSetOp(op, all, std::move(q), ParseIntersectLevel());
    }
  }

  std::unique_ptr<Query> ParseIntersectLevel() {
    auto q = ParseQueryPrimary();
    while (AcceptKw("INTERSECT")) {
      bool all = ParseSetQuantifier();
      q = NewSetOp(SetOp::kIntersect, all, std::move(q), ParseQueryPrimary());
    }
    return q;
  }

  std::unique_ptr<Query> ParseQueryPrimary() {
    const Token& t = Peek();
    if (IsSym(t, "(")) {
      Take();
      auto q = ParseQueryExpr();
      ExpectSym(")");
      return q;
    }
    if (IsKw(t, "VALUES")) return ParseValuesQuery();
    if (!IsKw(t, "SELECT")) Expected("SELECT");
    auto q = std::make_unique<Query>();
    q->pos = t.pos;
    q->select = ParseSelect();
    return q;
  }

  // VALUES (..), (..) as a query: a UNION ALL of one-row SELECTs without FROM.
  std::unique_ptr<Query> ParseValuesQuery() {
    Take();  // VALUES
    std::unique_ptr<Query> result;
    do {
      auto q = std::make_unique<Query>();
      q->pos = Peek().pos;
      q->select = std::make_unique<Select>();
      q->select->pos = q->pos;
      ExpectSym("(");
      do {
        SelectItem item;
        item.pos = Peek().pos;
        item.expr = ParseExpr();
        q->select->items.push_back(std::move(item));
      } while (AcceptSym(","));
      ExpectSym(")");
      result = result ? NewSetOp(SetOp::kUnion, true, std::move(result), std::move(q)) : std::move(q);
    } while (AcceptSym(","));
    return result;
  }

  std::unique_ptr<Select> ParseSelect() {
    auto sel = std::make_unique<Select>();
    sel->pos = Take().pos;  // SELECT
    if (AcceptKw("DISTINCT")) {
      sel->distinct = true;
    } else {
      AcceptKw("ALL");
    }
    do {
      sel->items.push_back(ParseSelectItem());
    } while (AcceptSym(","));
    if (AcceptKw("FROM")) {
      do {
        sel->from.push_back(ParseJoinChain());
      } while (AcceptSym(","));
    }
    if (AcceptKw("WHERE")) sel->where = ParseExpr();
    if (AcceptKw("GROUP")) {
      ExpectKw("BY");
      // Each element is a list of grouping sets; the whole GROUP BY is their cross product.
      std::vector<std::vector<int>> sets{{}};
      bool has_sets = false;
      do {
        std::vector<std::vector<int>> elem = ParseGroupingElement(sel.get(), /*nested=*/false, &has_sets);
        std::vector<std::vector<int>> product;
        for (const auto& a : sets)
          for (const auto& b : elem) {
            product.push_back(a);
            product.back().insert(product.back().end(), b.begin(), b.end());
          }
        sets = std::move(product);
        if (sets.size() > 4096) FailAt(Peek().pos, "more than 4096 grouping sets");
      } while (AcceptSym(","));
      if (has_sets) sel->grouping_sets = std::move(sets);
    }
    if (AcceptKw("HAVING")) sel->having = ParseExpr();
    if (AcceptKw("WINDOW")) {
      do {
        std::string name = ParseName("a window name");
        ExpectKw("AS");
        Pos pos = Peek().pos;
        ExpectSym("(");
        auto w = ParseWindowBody(pos);
        ExpectSym(")");
        sel->windows.emplace_back(std::move(name), std::move(w));
      } while (AcceptSym(","));
    }
    return sel;
  }

  // One GROUP BY element as its list of grouping sets (indices into sel->group_by): an
  // expression; `()`; ROLLUP (...), CUBE (...) or GROUPING SETS (...). Inside those (`nested`),
  // `(a, b)` is one set of several expressions. Sets *has_sets when it is not a plain expression.
  // True at `(a, b, ...)`: a parenthesised list (GROUP BY (a, b) groups by a and b), not an
  // expression in parentheses.
  bool ParenListAhead() {
    if (!IsSym(Peek(), "(") || ParenStartsQuery(1)) return false;
    const size_t mark = i_;
    Take();
    ParseExpr();
    const bool list = IsSym(Peek(), ",");
    i_ = mark;
    return list;
  }

  std::vector<std::vector<int>> ParseGroupingElement(Select* sel, bool nested, bool* has_sets) {
    auto add = [&](ExprPtr e) {
      sel->group_by.push_back(std::move(e));
      return static_cast<int>(sel->group_by.size()) - 1;
    };
    // `(a, b)`, `()` or `a`: one set.
    auto one_set = [&](bool inner) -> std::vector<int> {
      std::vector<int> set;
      if (IsSym(Peek(), "(") && (inner || IsSym(Peek(1), ")") || ParenListAhead()) && !ParenStartsQuery(1)) {
        Take();
        if (!IsSym(Peek(), ")")) {
          do {
            set.push_back(add(ParseExpr()));
          } while (AcceptSym(","));
        }
        ExpectSym(")");
        return set;
      }
      set.push_back(add(ParseExpr()));
      return set;
    };
    const bool rollup = IsKw(Peek(), "ROLLUP") && IsSym(Peek(1), "(");
    const bool cube = IsKw(Peek(), "CUBE") && IsSym(Peek(1), "(");
    const bool grouping_sets = IsKw(Peek(), "GROUPING") && IsKw(Peek(1), "SETS");
    if (!rollup && !cube && !grouping_sets) {
      if (IsSym(Peek(), "(") && IsSym(Peek(1), ")")) *has_sets = true;
      return {one_set(nested)};
    }
    *has_sets = true;
    Take();
    if (grouping_sets) Take();
    ExpectSym("(");
    std::vector<std::vector<int>> out;
    if (grouping_sets) {
      do {
        if ((IsKw(Peek(), "GROUPING") && IsKw(Peek(1), "SETS")) ||
            ((IsKw(Peek(), "ROLLUP") || IsKw(Peek(), "CUBE")) && IsSym(Peek(1), "("))) {
          for (auto& s : ParseGroupingElement(sel, true, has_sets)) out.push_back(std::move(s));
        } else {
          out.push_back(one_set(true));
        }
      } while (AcceptSym(","));
    } else {
      std::vector<std::vector<int>> parts;
      do {
        parts.push_back(one_set(true));
      } while (AcceptSym(","));
      if (cube && parts.size() > 12) FailAt(Peek().pos, "CUBE takes at most 12 elements");
      if (rollup) {
        // ROLLUP (a, b) = GROUPING SETS ((a, b), (a), ()).
        for (size_t n = parts.size() + 1; n-- > 0;) {
          std::vector<int> set;
          for (size_t i = 0; i < n; ++i) set.insert(set.end(), parts[i].begin(), parts[i].end());
          out.push_back(std::move(set));
        }
      } else {
        // CUBE (a, b) = GROUPING SETS ((a, b), (a), (b), ()): every subset, largest first.
        const size_t n = parts.size();
        for (size_t mask = (size_t{1} << n); mask-- > 0;) {
          std::vector<int> set;
          for (size_t i = 0; i < n; ++i)
            if (mask & (size_t{1} << (n - 1 - i))) set.insert(set.end(), parts[i].begin(), parts[i].end());
          out.push_back(std::move(set));
        }
      }
    }
    ExpectSym(")");
    return out;
  }

  SelectItem ParseSelectItem() {
    SelectItem item;
    const Token& t = Peek();
    item.pos = t.pos;
    if (IsSym(t, "*")) {
      Take();
      item.expr = NewExpr(ExprKind::kStar, t.pos);
      return item;
    }
    if ((t.kind == TokenKind::kIdent || t.kind == TokenKind::kQuotedIdent) && IsSym(Peek(1), ".") &&
        IsSym(Peek(2), "*")) {
      item.expr = NewExpr(ExprKind::kStar, t.pos);
      item.expr->qualifier = Take().text;
      Take();
      Take();
      return item;
    }
    item.expr = ParseExpr();
    item.alias = ParseOptionalAlias();
    return item;
  }

  // table_primary { join table_primary [ON e | USING (cols)] }, left-associative.
  std::unique_ptr<TableRef> ParseJoinChain() {
    auto left = ParseTablePrimary();
    for (;;) {
      Pos join_pos = Peek().pos;
      bool natural = AcceptKw("NATURAL");
      JoinType type;
      bool asof = false;
      if (IsKw(Peek(), "ASOF") && IsKw(Peek(1), "JOIN")) {  // ASOF JOIN: the inner form
        Take();
        type = JoinType::kInner;
        asof = true;
      } else if (IsKw(Peek(), "LEFT") && IsKw(Peek(1), "ASOF")) {
        Take();
        Take();
        type = JoinType::kLeft;
        asof = true;
      } else if (AcceptKw("CROSS")) {
        type = JoinType::kCross;
      } else if (AcceptKw("INNER")) {
        type = JoinType::kInner;
      } else if (AcceptKw("LEFT")) {
        type = JoinType::kLeft;
        AcceptKw("OUTER");
      } else if (AcceptKw("RIGHT")) {
        type = JoinType::kRight;
        AcceptKw("OUTER");
      } else if (AcceptKw("FULL")) {
        type = JoinType::kFull;
        AcceptKw("OUTER");
      } else if (IsKw(Peek(), "JOIN")) {
        type = JoinType::kInner;
      } else {
        if (natural) Expected("JOIN");
        return left;
      }
      if (natural && type == JoinType::kCross) FailAt(join_pos, "NATURAL CROSS JOIN is not valid");
      if (natural && asof) FailAt(join_pos, "NATURAL ASOF JOIN is not valid");
      ExpectKw("JOIN");
      auto join = std::make_unique<TableRef>();
      join->kind = TableRef::Kind::kJoin;
      join->pos = left->pos;
      join->join_type = type;
      join->natural = natural;
      join->left = std::move(left);
      join->right = ParseTablePrimary();
      if (asof) {
        // MATCH_CONDITION [(] left.ts >= right.ts [)] ON equalities (Feldera's, after Snowflake).
        if (!IsKw(Peek(), "MATCH_CONDITION")) Expected("MATCH_CONDITION after ASOF JOIN's right side");
        join->asof_pos = Take().pos;
        join->match_condition = ParseExpr();
        if (!AcceptKw("ON")) Expected("ON after ASOF JOIN's MATCH_CONDITION");
        join->on = ParseExpr();
      } else if (type != JoinType::kCross && !natural) {
        if (AcceptKw("ON")) {
          join->on = ParseExpr();
        } else if (AcceptKw("USING")) {
          join->using_cols = ParseNameList("a column name");
        } else if (type != JoinType::kInner) {
          Expected("ON or USING");
        }
        // An INNER JOIN without a condition (SQLite accepts it) leaves `on` null: a cross product.
      }
      left = std::move(join);
    }
  }

  std::unique_ptr<TableRef> ParseTablePrimary() {
    DepthGuard guard(this);
    if (IsKw(Peek(), "LATERAL") && (IsSym(Peek(1), "(") || Peek(1).kind == TokenKind::kIdent)) {
      const Pos at = Take().pos;
      // LATERAL UNNEST(...) is the plain form (UNNEST reads the item before it anyway).
      if (IsKw(Peek(), "UNNEST")) return ParseTablePrimary();
      if (!IsSym(Peek(), "(") || !ParenStartsQuery(1)) FailAt(at, "LATERAL needs a query in parentheses");
      auto ref = ParseTablePrimary();
      ref->lateral = true;
      ref->pos = at;
      return ref;
    }
    const Token& t = Peek();
    if (IsSym(t, "(")) {
      if (ParenStartsQuery(1)) {
        auto ref = std::make_unique<TableRef>();
        ref->kind = TableRef::Kind::kSubquery;
        ref->pos = t.pos;
        Take();
        ref->subquery = ParseQueryExpr();
        ExpectSym(")");
        ref->alias = ParseOptionalAlias();
        return ref;
      }
      Take();
      auto inner = ParseJoinChain();
      ExpectSym(")");
      if (AcceptKw("AS") || AtImplicitAlias()) {
        if (inner->kind == TableRef::Kind::kJoin) {
          FailAt(Peek().pos, "an alias for a parenthesized join is not supported");
        }
        if (!inner->alias.empty()) FailAt(Peek().pos, "this table reference already has an alias");
        inner->alias = ParseName("an alias");
      }
      return inner;
    }
    if (IsKw(t, "UNNEST") && IsSym(Peek(1), "(")) {
      auto ref = std::make_unique<TableRef>();
      ref->kind = TableRef::Kind::kUnnest;
      ref->pos = Take().pos;
      ExpectSym("(");
      do {
        ref->unnest.push_back(ParseExpr());
      } while (AcceptSym(","));
      ExpectSym(")");
      if (AcceptKw("WITH")) {
        ExpectKw("ORDINALITY");
        ref->with_ordinality = true;
      }
      ref->alias = ParseOptionalAlias();
      if (!ref->alias.empty() && IsSym(Peek(), "(")) ref->column_names = ParseNameList("a column name");
      return ref;
    }
    if (IsKw(t, "TABLE") && IsSym(Peek(1), "(")) return ParseWindowTable();
    auto ref = std::make_unique<TableRef>();
    ref->kind = TableRef::Kind::kTable;
    ref->pos = t.pos;
    ref->name = ParseName("a table name");
    ref->alias = ParseOptionalAlias();
    return ref;
  }

  // TABLE(TUMBLE(data, DESCRIPTOR(col), size [, offset])), TABLE(HOP(data, DESCRIPTOR(col),
  // slide, size [, offset])) or TABLE(SESSION(data, DESCRIPTOR(col), [DESCRIPTOR(key, ...),]
  // size)) [AS alias]; data is `TABLE name` or a parenthesized query; the arguments may be
  // named: "DATA" => ..., "TIMECOL" => ..., "KEY", "SIZE", "SLIDE", "OFFSET".
  std::unique_ptr<TableRef> ParseWindowTable() {
    auto ref = std::make_unique<TableRef>();
    ref->kind = TableRef::Kind::kWindow;
    ref->pos = Take().pos;  // TABLE
    ExpectSym("(");
    const Token& fn = Peek();
    if (fn.kind != TokenKind::kIdent) Expected("a table function (TUMBLE, HOP or SESSION)");
    if (fn.upper != "TUMBLE" && fn.upper != "HOP" && fn.upper != "SESSION")
      FailAt(fn.pos, fmt::format("table function {} is not supported (TUMBLE, HOP and SESSION are)", fn.text));
    ref->name = Take().upper;
    const bool hop = ref->name == "HOP", session = ref->name == "SESSION";
    const std::vector<std::string_view> names =
        hop       ? std::vector<std::string_view>{"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"}
        : session ? std::vector<std::string_view>{"DATA", "TIMECOL", "KEY", "SIZE"}
                  : std::vector<std::string_view>{"DATA", "TIMECOL", "SIZE", "OFFSET"};
    std::vector<ExprPtr> slots(names.size());
    bool have_data = false, have_col = false;
    ExpectSym("(");
    size_t position = 0;
    do {
      size_t slot = position++;
      if ((Peek().kind == TokenKind::kQuotedIdent || Peek().kind == TokenKind::kIdent) && IsSym(Peek(1), "=") &&
          IsSym(Peek(2), ">")) {
        const Token& n = Take();
        std::string upper = ToUpper(n.text);
        auto it = std::find(names.begin(), names.end(), upper);
        if (it == names.end()) FailAt(n.pos, fmt::format("{} has no parameter named {}", ref->name, n.text));
        slot = static_cast<size_t>(it - names.begin());
        Take();
        Take();
      }
      // SESSION's key DESCRIPTOR may be left out.
      if (session && slot == 2 && !IsKw(Peek(), "DESCRIPTOR")) slot = position++;
      if (slot >= names.size()) FailAt(Peek().pos, fmt::format("too many arguments for {}", ref->name));
      if (slot == 0) {
        auto data = std::make_unique<TableRef>();
        data->pos = Peek().pos;
        if (AcceptKw("TABLE")) {
          data->kind = TableRef::Kind::kTable;
          data->name = ParseName("a table name");
        } else if (IsSym(Peek(), "(") && ParenStartsQuery(1)) {
          Take();
          data->kind = TableRef::Kind::kSubquery;
          data->subquery = ParseQueryExpr();
          ExpectSym(")");
        } else {
          Expected("TABLE name or a query in parentheses");
        }
        ref->left = std::move(data);
        have_data = true;
      } else if (session && slot == 2) {
        ExpectKw("DESCRIPTOR");
        ref->window_keys = ParseNameList("a column name");
      } else if (slot == 1) {
        ExpectKw("DESCRIPTOR");
        ref->using_cols = ParseNameList("a column name");
        if (ref->using_cols.size() != 1) FailAt(Peek().pos, "DESCRIPTOR takes one column");
        have_col = true;
      } else {
        slots[slot] = ParseExpr();
      }
    } while (AcceptSym(","));
    ExpectSym(")");
    ExpectSym(")");
    if (!have_data || !have_col) FailAt(ref->pos, fmt::format("{} needs a table and a DESCRIPTOR column", ref->name));
    for (size_t k = 2; k < slots.size(); ++k) {
      if (session && k == 2) continue;
      if (!slots[k] && names[k] != "OFFSET")
        FailAt(ref->pos, fmt::format("{} needs its {} argument", ref->name, names[k]));
      if (slots[k]) ref->window_args.push_back(std::move(slots[k]));
    }
    ref->alias = ParseOptionalAlias();
    return ref;
  }

  // ---- expressions ----

  ExprPtr ParseExpr() {
    DepthGuard guard(this);
    return ParseOr();
  }

  ExprPtr ParseOr() {
    auto e = ParseAnd();
    while (AcceptKw("OR")) e = NewBinary(Op::kOr, std::move(e), ParseAnd());
    return e;
  }

  ExprPtr ParseAnd() {
    auto e = ParseNot();
    while (AcceptKw("AND")) e = NewBinary(Op::kAnd, std::move(e), ParseNot());
    return e;
  }

  ExprPtr ParseNot() {
    if (!IsKw(Peek(), "NOT")) return ParseComparison();
    DepthGuard guard(this);
    Pos pos = Take().pos;
    auto operand = ParseNot();
    if (operand->kind == ExprKind::kExists && !operand->negated) {
      // NOT EXISTS (...) is the negated form of EXISTS.
      operand->negated = true;
      operand->pos = pos;
      return operand;
    }
    auto e = NewExpr(ExprKind::kUnary, pos);
    e->op = Op::kNot;
    e->args.push_back(std::move(operand));
    return e;
  }

  // Comparisons and the predicates (IS, BETWEEN, IN, LIKE). They chain left to right, so
  // `a = b IS NULL` reads as `(a = b) IS NULL`.
  ExprPtr ParseComparison() {
    const size_t start = i_;
    auto e = ParseConcat();
    for (bool first = true;; first = false) {
      const Token& t = Peek();
      Op op = ComparisonOp(t);
      if (op != Op::kNone) {
        Take();
        if ((IsKw(Peek(), "ANY") || IsKw(Peek(), "SOME") || IsKw(Peek(), "ALL")) && IsSym(Peek(1), "(") &&
            ParenStartsQuery(2)) {
          if (!first) FailAt(t.pos, "a quantified comparison's left side must not be a comparison");
          e = ParseQuantified(start, std::move(e), op);
          continue;
        }
        e = NewBinary(op, std::move(e), ParseConcat());
        continue;
      }
      if (IsKw(t, "IS")) {
        e = ParseIsTail(std::move(e));
        continue;
      }
      if (IsSym(t, "<=>")) {  // a <=> b: a IS NOT DISTINCT FROM b
        Take();
        auto d = NewExpr(ExprKind::kIsDistinct, e->pos);
        d->args.push_back(std::move(e));
        d->args.push_back(ParseConcat());
        d->negated = true;
        e = std::move(d);
        continue;
      }
      bool negated = false;
      size_t k = 0;
      if (IsKw(t, "NOT")) {
        negated = true;
        k = 1;
      }
      const Token& kw = Peek(k);
      if (IsKw(kw, "BETWEEN")) {
        for (size_t j = 0; j <= k; ++j) Take();
        AcceptKw("ASYMMETRIC");
        const bool symmetric = AcceptKw("SYMMETRIC");
        auto b = NewExpr(ExprKind::kBetween, e->pos);
        b->args.push_back(std::move(e));
        const size_t lo_start = i_;
        b->args.push_back(ParseConcat());
        ExpectKw("AND");
        const size_t hi_start = i_;
        b->args.push_back(ParseConcat());
        if (symmetric) {
          // x BETWEEN SYMMETRIC a AND b: (x BETWEEN a AND b) OR (x BETWEEN b AND a).
          const size_t end = i_, end_byte = last_end_;
          if (!first) FailAt(kw.pos, "BETWEEN SYMMETRIC after a comparison is not supported yet");
          auto swapped = NewExpr(ExprKind::kBetween, b->pos);
          i_ = start;  // the tokens of x, a and b are parsed again for the second test
          swapped->args.push_back(ParseConcat());
          i_ = hi_start;
          swapped->args.push_back(ParseConcat());
          i_ = lo_start;
          swapped->args.push_back(ParseConcat());
          i_ = end;
          last_end_ = end_byte;
          e = NewBinary(Op::kOr, std::move(b), std::move(swapped));
          if (negated) {
            auto n = NewExpr(ExprKind::kUnary, e->pos);
            n->op = Op::kNot;
            n->args.push_back(std::move(e));
            e = std::move(n);
          }
        } else {
          b->negated = negated;
          e = std::move(b);
        }
      } else if (IsKw(kw, "IN")) {
        for (size_t j = 0; j <= k; ++j) Take();
        e = ParseInTail(std::move(e), negated);
      } else if (IsKw(kw, "RLIKE")) {
        for (size_t j = 0; j <= k; ++j) Take();
        auto call = NewExpr(ExprKind::kFunction, e->pos);
        call->name = "RLIKE";
        call->args.push_back(std::move(e));
        call->args.push_back(ParseConcat());
        e = std::move(call);
        if (negated) {
          auto n = NewExpr(ExprKind::kUnary, e->pos);
          n->op = Op::kNot;
          n->args.push_back(std::move(e));
          e = std::move(n);
        }
      } else if (IsKw(kw, "LIKE") || IsKw(kw, "ILIKE")) {
        // s ILIKE p (case-insensitive, as in Feldera and PostgreSQL) is LOWER(s) LIKE LOWER(p).
        const bool fold = IsKw(kw, "ILIKE");
        for (size_t j = 0; j <= k; ++j) Take();
        auto l = NewExpr(ExprKind::kLike, e->pos);
        l->negated = negated;
        auto lower = [&](ExprPtr x) {
          if (!fold) return x;
          auto call = NewExpr(ExprKind::kFunction, x->pos);
          call->name = "LOWER";
          call->args.push_back(std::move(x));
          return call;
        };
        l->args.push_back(lower(std::move(e)));
        l->args.push_back(lower(ParseConcat()));
        if (AcceptKw("ESCAPE")) l->args.push_back(ParseConcat());
        e = std::move(l);
      } else {
        return e;
      }
    }
  }

  // `x op ANY|SOME|ALL (query)`, after the operator; x was parsed from token `operand`. `= ANY`
  // is `x IN (query)` and `<> ALL` `x NOT IN (query)`; the others become a CASE over scalar
  // subqueries of the query's row count, non-NULL count and MIN and/or MAX (so they are
  // decorrelated like any scalar subquery), with SQL's three-valued answers:
  //   x op ANY: FALSE over no rows; TRUE when x op s for some s; else NULL when x or some s is
  //   NULL; else FALSE. x op ALL: TRUE over no rows; FALSE when NOT (x op s) for some s; else
  //   NULL when x or some s is NULL; else TRUE.
  // The operand and the query are parsed again from their tokens for each copy they need.
  ExprPtr ParseQuantified(size_t operand, ExprPtr x, Op op) {
    const Pos pos = x->pos;
    const std::string quant = Take().upper;  // ANY, SOME or ALL
    const bool all = quant == "ALL";
    Take();  // (
    const size_t query = i_;
    auto q = ParseQueryExpr();
    ExpectSym(")");
    if ((op == Op::kEq && !all) || (op == Op::kNe && all)) {
      auto r = NewExpr(ExprKind::kInQuery, pos);
      r->negated = all;
      r->args.push_back(std::move(x));
      r->subquery = std::move(q);
      return r;
    }
    const size_t after = i_, after_end = last_end_;
    auto again = [&](size_t from, bool is_query) {
      i_ = from;
      ExprPtr e;
      std::unique_ptr<Query> qq;
      if (is_query)
        qq = ParseQueryExpr();
      else
        e = ParseConcat();
      i_ = after;
      last_end_ = after_end;
      return std::make_pair(std::move(e), std::move(qq));
    };
    auto operand_copy = [&] { return again(operand, false).first; };
    // (SELECT fn(e) FROM ...) for the query's one column e (COUNT(*) when star).
    auto aggregate = [&](std::string fn, bool star) {
      auto qq = again(query, true).second;
      auto call = NewExpr(ExprKind::kFunction, pos);
      call->name = std::move(fn);
      call->star_arg = star;
      Select* sel = qq->select.get();
      const bool plain = sel && qq->with.empty() && !qq->limit && !qq->offset && sel->group_by.empty() &&
                         sel->grouping_sets.empty() && !sel->having && sel->windows.empty() && sel->items.size() == 1 &&
                         sel->items[0].expr->kind != ExprKind::kStar && !MayAggregate(*sel->items[0].expr);
      if (plain) {  // the aggregate replaces the select item, so a correlated query stays one
        if (!star) call->args.push_back(std::move(sel->items[0].expr));
        sel->items[0].expr = std::move(call);
        sel->distinct = false;  // changes no answer: only MIN, MAX and whether counts are 0 or equal
        qq->order_by.clear();
      } else {  // SELECT fn(c) FROM (query) AS quantified, c the query's first column
        Query* first = qq.get();
        while (!first->select && first->left) first = first->left.get();
        std::string column = "c";
        if (first->select && !first->select->items.empty()) {
          SelectItem& item = first->select->items[0];
          if (item.alias.empty() && item.expr->kind == ExprKind::kColumnRef) item.alias = item.expr->name;
          if (item.alias.empty()) item.alias = column;
          column = item.alias;
        }
        auto ref = std::make_unique<TableRef>();
        ref->kind = TableRef::Kind::kSubquery;
        ref->pos = qq->pos;
        ref->alias = "quantified";
        ref->subquery = std::move(qq);
        if (!star) {
          auto c = NewExpr(ExprKind::kColumnRef, pos);
          c->name = column;
          call->args.push_back(std::move(c));
        }
        qq = std::make_unique<Query>();
        qq->pos = ref->pos;
        qq->select = std::make_unique<Select>();
        qq->select->pos = ref->pos;
        qq->select->from.push_back(std::move(ref));
        qq->select->items.push_back({std::move(call), "", pos});
      }
      auto sub = NewExpr(ExprKind::kSubquery, pos);
      sub->subquery = std::move(qq);
      return sub;
    };
    auto literal = [&](LiteralKind k, const char* text) {
      auto l = NewExpr(ExprKind::kLiteral, pos);
      l->lit_kind = k;
      l->text = text;
      return l;
    };
    auto boolean = [&](bool v) { return literal(LiteralKind::kBoolean, v ? "TRUE" : "FALSE"); };
    auto is_null = [&](ExprPtr a) {
      auto n = NewExpr(ExprKind::kIsNull, pos);
      n->args.push_back(std::move(a));
      return n;
    };
    // The test on x against the extremes that decides TRUE (ANY) or FALSE (ALL).
    ExprPtr decisive;
    if (op == Op::kEq || op == Op::kNe) {  // = ALL: NOT (x = MIN AND x = MAX); <> ANY: x <> MIN OR x <> MAX
      decisive = NewBinary(all ? Op::kAnd : Op::kOr, NewBinary(op, operand_copy(), aggregate("MIN", false)),
                           NewBinary(op, operand_copy(), aggregate("MAX", false)));
    } else {  // x > ANY: x > MIN; x > ALL: x > MAX; < the other way round
      const bool below = op == Op::kLt || op == Op::kLe;
      decisive = NewBinary(op, std::move(x), aggregate(below != all ? "MAX" : "MIN", false));
    }
    if (all) {
      auto n = NewExpr(ExprKind::kUnary, pos);
      n->op = Op::kNot;
      n->args.push_back(std::move(decisive));
      decisive = std::move(n);
    }
    auto c = NewExpr(ExprKind::kCase, pos);
    c->args.push_back(NewBinary(Op::kEq, aggregate("COUNT", true), literal(LiteralKind::kInteger, "0")));
    c->args.push_back(boolean(all));
    c->args.push_back(std::move(decisive));
    c->args.push_back(boolean(!all));
    c->args.push_back(NewBinary(Op::kOr, is_null(operand_copy()),
                                NewBinary(Op::kLt, aggregate("COUNT", false), aggregate("COUNT", true))));
    c->args.push_back(literal(LiteralKind::kNull, "NULL"));
    c->args.push_back(boolean(all));
    c->has_else = true;
    return c;
  }

  // Whether e calls an aggregate function (so it cannot take another aggregate around it).
  static bool MayAggregate(const Expr& e) {
    static const std::string_view kNames[] = {"COUNT",    "SUM",     "AVG",        "MIN",         "MAX",      "ARG_MIN",
                                              "ARG_MAX",  "STDDEV",  "STDDEV_POP", "STDDEV_SAMP", "VARIANCE", "VAR_POP",
                                              "VAR_SAMP", "BIT_AND", "BIT_OR",     "BIT_XOR",     "EVERY",    "SOME",
                                              "BOOL_AND", "BOOL_OR", "COUNTIF",    "ARRAY_AGG",   "MAP_AGG"};
    if (e.kind == ExprKind::kFunction && !e.over &&
        std::find(std::begin(kNames), std::end(kNames), e.name) != std::end(kNames))
      return true;
    for (const auto& a : e.args)
      if (a && MayAggregate(*a)) return true;
    return false;
  }

  // After `e`: IS [NOT] NULL | TRUE | FALSE | DISTINCT FROM x.
  ExprPtr ParseIsTail(ExprPtr e) {
    Take();  // IS
    bool negated = AcceptKw("NOT");
    ExprPtr r;
    if (AcceptKw("NULL")) {
      r = NewExpr(ExprKind::kIsNull, e->pos);
    } else if (IsKw(Peek(), "TRUE") || IsKw(Peek(), "FALSE")) {
      r = NewExpr(ExprKind::kIsBool, e->pos);
      r->bool_value = Take().upper == "TRUE";
    } else if (AcceptKw("UNKNOWN")) {  // a BOOLEAN that IS UNKNOWN is NULL
      r = NewExpr(ExprKind::kIsNull, e->pos);
    } else if (AcceptKw("DISTINCT")) {
      ExpectKw("FROM");
      r = NewExpr(ExprKind::kIsDistinct, e->pos);
      r->args.push_back(std::move(e));
      r->args.push_back(ParseConcat());
      r->negated = negated;
      return r;
    } else {
      Expected("NULL, TRUE, FALSE, UNKNOWN or DISTINCT FROM");
    }
    r->negated = negated;
    r->args.push_back(std::move(e));
    return r;
  }

  // After `e [NOT] IN`: (subquery) or (list).
  ExprPtr ParseInTail(ExprPtr e, bool negated) {
    if (!IsSym(Peek(), "(")) Expected("'('");
    if (ParenStartsQuery(1)) {
      Take();
      auto r = NewExpr(ExprKind::kInQuery, e->pos);
      r->negated = negated;
      r->args.push_back(std::move(e));
      r->subquery = ParseQueryExpr();
      ExpectSym(")");
      return r;
    }
    Take();
    auto r = NewExpr(ExprKind::kInList, e->pos);
    r->negated = negated;
    r->args.push_back(std::move(e));
    if (AcceptSym(")")) return r;  // `IN ()` (SQLite): an empty list, so args has only the operand
    do {
      r->args.push_back(ParseExpr());
    } while (AcceptSym(","));
    ExpectSym(")");
    return r;
  }

  ExprPtr ParseConcat() {
    auto e = ParseAdditive();
    while (AcceptSym("||")) e = NewBinary(Op::kConcat, std::move(e), ParseAdditive());
    return e;
  }

  ExprPtr ParseAdditive() {
    auto e = ParseMultiplicative();
    for (;;) {
      if (AcceptSym("+")) {
        e = NewBinary(Op::kAdd, std::move(e), ParseMultiplicative());
      } else if (AcceptSym("-")) {
        e = NewBinary(Op::kSub, std::move(e), ParseMultiplicative());
      } else {
        return e;
      }
    }
  }

  ExprPtr ParseMultiplicative() {
    auto e = ParseUnary();
    for (;;) {
      if (AcceptSym("*")) {
        e = NewBinary(Op::kMul, std::move(e), ParseUnary());
      } else if (AcceptSym("/")) {
        e = NewBinary(Op::kDiv, std::move(e), ParseUnary());
      } else if (AcceptSym("%")) {
        e = NewBinary(Op::kMod, std::move(e), ParseUnary());
      } else {
        return e;
      }
    }
  }

  ExprPtr ParseUnary() {
    const Token& t = Peek();
    if (IsSym(t, "-") || IsSym(t, "+")) {
      DepthGuard guard(this);
      Take();
      auto e = NewExpr(ExprKind::kUnary, t.pos);
      e->op = t.text == "-" ? Op::kNeg : Op::kPlus;
      e->args.push_back(ParseUnary());
      return e;
    }
    return ParseColonCasts(ParsePostfix(ParsePrimary()));
  }

  // e::type (PostgreSQL's cast syntax, as Feldera accepts it), any number of times.
  ExprPtr ParseColonCasts(ExprPtr e) {
    while (IsSym(Peek(), "::")) {
      Take();
      auto c = NewExpr(ExprKind::kCast, e->pos);
      c->args.push_back(std::move(e));
      c->cast_type = ParseType(/*for_cast=*/true);
      c->cast_type.nullable = true;
      e = ParsePostfix(std::move(c));
    }
    return e;
  }

  // After `(s1`: `, e1) CONTAINS x` or `, e1) op (s2, e2)`, op one of Feldera's period predicates
  // (CONTAINS, OVERLAPS, EQUALS, [IMMEDIATELY] PRECEDES, [IMMEDIATELY] SUCCEEDS), written as a call
  // of $PERIOD_<op> (core/plan/functions.cc).
  ExprPtr ParsePeriodPredicate(ExprPtr start) {
    ExpectSym(",");
    auto call = NewExpr(ExprKind::kFunction, start->pos);
    call->args.push_back(std::move(start));
    call->args.push_back(ParseExpr());
    ExpectSym(")");
    std::string op;
    if (AcceptKw("IMMEDIATELY")) {
      op = AcceptKw("PRECEDES") ? "IMMEDIATELY_PRECEDES" : (ExpectKw("SUCCEEDS"), "IMMEDIATELY_SUCCEEDS");
    } else {
      for (const char* k : {"CONTAINS", "OVERLAPS", "EQUALS", "PRECEDES", "SUCCEEDS"})
        if (op.empty() && AcceptKw(k)) op = k;
      if (op.empty()) Expected("OVERLAPS, CONTAINS, EQUALS, PRECEDES or SUCCEEDS after a period (start, end)");
    }
    call->name = "$PERIOD_" + op;
    if (op == "CONTAINS" && !ParenListAhead()) {
      call->args.push_back(ParseConcat());
      return call;
    }
    ExpectSym("(");
    call->args.push_back(ParseExpr());
    ExpectSym(",");
    call->args.push_back(ParseExpr());
    ExpectSym(")");
    return call;
  }

  // e[index] (ITEM) and e.field, any number of times and in any order (a column reference has
  // taken its own dots already).
  ExprPtr ParsePostfix(ExprPtr e) {
    while (IsSym(Peek(), "[") || (IsSym(Peek(), ".") && IsName(Peek(1)))) {
      DepthGuard guard(this);
      if (AcceptSym(".")) {
        e = FieldAccess(std::move(e));
        continue;
      }
      Take();
      auto item = NewExpr(ExprKind::kFunction, e->pos);
      item->name = "ITEM";
      item->args.push_back(std::move(e));
      item->args.push_back(ParseExpr());
      ExpectSym("]");
      SafeOffset(item.get());
      e = std::move(item);
    }
    return e;
  }

  // a[SAFE_OFFSET(i)]: the element at 0-based i, NULL outside the bounds, which is a[i + 1].
  static void SafeOffset(Expr* item) {
    Expr& index = *item->args[1];
    if (index.kind != ExprKind::kFunction || index.name != "SAFE_OFFSET" || index.args.size() != 1) return;
    auto one = NewExpr(ExprKind::kLiteral, index.pos);
    one->lit_kind = LiteralKind::kInteger;
    one->text = "1";
    item->args[1] = NewBinary(Op::kAdd, std::move(index.args[0]), std::move(one));
  }

  static bool IsName(const Token& t) {
    return t.kind == TokenKind::kQuotedIdent || (t.kind == TokenKind::kIdent && !IsReserved(t.upper));
  }

  // row.field: the field name is the next token (quoted or not, recorded in `quoted`).
  ExprPtr FieldAccess(ExprPtr row) {
    const bool quoted = Peek().kind == TokenKind::kQuotedIdent;
    auto f = NewExpr(ExprKind::kFunction, row->pos);
    f->name = "$FIELD";
    f->text = ParseName("a field name");
    f->quoted = quoted;
    f->args.push_back(std::move(row));
    return f;
  }

  ExprPtr ParseLiteral(LiteralKind kind, const Token& t) {
    auto e = NewExpr(ExprKind::kLiteral, t.pos);
    e->lit_kind = kind;
    e->text = t.text;
    return e;
  }

  ExprPtr ParsePrimary() {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kInteger:
        return ParseLiteral(LiteralKind::kInteger, Take());
      case TokenKind::kDecimal:
        return ParseLiteral(LiteralKind::kDecimal, Take());
      case TokenKind::kDouble:
        return ParseLiteral(LiteralKind::kDouble, Take());
      case TokenKind::kString:
        return ParseLiteral(LiteralKind::kString, Take());
      case TokenKind::kQuotedIdent:
        return ParseNameExpr();
      case TokenKind::kSymbol:
        if (IsSym(t, "(")) {
          if (ParenStartsQuery(1)) {
            auto e = NewExpr(ExprKind::kSubquery, Take().pos);
            e->subquery = ParseQueryExpr();
            ExpectSym(")");
            return e;
          }
          Take();
          auto e = ParseExpr();
          if (IsSym(Peek(), ",")) {
            // (s, e) OVERLAPS / CONTAINS / ... a period predicate; otherwise (a, b, ...) is
            // ROW(a, b, ...), as in PostgreSQL.
            const size_t mark = i_;
            Take();
            ParseExpr();
            bool period = false;
            if (IsSym(Peek(), ")"))
              for (const char* k : {"CONTAINS", "OVERLAPS", "EQUALS", "PRECEDES", "SUCCEEDS", "IMMEDIATELY"})
                period = period || IsKw(Peek(1), k);
            i_ = mark;
            if (period) return ParsePeriodPredicate(std::move(e));
            auto row = NewExpr(ExprKind::kFunction, e->pos);
            row->name = "ROW";
            row->args.push_back(std::move(e));
            while (AcceptSym(",")) row->args.push_back(ParseExpr());
            ExpectSym(")");
            return row;
          }
          ExpectSym(")");
          if (e->kind == ExprKind::kBinary && e->op == Op::kSub && PeekIntervalField()) {
            // (a - b) unit: the difference of two dates/times as an INTERVAL.
            auto c = NewExpr(ExprKind::kCast, e->pos);
            c->cast_type = ParseIntervalQualifier();
            c->args.push_back(std::move(e));
            return c;
          }
          return e;
        }
        Expected("an expression");
      case TokenKind::kEnd:
        Expected("an expression");
      case TokenKind::kIdent:
        break;
    }
    const std::string& u = t.upper;
    if (u == "NULL") {
      auto e = NewExpr(ExprKind::kLiteral, Take().pos);
      e->lit_kind = LiteralKind::kNull;
      return e;
    }
    if (u == "TRUE" || u == "FALSE") {
      auto e = NewExpr(ExprKind::kLiteral, Take().pos);
      e->lit_kind = LiteralKind::kBoolean;
      e->text = u;
      return e;
    }
    if (u == "CASE") return ParseCase();
    if (u == "CAST" || u == "SAFE_CAST") return ParseCast();
    if (u == "X" && Peek(1).kind == TokenKind::kString && Peek(1).pos.offset == t.end.offset) {
      Pos pos = Take().pos;
      const Token& hex = Peek();
      for (char c : hex.text)
        if (!std::isxdigit(static_cast<unsigned char>(c))) FailAt(hex.pos, "a binary literal X'...' holds hex digits");
      if (hex.text.size() % 2 != 0) FailAt(hex.pos, "a binary literal X'...' needs an even number of hex digits");
      auto e = ParseLiteral(LiteralKind::kBinary, Take());
      e->pos = pos;
      return e;
    }
    if (u == "ARRAY" && (IsSym(Peek(1), "[") || IsSym(Peek(1), "("))) {
      const bool bracket = IsSym(Peek(1), "[");
      if (!bracket && ParenStartsQuery(1)) {
        // ARRAY(subquery): a scalar subquery named "ARRAY", the array of its rows.
        auto e = NewExpr(ExprKind::kSubquery, Take().pos);
        e->name = "ARRAY";
        Take();
        e->subquery = ParseQueryExpr();
        ExpectSym(")");
        return e;
      }
      auto e = NewExpr(ExprKind::kFunction, Take().pos);
      e->name = "ARRAY";
      Take();
      const char* close = bracket ? "]" : ")";
      if (!AcceptSym(close)) {
        do {
          e->args.push_back(ParseExpr());
        } while (AcceptSym(","));
        ExpectSym(close);
      }
      return e;
    }
    if (u == "MAP" && IsSym(Peek(1), "[")) {
      // MAP[k1, v1, k2, v2, ...], parsed as the function "MAP[]".
      auto e = NewExpr(ExprKind::kFunction, Take().pos);
      e->name = "MAP[]";
      Take();
      if (!IsSym(Peek(), "]")) {
        do {
          e->args.push_back(ParseExpr());
        } while (AcceptSym(","));
      }
      ExpectSym("]");
      return e;
    }
    if (u == "INTERVAL") return ParseIntervalLiteral();
    if (u == "EXISTS") {
      auto e = NewExpr(ExprKind::kExists, Take().pos);
      if (!IsSym(Peek(), "(") || !ParenStartsQuery(1)) Expected("'(' and a query");
      Take();
      e->subquery = ParseQueryExpr();
      ExpectSym(")");
      return e;
    }
    if ((u == "DATE" || u == "TIME" || u == "TIMESTAMP" || u == "UUID") && Peek(1).kind == TokenKind::kString) {
      LiteralKind kind = u == "DATE"   ? LiteralKind::kDate
                         : u == "TIME" ? LiteralKind::kTime
                         : u == "UUID" ? LiteralKind::kUuid
                                       : LiteralKind::kTimestamp;
      Pos pos = Take().pos;
      auto e = ParseLiteral(kind, Take());
      e->pos = pos;
      return e;
    }
    if (IsReserved(u) && !(IsReservedFunctionName(u) && IsSym(Peek(1), "("))) Expected("an expression");
    return ParseNameExpr();
  }

  // INTERVAL '10' SECOND, INTERVAL '1 10:30' DAY TO MINUTE, INTERVAL 2 SECOND, INTERVAL -1 DAY.
  ExprPtr ParseIntervalLiteral() {
    auto e = NewExpr(ExprKind::kLiteral, Take().pos);
    e->lit_kind = LiteralKind::kInterval;
    bool neg = AcceptSym("-");
    const Token& v = Peek();
    if (v.kind != TokenKind::kString && v.kind != TokenKind::kInteger && v.kind != TokenKind::kDecimal)
      Expected("an interval value ('10', 2)");
    e->text = (neg ? "-" : "") + Take().text;
    const Token& unit = Peek();
    if (unit.kind == TokenKind::kIdent && (unit.upper == "WEEK" || unit.upper == "WEEKS")) {
      // INTERVAL n WEEK: n * 7 days (a week is not an SQL interval field; Feldera accepts it here).
      std::string digits = e->text;
      std::erase(digits, ' ');
      bool minus = false;
      while (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
        minus ^= digits[0] == '-';
        digits.erase(0, 1);
      }
      if (digits.empty() || digits.size() > 15 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
        FailAt(v.pos, "a WEEK interval needs a whole number of weeks");
      e->text = (minus ? "-" : "") + std::to_string(std::stoll(digits) * 7);
      Take();
      e->cast_type = SqlType::Interval(IntervalField::kDay, IntervalField::kDay);
      return e;
    }
    e->cast_type = ParseIntervalQualifier();
    return e;
  }

  // A column reference `name` / `qualifier.name`, or a function call `name(...)`.
  ExprPtr ParseNameExpr() {
    const Token& t = Take();
    if (IsSym(Peek(), "(")) return ParseCall(t);
    if (t.kind == TokenKind::kIdent && (t.upper == "CURRENT_TIMESTAMP" || t.upper == "LOCALTIMESTAMP") &&
        !IsSym(Peek(), ".")) {  // the standard's form without parentheses
      auto now = NewExpr(ExprKind::kFunction, t.pos);
      now->name = t.upper;
      return now;
    }
    auto e = NewExpr(ExprKind::kColumnRef, t.pos);
    if (AcceptSym(".")) {
      e->qualifier = t.text;
      e->quoted = Peek().kind == TokenKind::kQuotedIdent;
      e->name = ParseName("a column name");
    } else {
      e->name = t.text;
      e->quoted = t.kind == TokenKind::kQuotedIdent;
    }
    while (IsSym(Peek(), ".")) {  // t.column.field, t.column.field.field ...
      Take();
      e = FieldAccess(std::move(e));
    }
    return e;
  }

  ExprPtr ParseCall(const Token& name) {
    auto e = NewExpr(ExprKind::kFunction, name.pos);
    e->name = ToUpper(name.text);
    ExpectSym("(");
    if ((e->name == "EXTRACT" || e->name == "DATE_PART") && Peek().kind == TokenKind::kIdent &&
        (IsKw(Peek(1), "FROM") || IsSym(Peek(1), ","))) {
      // EXTRACT(unit FROM x), DATE_PART(unit FROM x) / DATE_PART(unit, x)
      const Token& unit = Take();
      auto u = NewExpr(ExprKind::kColumnRef, unit.pos);
      u->name = unit.text;
      e->args.push_back(std::move(u));
      Take();
      e->args.push_back(ParseExpr());
      ExpectSym(")");
      return e;
    }
    if ((e->name == "FLOOR" || e->name == "CEIL" || e->name == "CEILING") && !IsSym(Peek(), ")")) {
      auto x = ParseExpr();
      if (AcceptKw("TO")) {
        // FLOOR(x TO unit), CEIL(x TO unit)
        e->text = "TO";
        e->args.push_back(std::move(x));
        const Token& unit = Peek();
        if (unit.kind != TokenKind::kIdent) Expected("a time unit");
        auto u = NewExpr(ExprKind::kColumnRef, Take().pos);
        u->name = unit.text;
        e->args.push_back(std::move(u));
        ExpectSym(")");
        return e;
      }
      e->args.push_back(std::move(x));
      while (AcceptSym(",")) e->args.push_back(ParseCallArg());
      ExpectSym(")");
      ParseCallTail(e.get());
      return e;
    }
    if (IsSym(Peek(), "*") && IsSym(Peek(1), ")")) {
      Take();
      Take();
      e->star_arg = true;
      ParseCallTail(e.get());
      return e;
    }
    if (AcceptSym(")")) {
      ParseCallTail(e.get());
      return e;
    }
    if (ParseSpecialCallArgs(e.get())) return e;
    if (AcceptKw("DISTINCT")) {
      e->distinct = true;
    } else {
      AcceptKw("ALL");
    }
    do {
      e->args.push_back(ParseCallArg());
    } while (AcceptSym(","));
    ExpectSym(")");
    ParseCallTail(e.get());
    return e;
  }

  // A call's argument: an expression or a lambda `x -> body` (see ExprKind::kLambda).
  ExprPtr ParseCallArg() {
    // (k, x) -> body: a two-parameter lambda (VARIANT_FILTER and friends); `text` holds the second.
    if (IsSym(Peek(), "(") && Peek(1).kind == TokenKind::kIdent && IsSym(Peek(2), ",") &&
        Peek(3).kind == TokenKind::kIdent && IsSym(Peek(4), ")") && IsSym(Peek(5), "->")) {
      auto l = NewExpr(ExprKind::kLambda, Peek().pos);
      Take();
      l->name = Take().text;
      Take();
      l->text = Take().text;
      Take();
      Take();
      l->args.push_back(ParseExpr());
      return l;
    }
    if (Peek().kind != TokenKind::kIdent || !IsSym(Peek(1), "->")) return ParseExpr();
    auto l = NewExpr(ExprKind::kLambda, Peek().pos);
    l->name = Take().text;
    Take();
    l->args.push_back(ParseExpr());
    return l;
  }

  // The keyword forms of SUBSTRING, POSITION, TRIM and OVERLAY (after the '('), written as plain
  // argument lists (see ExprKind::kFunction). Returns false for any other call.
  bool ParseSpecialCallArgs(Expr* e) {
    const std::string& n = e->name;
    if (n == "POSITION") {
      e->args.push_back(ParseConcat());  // not ParseExpr: its IN is POSITION's
      if (!AcceptKw("IN")) {
        ExpectSym(",");
      }
      e->args.push_back(ParseExpr());
      ExpectSym(")");
      return true;
    }
    if (n == "TRIM") {
      std::string mode = "BOTH";
      for (const char* m : {"BOTH", "LEADING", "TRAILING"})
        if (AcceptKw(m)) mode = m;
      ExprPtr chars, str;
      if (AcceptKw("FROM")) {
        str = ParseExpr();
      } else {
        ExprPtr first = ParseExpr();
        if (AcceptKw("FROM")) {
          chars = std::move(first);
          str = ParseExpr();
        } else {
          str = std::move(first);
        }
      }
      ExpectSym(")");
      auto lit = [&](const std::string& text) {
        auto l = NewExpr(ExprKind::kLiteral, e->pos);
        l->lit_kind = LiteralKind::kString;
        l->text = text;
        return l;
      };
      e->args.push_back(lit(mode));
      e->args.push_back(chars ? std::move(chars) : lit(" "));
      e->args.push_back(std::move(str));
      return true;
    }
    if (n == "SUBSTRING" || n == "OVERLAY") {
      e->args.push_back(ParseExpr());
      if (n == "OVERLAY") {
        ExpectKw("PLACING");
        e->args.push_back(ParseExpr());
        ExpectKw("FROM");
        e->args.push_back(ParseExpr());
      } else if (AcceptKw("FROM")) {
        e->args.push_back(ParseExpr());
      } else if (IsKw(Peek(), "FOR")) {
        auto one = NewExpr(ExprKind::kLiteral, Peek().pos);
        one->lit_kind = LiteralKind::kInteger;
        one->text = "1";
        e->args.push_back(std::move(one));
      } else {
        while (AcceptSym(",")) e->args.push_back(ParseExpr());
        ExpectSym(")");
        return true;
      }
      if (AcceptKw("FOR")) e->args.push_back(ParseExpr());
      ExpectSym(")");
      return true;
    }
    return false;
  }

  // After a call: FILTER (WHERE condition), then OVER (window) or OVER name.
  void ParseCallTail(Expr* e) {
    if (IsKw(Peek(), "FILTER") && IsSym(Peek(1), "(")) {
      Take();
      Take();
      ExpectKw("WHERE");
      e->filter = ParseExpr();
      ExpectSym(")");
    }
    if (AcceptKw("OVER")) {
      Pos pos = Peek().pos;
      if (AcceptSym("(")) {
        e->over = ParseWindowBody(pos);
        ExpectSym(")");
      } else {
        e->over = std::make_unique<WindowSpec>();
        e->over->pos = pos;
        e->over->ref = ParseName("'(' or a window name");
      }
    }
  }

  ExprPtr ParseCase() {
    auto e = NewExpr(ExprKind::kCase, Take().pos);
    if (!IsKw(Peek(), "WHEN")) {
      e->has_operand = true;
      e->args.push_back(ParseExpr());
    }
    if (!IsKw(Peek(), "WHEN")) Expected("WHEN");
    while (AcceptKw("WHEN")) {
      e->args.push_back(ParseExpr());
      ExpectKw("THEN");
      e->args.push_back(ParseExpr());
    }
    if (AcceptKw("ELSE")) {
      e->has_else = true;
      e->args.push_back(ParseExpr());
    }
    ExpectKw("END");
    return e;
  }

  ExprPtr ParseCast() {
    bool safe = Peek().upper == "SAFE_CAST";
    auto e = NewExpr(ExprKind::kCast, Take().pos);
    e->safe_cast = safe;
    ExpectSym("(");
    e->args.push_back(ParseExpr());
    ExpectKw("AS");
    e->cast_type = ParseType(/*for_cast=*/true);
    e->cast_type.nullable = true;
    ExpectSym(")");
    return e;
  }

  std::string_view sql_;
  const SourceInfo& src_;
  std::vector<Token> toks_;
  size_t i_ = 0;
  size_t last_end_ = 0;  // byte offset just after the last consumed token
  int depth_ = 0;
  std::map<std::string, SqlType> user_types_;  // CREATE TYPE: upper-case name -> type
};

}  // namespace

std::vector<Statement> ParseProgram(std::string_view sql, const SourceInfo& src) {
  return Parser(sql, src).Program();
}

std::unique_ptr<Query> ParseQuery(std::string_view sql, const SourceInfo& src) {
  return Parser(sql, src).SingleQuery();
}

std::string FormatSqlError(std::string_view sql, const SourceInfo& src, Pos pos, std::string_view message) {
  size_t at = std::min(pos.offset, sql.size());
  size_t begin = at == 0 ? std::string_view::npos : sql.rfind('\n', at - 1);
  begin = begin == std::string_view::npos ? 0 : begin + 1;
  size_t end = sql.find('\n', at);
  if (end == std::string_view::npos) end = sql.size();
  std::string_view text = sql.substr(begin, end - begin);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);

  int line = src.first_line + pos.line - 1;
  int col = pos.col + src.column_offset;
  std::string gutter = fmt::format("{:>5}", line);
  std::string indent(static_cast<size_t>(std::max(src.column_offset, 0)), ' ');

  // Pad under the line character by character, keeping tabs so the caret lines up.
  std::string pad = indent;
  int chars = 0;
  for (size_t i = 0; i < text.size() && chars < pos.col - 1; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;
    pad.push_back(c == '\t' ? '\t' : ' ');
    ++chars;
  }
  for (; chars < pos.col - 1; ++chars) pad.push_back(' ');

  return fmt::format("{}:{}:{}: error: {}\n{} | {}{}\n{} | {}^", src.name, line, col, message, gutter, indent, text,
                     std::string(gutter.size(), ' '), pad);
}

}  // namespace fld::sql
