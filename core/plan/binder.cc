#include "core/plan/binder.h"

#include <fmt/format.h>

#include <cctype>
#include <regex>

#include "core/common/error.h"
#include "core/expr/time.h"
#include "core/operators/temporal_filter.h"
#include "core/plan/functions.h"
#include "core/types/schema.h"
#include "core/types/variant.h"

namespace fld::plan {

using sql::Expr;
using sql::ExprKind;
using sql::Pos;

void SqlContext::Error(Pos pos, std::string_view msg) const {
  throw fld::Error(ErrorKind::kUsage, sql::FormatSqlError(sql, src, pos, msg));
}

bool IsAggregateName(std::string_view n) {
  static const std::string_view kNames[] = {
      "COUNT",       "SUM",      "AVG",     "MIN",       "MAX",     "ARG_MIN",  "ARG_MAX",     "STDDEV",  "STDDEV_POP",
      "STDDEV_SAMP", "VARIANCE", "VAR_POP", "VAR_SAMP",  "BIT_AND", "BIT_OR",   "BIT_XOR",     "EVERY",   "SOME",
      "BOOL_AND",    "BOOL_OR",  "COUNTIF", "ARRAY_AGG", "MAP_AGG", "GROUPING", "GROUPING_ID", "GROUP_ID"};
  for (std::string_view k : kNames)
    if (n == k) return true;
  return false;
}

bool IsWindowOnlyName(std::string_view n) {
  static const std::string_view kNames[] = {"ROW_NUMBER", "RANK",         "DENSE_RANK", "LAG",
                                            "LEAD",       "FIRST_VALUE",  "LAST_VALUE", "NTILE",
                                            "NTH_VALUE",  "PERCENT_RANK", "CUME_DIST"};
  for (std::string_view k : kNames)
    if (n == k) return true;
  return false;
}

bool ContainsAggregate(const Expr& e) {
  if (e.kind == ExprKind::kFunction && IsAggregateName(e.name) && !e.over) return true;
  for (const auto& a : e.args)
    if (a && ContainsAggregate(*a)) return true;
  return false;
}

bool ContainsWindow(const Expr& e) {
  if (e.kind == ExprKind::kFunction && e.over) return true;
  for (const auto& a : e.args)
    if (a && ContainsWindow(*a)) return true;
  return false;
}

bool ContainsSubquery(const Expr& e) {
  if (e.kind == ExprKind::kSubquery || e.kind == ExprKind::kExists || e.kind == ExprKind::kInQuery) return true;
  for (const auto& a : e.args)
    if (a && ContainsSubquery(*a)) return true;
  return e.filter && ContainsSubquery(*e.filter);
}

void SubqueryNodes(const Expr& e, std::set<const Expr*>* out) {
  if (e.kind == ExprKind::kSubquery || e.kind == ExprKind::kExists || e.kind == ExprKind::kInQuery) out->insert(&e);
  for (const auto& a : e.args)
    if (a) SubqueryNodes(*a, out);
  if (e.filter) SubqueryNodes(*e.filter, out);
}

namespace {

// Whether every subquery of e is one of `over_input` (vacuously so without subqueries).
bool OnlyInputSubqueries(const Expr& e, const std::set<const Expr*>& over_input) {
  std::set<const Expr*> nodes;
  SubqueryNodes(e, &nodes);
  for (const Expr* n : nodes)
    if (!over_input.contains(n)) return false;
  return true;
}

}  // namespace

bool ScopeColumn::InStar(std::string_view q) const {
  if (hidden || correlated) return false;
  if (q.empty()) return !qualified_only;
  return EqualsIgnoreCase(qualifier, q);
}

namespace {

int IntRank(TypeId id) {
  switch (id) {
    case TypeId::kTinyInt:
      return 1;
    case TypeId::kSmallInt:
      return 2;
    case TypeId::kInteger:
      return 3;
    default:
      return 4;
  }
}

SqlType Bool(bool nullable) {
  return SqlType::Of(TypeId::kBoolean, nullable);
}

// An exact numeric as the DECIMAL that holds it: TINYINT is DECIMAL(3, 0), ..., BIGINT
// DECIMAL(19, 0).
SqlType AsDecimal(const SqlType& t) {
  if (t.id == TypeId::kDecimal) return t;
  static const int kDigits[] = {3, 5, 10, 19};
  return SqlType::Decimal(kDigits[IntRank(t.id) - 1], 0, t.nullable);
}

// Result types of DECIMAL arithmetic, Calcite's rules (as Feldera), precision capped at 38.
SqlType DecimalResult(ExprOp op, const SqlType& a, const SqlType& b) {
  const int p1 = a.precision, s1 = a.scale, p2 = b.precision, s2 = b.scale;
  const int max = kMaxDecimalPrecision;
  int p, s;
  switch (op) {
    case ExprOp::kMul:
      s = std::min(s1 + s2, max);
      p = std::min(p1 + p2, max);
      break;
    case ExprOp::kDiv: {
      // Integer digits p1 - s1 + s2, scale max(6, s1 + p2 + 1); beyond 38 digits the scale
      // gives way, down to 6.
      const int whole = p1 - s1 + s2;
      s = std::max(6, s1 + p2 + 1);
      p = whole + s;
      if (p > max) {
        s = std::min(s, std::max(6, max - whole));
        p = max;
      }
      break;
    }
    case ExprOp::kMod:
      s = std::max(s1, s2);
      p = std::min(std::min(p1 - s1, p2 - s2) + s, max);
      break;
    default:  // + -
      s = std::max(s1, s2);
      p = std::min(std::max(p1 - s1, p2 - s2) + s + 1, max);
      break;
  }
  if (s > p) s = p;
  return SqlType::Decimal(std::max(p, 1), s);
}

}  // namespace

SqlType Binder::CommonType(const SqlType& a, const SqlType& b, Pos pos) const {
  bool nullable = a.nullable || b.nullable;
  if (a.id == TypeId::kNull) return b.WithNullable(true);
  if (b.id == TypeId::kNull) return a.WithNullable(true);
  if (a.SameAs(b)) return a.WithNullable(nullable);
  if (a.IsInteger() && b.IsInteger()) return (IntRank(a.id) >= IntRank(b.id) ? a : b).WithNullable(nullable);
  if (a.IsExactNumeric() && b.IsExactNumeric()) {
    const SqlType da = AsDecimal(a), db = AsDecimal(b);
    const int s = std::max(da.scale, db.scale);
    const int whole = std::max(da.precision - da.scale, db.precision - db.scale);
    return SqlType::Decimal(std::min(whole + s, kMaxDecimalPrecision), s, nullable);
  }
  if (a.id == TypeId::kVariant || b.id == TypeId::kVariant) return SqlType::Of(TypeId::kVariant, nullable);
  if (a.IsNumeric() && b.IsNumeric()) return SqlType::Of(TypeId::kDouble, nullable);
  if (a.IsString() && b.IsString()) return SqlType::Of(TypeId::kVarchar, nullable);
  if (a.IsBinary() && b.IsBinary()) return SqlType::Of(TypeId::kVarbinary, nullable);
  if (a.IsTemporal() && b.IsTemporal()) {
    if ((a.id == TypeId::kDate && b.id == TypeId::kTimestamp) || (a.id == TypeId::kTimestamp && b.id == TypeId::kDate))
      return SqlType::Of(TypeId::kTimestamp, nullable);
  }
  // A string compared with (or combined with) a UUID reads as one, as PostgreSQL's literals do.
  if (a.id == TypeId::kUuid && b.IsString()) return a.WithNullable(nullable);
  if (b.id == TypeId::kUuid && a.IsString()) return b.WithNullable(nullable);
  if (a.IsString() && b.IsTemporal()) return b.WithNullable(nullable);
  if (b.IsString() && a.IsTemporal()) return a.WithNullable(nullable);
  if (a.id == TypeId::kBoolean && b.id == TypeId::kBoolean) return a.WithNullable(nullable);
  if (a.IsInterval() && a.id == b.id)  // the widest range of fields
    return SqlType::Interval(static_cast<IntervalField>(std::max(a.precision, b.precision)),
                             static_cast<IntervalField>(std::min(a.scale, b.scale)), nullable);
  if (a.id == TypeId::kArray && b.id == TypeId::kArray)
    return SqlType::Array(CommonType((*a.fields)[0], (*b.fields)[0], pos), nullable);
  ctx_.Error(pos,
             fmt::format("cannot combine {} and {}", a.WithNullable(true).ToString(), b.WithNullable(true).ToString()));
}

BoundExprPtr Binder::Coerce(BoundExprPtr e, const SqlType& target, Pos pos) const {
  if (e->type.SameAs(target)) {
    e->type.nullable = e->type.nullable || target.nullable;
    return e;
  }
  if (e->type.id == TypeId::kNull) return MakeLiteral(Value::Null(), target.WithNullable(true));
  if (e->type.IsInterval() || target.IsInterval()) {
    // An INTERVAL converts to another of its kind, to and from exact numbers (counted in its last
    // field's unit) and to a string.
    const SqlType& o = e->type.IsInterval() ? target : e->type;
    const bool ok = o.IsInterval() ? o.id == (e->type.IsInterval() ? e->type.id : target.id)
                                   : o.IsExactNumeric() || (o.IsString() && target.IsString());
    if (!ok)
      ctx_.Error(pos, fmt::format("cannot convert {} to {}", e->type.WithNullable(true).ToString(),
                                  target.WithNullable(true).ToString()));
  }
  if (e->type.id == TypeId::kUuid || target.id == TypeId::kUuid) {
    // A UUID converts to and from strings, binary strings (16 bytes) and VARIANT only (as Feldera).
    const SqlType& o = e->type.id == TypeId::kUuid ? target : e->type;
    if (!o.IsString() && !o.IsBinary() && o.id != TypeId::kVariant && o.id != TypeId::kUuid)
      ctx_.Error(pos, fmt::format("cannot convert {} to {}", e->type.WithNullable(true).ToString(),
                                  target.WithNullable(true).ToString()));
  }
  if (e->op == ExprOp::kLiteral) {
    try {
      Value v = CastValue(e->literal, e->type, target);
      auto lit = MakeLiteral(std::move(v), target);
      return lit;
    } catch (const fld::Error& err) {
      ctx_.Error(pos, err.what());
    }
  }
  bool nullable = e->type.nullable;
  std::vector<BoundExprPtr> args;
  args.push_back(std::move(e));
  return MakeCall(ExprOp::kCast, target.WithNullable(nullable), std::move(args));
}

void Binder::SetSubqueryColumn(const Expr* e, int index, SqlType type) {
  for (auto& [k, v] : subquery_columns_)
    if (k == e) {
      v = {index, type};
      return;
    }
  subquery_columns_.push_back({e, {index, type}});
}

int Binder::TryResolve(const Scope& scope, std::string_view qualifier, std::string_view name, Pos pos) const {
  // The query's own columns first; an enclosing query's (correlated) columns only when none has
  // the name.
  int found = TryResolveAmong(scope, qualifier, name, pos, false);
  return found >= 0 ? found : TryResolveAmong(scope, qualifier, name, pos, true);
}

int Binder::TryResolveAmong(const Scope& scope, std::string_view qualifier, std::string_view name, Pos pos,
                            bool correlated) const {
  int found = -1;
  for (size_t i = 0; i < scope.cols.size(); ++i) {
    const ScopeColumn& c = scope.cols[i];
    if (c.hidden || !EqualsIgnoreCase(c.name, name)) continue;
    if (c.correlated != correlated) continue;
    if (qualifier.empty() && c.qualified_only) continue;
    if (!qualifier.empty() && !EqualsIgnoreCase(c.qualifier, qualifier)) continue;
    if (found >= 0) {
      ctx_.Error(pos, qualifier.empty() ? fmt::format("column '{}' is ambiguous; qualify it with a table name", name)
                                        : fmt::format("column '{}.{}' is ambiguous", qualifier, name));
    }
    found = static_cast<int>(i);
  }
  return found;
}

int Binder::Resolve(const Scope& scope, std::string_view qualifier, std::string_view name, Pos pos) const {
  int i = TryResolve(scope, qualifier, name, pos);
  if (i >= 0) return i;
  std::string avail;
  for (const auto& c : scope.cols) {
    if (c.hidden || (qualifier.empty() && c.qualified_only)) continue;
    if (!avail.empty()) avail += ", ";
    avail += c.qualifier.empty() ? c.name : c.qualifier + "." + c.name;
    if (avail.size() > 200) {
      avail += ", ...";
      break;
    }
  }
  std::string full = qualifier.empty() ? std::string(name) : fmt::format("{}.{}", qualifier, name);
  ctx_.Error(pos, fmt::format("unknown column '{}' (available: {})", full, avail.empty() ? "none" : avail));
}

BoundExprPtr Binder::BindLiteral(const Expr& e) const {
  using sql::LiteralKind;
  switch (e.lit_kind) {
    case LiteralKind::kNull:
      return MakeLiteral(Value::Null(), SqlType::Of(TypeId::kNull));
    case LiteralKind::kBoolean:
      return MakeLiteral(Value::Int(EqualsIgnoreCase(e.text, "TRUE") ? 1 : 0), Bool(false));
    case LiteralKind::kInteger: {
      Value v;
      if (ParseValue(e.text, SqlType::Of(TypeId::kInteger), &v))
        return MakeLiteral(v, SqlType::Of(TypeId::kInteger, false));
      if (ParseValue(e.text, SqlType::Of(TypeId::kBigInt), &v))
        return MakeLiteral(v, SqlType::Of(TypeId::kBigInt, false));
      ctx_.Error(e.pos, fmt::format("integer literal {} is out of range for BIGINT", e.text));
    }
    case LiteralKind::kDecimal: {
      size_t dot = e.text.find('.');
      int scale = dot == std::string::npos ? 0 : static_cast<int>(e.text.size() - dot - 1);
      int digits = 0;
      for (char c : e.text) digits += (c >= '0' && c <= '9');
      if (digits > kMaxDecimalPrecision || scale > kMaxDecimalPrecision) {
        Value v;
        ParseValue(e.text, SqlType::Of(TypeId::kDouble), &v);
        return MakeLiteral(v, SqlType::Of(TypeId::kDouble, false));
      }
      SqlType t = SqlType::Decimal(std::max(digits, 1), scale, false);
      Value v;
      if (!ParseValue(e.text, t, &v)) ctx_.Error(e.pos, fmt::format("bad numeric literal {}", e.text));
      return MakeLiteral(v, t);
    }
    case LiteralKind::kDouble: {
      Value v;
      if (!ParseValue(e.text, SqlType::Of(TypeId::kDouble), &v))
        ctx_.Error(e.pos, fmt::format("bad numeric literal {}", e.text));
      return MakeLiteral(v, SqlType::Of(TypeId::kDouble, false));
    }
    case LiteralKind::kString: {
      SqlType t = SqlType::Of(TypeId::kVarchar, false);
      return MakeLiteral(Value::String(e.text), t);
    }
    case LiteralKind::kDate:
    case LiteralKind::kTime:
    case LiteralKind::kTimestamp: {
      TypeId id = e.lit_kind == LiteralKind::kDate   ? TypeId::kDate
                  : e.lit_kind == LiteralKind::kTime ? TypeId::kTime
                                                     : TypeId::kTimestamp;
      SqlType t = SqlType::Of(id, false);
      Value v;
      if (!ParseValue(e.text, t, &v))
        ctx_.Error(e.pos, fmt::format("'{}' is not a valid {}", e.text, t.WithNullable(true).ToString()));
      return MakeLiteral(v, t);
    }
    case LiteralKind::kInterval: {
      SqlType t = e.cast_type.WithNullable(false);
      int64_t v;
      if (!ParseIntervalLiteral(e.text, static_cast<IntervalField>(t.precision), static_cast<IntervalField>(t.scale),
                                &v))
        ctx_.Error(e.pos, fmt::format("'{}' is not a valid {}", e.text, t.WithNullable(true).ToString()));
      return MakeLiteral(Value::Int(v), t);
    }
    case LiteralKind::kUuid: {
      SqlType t = SqlType::Of(TypeId::kUuid, false);
      Value v;
      if (!ParseValue(e.text, t, &v)) ctx_.Error(e.pos, fmt::format("'{}' is not a valid UUID", e.text));
      return MakeLiteral(v, t);
    }
    case LiteralKind::kBinary: {
      SqlType t = SqlType::Of(TypeId::kVarbinary, false);
      Value v;
      if (!ParseValue(e.text, t, &v)) ctx_.Error(e.pos, fmt::format("X'{}' is not a valid binary literal", e.text));
      return MakeLiteral(v, t);
    }
  }
  ctx_.Error(e.pos, "unsupported literal");
}

BoundExprPtr Binder::RequireBool(BoundExprPtr e, Pos pos) const {
  if (e->type.id == TypeId::kBoolean) return e;
  if (e->type.id == TypeId::kNull) return MakeLiteral(Value::Null(), Bool(true));
  ctx_.Error(pos, fmt::format("expected a BOOLEAN expression but this is {}", e->type.WithNullable(true).ToString()));
}

BoundExprPtr Binder::Compare(ExprOp op, BoundExprPtr a, BoundExprPtr b, Pos pos) const {
  SqlType ta = a->type, tb = b->type;
  if ((ta.id == TypeId::kRow || tb.id == TypeId::kRow) && op != ExprOp::kIsDistinct)
    return CompareRows(op, std::move(a), std::move(b), pos, false);
  // Integers and decimals compare exactly whatever their scales (the evaluator aligns them in
  // 128 bits), so no cast to a common DECIMAL(18, s) can overflow: BIGINT 10^18 > 1.5 is TRUE.
  if (ta.IsExactNumeric() && tb.IsExactNumeric() && op != ExprOp::kIsDistinct) {
    bool nullable = ta.nullable || tb.nullable;
    std::vector<BoundExprPtr> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return MakeCall(op, Bool(nullable), std::move(args));
  }
  // A string or binary literal next to a number: the number it spells, else (SQLite's order)
  // unequal to every number and after them all.
  for (int side = 0; side < 2; ++side) {
    BoundExprPtr& c = side == 0 ? a : b;
    BoundExprPtr& other = side == 0 ? b : a;
    BoundExprPtr number;
    if (!ConstantVersusNumber(*c, other->type, &number)) continue;
    if (number) {
      c = std::move(number);
      return Compare(op, std::move(a), std::move(b), pos);
    }
    // The constant is greater than the number: number op constant, with the operands in order.
    ExprOp num_op = op;
    if (side == 0) {
      if (op == ExprOp::kLt) num_op = ExprOp::kGt;
      if (op == ExprOp::kLe) num_op = ExprOp::kGe;
      if (op == ExprOp::kGt) num_op = ExprOp::kLt;
      if (op == ExprOp::kGe) num_op = ExprOp::kLe;
    }
    const bool holds =
        num_op == ExprOp::kNe || num_op == ExprOp::kLt || num_op == ExprOp::kLe || num_op == ExprOp::kIsDistinct;
    if (op == ExprOp::kIsDistinct || !other->type.nullable) return MakeLiteral(Value::Int(holds), Bool(false));
    // NULL when the number is NULL.
    std::vector<BoundExprPtr> is_null;
    is_null.push_back(std::move(other));
    std::vector<BoundExprPtr> args;
    args.push_back(MakeCall(ExprOp::kIsNull, Bool(false), std::move(is_null)));
    args.push_back(MakeLiteral(Value::Null(), Bool(true)));
    args.push_back(MakeLiteral(Value::Int(holds), Bool(false)));
    auto result = MakeCall(ExprOp::kCase, Bool(true), std::move(args));
    result->has_else = true;
    return result;
  }
  // A string literal next to a date or time converts to that type.
  SqlType common;
  if (a->op == ExprOp::kLiteral && ta.IsString() && !tb.IsString() && tb.id != TypeId::kNull)
    common = tb;
  else if (b->op == ExprOp::kLiteral && tb.IsString() && !ta.IsString() && ta.id != TypeId::kNull)
    common = ta;
  else
    common = CommonType(ta, tb, pos);
  bool nullable = ta.nullable || tb.nullable;
  if (common.id == TypeId::kNull) common = SqlType::Of(TypeId::kInteger);
  std::vector<BoundExprPtr> args;
  args.push_back(Coerce(std::move(a), common.WithNullable(ta.nullable), pos));
  args.push_back(Coerce(std::move(b), common.WithNullable(tb.nullable), pos));
  return MakeCall(op, Bool(op == ExprOp::kIsDistinct ? false : nullable), std::move(args));
}

// ROW values compare as in PostgreSQL. Two ROW(...) constructors compare field by field with
// SQL's NULL rules: = is every field pair's =, <> any pair's <>; <, <=, >, >= are decided by the
// first pair that is not equal, left to right (NULL when that pair has a NULL; when all pairs
// are equal, <= and >= hold and < and > do not); written with AND / OR over the field
// comparisons, whose three-valued logic gives exactly these rules. Other ROW values (columns,
// casts, fields that are ROWs) compare as PostgreSQL compares composite values: NULL only when a
// whole value is NULL, else a total order in which NULL fields equal each other and follow every
// other value.
BoundExprPtr Binder::CompareRows(ExprOp op, BoundExprPtr a, BoundExprPtr b, Pos pos, bool nested) const {
  if (a->type.id == TypeId::kNull || b->type.id == TypeId::kNull) return MakeLiteral(Value::Null(), Bool(true));
  if (a->type.id != TypeId::kRow || b->type.id != TypeId::kRow)
    ctx_.Error(pos, fmt::format("cannot compare {} with {}", a->type.WithNullable(true).ToString(),
                                b->type.WithNullable(true).ToString()));
  const size_t n = a->type.fields->size();
  if (b->type.fields->size() != n)
    ctx_.Error(pos, fmt::format("cannot compare rows of {} and {} fields", n, b->type.fields->size()));
  // Composite values: NULL when either value is.
  auto composite = [&](ExprOp o, BoundExprPtr x, BoundExprPtr y) {
    BoundExprPtr c = CompareComposite(o, *x, *y, pos);
    if (!x->type.nullable && !y->type.nullable) return c;
    std::vector<BoundExprPtr> x_null, y_null, args;
    x_null.push_back(std::move(x));
    y_null.push_back(std::move(y));
    args.push_back(Logic(ExprOp::kOr, MakeCall(ExprOp::kIsNull, Bool(false), std::move(x_null)),
                         MakeCall(ExprOp::kIsNull, Bool(false), std::move(y_null)), pos));
    args.push_back(MakeLiteral(Value::Null(), Bool(true)));
    args.push_back(std::move(c));
    auto out = MakeCall(ExprOp::kCase, Bool(true), std::move(args));
    out->has_else = true;
    return out;
  };
  if (nested || a->op != ExprOp::kRow || b->op != ExprOp::kRow) return composite(op, std::move(a), std::move(b));
  // Fields that are ROWs compare as composite values.
  auto cmp = [&](ExprOp o, size_t i) {
    if ((*a->type.fields)[i].id == TypeId::kRow || (*b->type.fields)[i].id == TypeId::kRow)
      return CompareRows(o, a->args[i]->Clone(), b->args[i]->Clone(), pos, true);
    return Compare(o, a->args[i]->Clone(), b->args[i]->Clone(), pos);
  };
  if (op == ExprOp::kEq || op == ExprOp::kNe) {
    BoundExprPtr all;
    for (size_t i = 0; i < n; ++i) {
      BoundExprPtr c = cmp(op, i);
      all =
          all ? Logic(op == ExprOp::kEq ? ExprOp::kAnd : ExprOp::kOr, std::move(all), std::move(c), pos) : std::move(c);
    }
    return all;
  }
  const ExprOp strict = op == ExprOp::kLt || op == ExprOp::kLe ? ExprOp::kLt : ExprOp::kGt;
  // a1 < b1 OR (a1 = b1 AND (a2 < b2 OR (a2 = b2 AND ... an <= bn)))
  BoundExprPtr out = cmp(op, n - 1);
  for (size_t i = n - 1; i-- > 0;)
    out = Logic(ExprOp::kOr, cmp(strict, i), Logic(ExprOp::kAnd, cmp(ExprOp::kEq, i), std::move(out), pos), pos);
  return out;
}

BoundExprPtr Binder::CompareComposite(ExprOp op, const BoundExpr& a, const BoundExpr& b, Pos pos) const {
  auto is_null = [](BoundExprPtr x) {
    std::vector<BoundExprPtr> args;
    args.push_back(std::move(x));
    return MakeCall(ExprOp::kIsNull, Bool(false), std::move(args));
  };
  auto negate = [](BoundExprPtr x) {
    std::vector<BoundExprPtr> args;
    args.push_back(std::move(x));
    return MakeCall(ExprOp::kNot, Bool(false), std::move(args));
  };
  const size_t n = a.type.fields->size();
  auto field = [](const BoundExpr& r, size_t i) {
    return r.op == ExprOp::kRow ? r.args[i]->Clone() : RowField(r.Clone(), i);
  };
  // Equal fields: NULLs equal each other (IS NOT DISTINCT FROM, also for ROW fields).
  auto eq = [&](size_t i) {
    BoundExprPtr d = Compare(ExprOp::kIsDistinct, field(a, i), field(b, i), pos);
    d->type.nullable = false;
    return negate(std::move(d));
  };
  if (op == ExprOp::kEq || op == ExprOp::kNe) {
    BoundExprPtr all;
    for (size_t i = 0; i < n; ++i) all = all ? Logic(ExprOp::kAnd, std::move(all), eq(i), pos) : eq(i);
    return op == ExprOp::kEq ? std::move(all) : negate(std::move(all));
  }
  if (op == ExprOp::kGt || op == ExprOp::kGe)
    return CompareComposite(op == ExprOp::kGt ? ExprOp::kLt : ExprOp::kLe, b, a, pos);
  // Field i of a before field i of b: CASE WHEN ai IS NULL THEN FALSE WHEN bi IS NULL THEN TRUE
  // ELSE ai < bi END.
  auto lt = [&](size_t i) {
    BoundExprPtr x = field(a, i), y = field(b, i);
    BoundExprPtr less = x->type.id == TypeId::kRow ? CompareComposite(ExprOp::kLt, *x, *y, pos)
                                                   : Compare(ExprOp::kLt, x->Clone(), y->Clone(), pos);
    std::vector<BoundExprPtr> args;
    args.push_back(is_null(std::move(x)));
    args.push_back(MakeLiteral(Value::Int(0), Bool(false)));
    args.push_back(is_null(std::move(y)));
    args.push_back(MakeLiteral(Value::Int(1), Bool(false)));
    args.push_back(std::move(less));
    auto c = MakeCall(ExprOp::kCase, Bool(false), std::move(args));
    c->has_else = true;
    c->args.back()->type.nullable = false;
    return c;
  };
  BoundExprPtr out = op == ExprOp::kLt ? lt(n - 1) : Logic(ExprOp::kOr, lt(n - 1), eq(n - 1), pos);
  for (size_t i = n - 1; i-- > 0;)
    out = Logic(ExprOp::kOr, lt(i), Logic(ExprOp::kAnd, eq(i), std::move(out), pos), pos);
  return out;
}

bool Binder::ConstantVersusNumber(const BoundExpr& constant, const SqlType& other, BoundExprPtr* number) const {
  if (constant.op != ExprOp::kLiteral || constant.literal.IsNull() || !other.IsNumeric()) return false;
  if (!constant.type.IsString() && !constant.type.IsBinary()) return false;
  number->reset();
  if (constant.type.IsBinary()) return true;  // SQLite never reads a BLOB as a number
  static const std::regex kNumber(R"(\s*([+-]?)(\d*)(\.?)(\d*)([eE][+-]?\d+)?\s*)");
  std::smatch m;
  const std::string& text = constant.literal.s;
  if (!std::regex_match(text, m, kNumber) || (m[2].length() == 0 && m[4].length() == 0)) return true;
  sql::Expr lit;
  lit.kind = ExprKind::kLiteral;
  const std::string sign = m[1] == "-" ? "-" : "";
  const std::string whole = m[2].length() ? m[2].str() : "0";
  if (m[5].matched) {
    lit.lit_kind = sql::LiteralKind::kDouble;
    lit.text = sign + whole + "." + m[4].str() + "0" + m[5].str();
  } else if (m[4].length() || whole.size() > 18) {
    lit.lit_kind = sql::LiteralKind::kDecimal;
    lit.text = sign + whole + (m[4].length() ? "." + m[4].str() : "");
  } else {
    lit.lit_kind = sql::LiteralKind::kInteger;
    lit.text = sign + whole;
  }
  *number = BindLiteral(lit);
  return true;
}

BoundExprPtr Binder::Arith(ExprOp op, BoundExprPtr a, BoundExprPtr b, Pos pos) const {
  if (BoundExprPtr t = TimeArith(op, a, b, pos)) return t;
  SqlType ta = a->type, tb = b->type;
  bool nullable = ta.nullable || tb.nullable || op == ExprOp::kDiv || op == ExprOp::kMod;
  if (ta.id == TypeId::kNull && tb.id == TypeId::kNull) ta = tb = SqlType::Of(TypeId::kInteger);
  if (ta.id == TypeId::kNull) ta = tb;
  if (tb.id == TypeId::kNull) tb = ta;
  if (!ta.IsNumeric() || !tb.IsNumeric())
    ctx_.Error(pos, fmt::format("cannot apply arithmetic to {} and {}", ta.WithNullable(true).ToString(),
                                tb.WithNullable(true).ToString()));
  std::vector<BoundExprPtr> args;
  SqlType result;
  if (ta.IsFloat() || tb.IsFloat()) {
    result = SqlType::Of(TypeId::kDouble);
    args.push_back(Coerce(std::move(a), result, pos));
    args.push_back(Coerce(std::move(b), result, pos));
  } else if (ta.id == TypeId::kDecimal || tb.id == TypeId::kDecimal) {
    // Integers take part as the DECIMAL(n, 0) that holds them; the evaluator aligns scales.
    SqlType da = AsDecimal(ta).WithNullable(true), db = AsDecimal(tb).WithNullable(true);
    result = DecimalResult(op, da, db);
    args.push_back(Coerce(std::move(a), da.WithNullable(ta.nullable), pos));
    args.push_back(Coerce(std::move(b), db.WithNullable(tb.nullable), pos));
  } else {
    result = (IntRank(ta.id) >= IntRank(tb.id) ? ta : tb);
    args.push_back(Coerce(std::move(a), result, pos));
    args.push_back(Coerce(std::move(b), result, pos));
  }
  return MakeCall(op, result.WithNullable(nullable), std::move(args));
}

namespace {

// The body of a SQL function with its parameters (columns 0..n-1) replaced by the arguments.
BoundExprPtr Substitute(const BoundExpr& body, const std::vector<BoundExprPtr>& args) {
  if (body.op == ExprOp::kColumn) return args[body.column_index]->Clone();
  auto e = std::make_unique<BoundExpr>();
  e->op = body.op;
  e->type = body.type;
  e->column_index = body.column_index;
  e->literal = body.literal;
  e->has_else = body.has_else;
  e->function = body.function;
  e->external = body.external;
  for (const auto& a : body.args) e->args.push_back(Substitute(*a, args));
  return e;
}

}  // namespace

std::shared_ptr<ExternalFunction> Binder::DeclareFunction(const sql::CreateFunction& f,
                                                          std::shared_ptr<ExternalFunction> shared) {
  for (const UserFunction& u : functions_)
    if (EqualsIgnoreCase(u.name, f.name)) ctx_.Error(f.pos, fmt::format("function {} is already declared", f.name));
  if (FindFunction(ToUpper(f.name)) || IsAggregateName(ToUpper(f.name)))
    ctx_.Error(f.pos, fmt::format("function {} has the name of a SQL library function", f.name));
  UserFunction u;
  u.name = f.name;
  u.result = f.result;
  Scope params;
  for (const auto& [name, type] : f.params) {
    for (const auto& c : params.cols)
      if (EqualsIgnoreCase(c.name, name)) ctx_.Error(f.pos, fmt::format("parameter {} appears twice", name));
    u.params.push_back(type);
    params.cols.push_back({"", name, type, false});
  }
  if (f.body) {
    if (ContainsAggregate(*f.body) || ContainsSubquery(*f.body))
      ctx_.Error(f.body->pos, "a function's body is a scalar expression (no aggregates or subqueries)");
    BoundExprPtr body = Bind(*f.body, params);
    const bool nullable = f.result.nullable || body->type.nullable;
    u.body = Coerce(std::move(body), f.result.WithNullable(nullable), f.body->pos);
  } else if (shared) {
    u.external = std::move(shared);
  } else {
    u.external = std::make_shared<ExternalFunction>();
    u.external->name = f.name;
    u.external->params = u.params;
    u.external->result = f.result;
  }
  functions_.push_back(std::move(u));
  return functions_.back().external;
}

BoundExprPtr Binder::CallUserFunction(const UserFunction& f, const Expr& call, std::vector<BoundExprPtr> args) const {
  if (args.size() != f.params.size())
    ctx_.Error(call.pos, fmt::format("{} takes {} argument{}, not {}", f.name, f.params.size(),
                                     f.params.size() == 1 ? "" : "s", args.size()));
  bool nullable = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const SqlType& p = f.params[i];
    const SqlType& t = args[i]->type;
    if (t.id != TypeId::kNull && !p.SameAs(t)) CommonType(p, t, call.args[i]->pos);  // convertible at all?
    nullable = nullable || t.nullable;
    args[i] = Coerce(std::move(args[i]), p.WithNullable(t.nullable), call.args[i]->pos);
  }
  if (f.body) {
    BoundExprPtr e = Substitute(*f.body, args);
    e->type.nullable = e->type.nullable && (f.result.nullable || nullable);
    return e;
  }
  auto e = MakeCall(ExprOp::kCall, f.result, std::move(args));
  e->external = f.external;
  return e;
}

BoundExprPtr Binder::Logic(ExprOp op, BoundExprPtr a, BoundExprPtr b, Pos pos) const {
  a = RequireBool(std::move(a), pos);
  b = RequireBool(std::move(b), pos);
  bool nullable = a->type.nullable || b->type.nullable;
  std::vector<BoundExprPtr> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  return MakeCall(op, Bool(nullable), std::move(args));
}

BoundExprPtr Binder::Bind(const Expr& e, const Scope& scope) {
  return BindWith(e, &scope, [&](const Expr& c) { return Bind(c, scope); });
}

BoundExprPtr Binder::BindPredicate(const Expr& e, const Scope& scope) {
  return RequireBool(Bind(e, scope), e.pos);
}

BoundExprPtr Binder::AggregateCall(const Expr& e, AggContext* agg) {
  static const std::pair<std::string_view, AggKind> kKinds[] = {
      {"COUNT", AggKind::kCount},
      {"SUM", AggKind::kSum},
      {"AVG", AggKind::kAvg},
      {"MIN", AggKind::kMin},
      {"MAX", AggKind::kMax},
      {"ARG_MIN", AggKind::kArgMin},
      {"ARG_MAX", AggKind::kArgMax},
      {"STDDEV", AggKind::kStddevSamp},
      {"STDDEV_SAMP", AggKind::kStddevSamp},
      {"STDDEV_POP", AggKind::kStddevPop},
      {"VARIANCE", AggKind::kVarSamp},
      {"VAR_SAMP", AggKind::kVarSamp},
      {"VAR_POP", AggKind::kVarPop},
      {"BIT_AND", AggKind::kBitAnd},
      {"BIT_OR", AggKind::kBitOr},
      {"BIT_XOR", AggKind::kBitXor},
      {"ARRAY_AGG", AggKind::kArrayAgg},
      {"MAP_AGG", AggKind::kMapAgg},
      // EVERY/BOOL_AND is MIN over BOOLEAN (FALSE < TRUE), SOME/BOOL_OR is MAX.
      {"EVERY", AggKind::kMin},
      {"BOOL_AND", AggKind::kMin},
      {"SOME", AggKind::kMax},
      {"BOOL_OR", AggKind::kMax},
      {"COUNTIF", AggKind::kCountStar},
  };
  if (e.name == "GROUPING" || e.name == "GROUPING_ID" || e.name == "GROUP_ID") return GroupingCall(e, agg);
  AggSpec spec;
  bool known = false;
  for (const auto& [name, kind] : kKinds)
    if (e.name == name) {
      spec.kind = kind;
      known = true;
    }
  if (!known) ctx_.Error(e.pos, fmt::format("{} is not supported yet", e.name));
  const bool boolean = e.name == "EVERY" || e.name == "BOOL_AND" || e.name == "SOME" || e.name == "BOOL_OR";
  const bool countif = e.name == "COUNTIF";
  if (e.name == "COUNT" && e.star_arg)
    spec.kind = AggKind::kCountStar;
  else if (e.star_arg)
    ctx_.Error(e.pos, fmt::format("{}(*) is not valid", e.name));
  // DISTINCT changes nothing for MIN/MAX-like aggregates.
  spec.distinct = e.distinct && spec.kind != AggKind::kMin && spec.kind != AggKind::kMax &&
                  spec.kind != AggKind::kArgMin && spec.kind != AggKind::kArgMax && spec.kind != AggKind::kBitAnd &&
                  spec.kind != AggKind::kBitOr && spec.kind != AggKind::kCountStar;
  // MAP_AGG(DISTINCT k, v) is MAP_AGG(k, v): its map depends only on the set of (k, v) pairs.
  const bool map_agg = spec.kind == AggKind::kMapAgg;
  const bool two = spec.kind == AggKind::kArgMin || spec.kind == AggKind::kArgMax || map_agg;
  BoundExprPtr arg, key, filter;
  auto bind_arg = [&](const Expr& a) {
    if (!agg->outer && ContainsAggregate(a)) ctx_.Error(a.pos, "aggregate calls cannot be nested");
    // SUM(SUM(x)) OVER (...): through the block's aggregates.
    BoundExprPtr b = agg->outer ? BindAggregate(a, agg->outer) : Bind(a, *agg->input);
    if (b->type.id == TypeId::kNull) b = Coerce(std::move(b), SqlType::Of(TypeId::kInteger), a.pos);
    return b;
  };
  if (spec.kind != AggKind::kCountStar || countif) {
    const size_t want = two ? 2 : 1;
    if (e.args.size() != want)
      ctx_.Error(e.pos, fmt::format("{} takes exactly {} argument{}", e.name, want, want == 1 ? "" : "s"));
    // MAP_AGG(k, v): the key comes first; ARG_MIN(v, k): the value does.
    arg = bind_arg(*e.args[map_agg ? 1 : 0]);
    if (two) {
      key = bind_arg(*e.args[map_agg ? 0 : 1]);
      spec.key_type = key->type;
    }
  }
  if (countif) {
    // COUNTIF(c) is COUNT(*) FILTER (WHERE c).
    filter = RequireBool(std::move(arg), e.args[0]->pos);
  } else if (arg) {
    spec.arg_type = arg->type;
  }
  const std::string type_name = spec.arg_type.WithNullable(true).ToString();
  switch (spec.kind) {
    case AggKind::kSum:
    case AggKind::kAvg:
    case AggKind::kStddevPop:
    case AggKind::kStddevSamp:
    case AggKind::kVarPop:
    case AggKind::kVarSamp:
      if (!spec.arg_type.IsNumeric())
        ctx_.Error(e.args[0]->pos, fmt::format("{} needs a numeric argument, not {}", e.name, type_name));
      break;
    case AggKind::kBitAnd:
    case AggKind::kBitOr:
    case AggKind::kBitXor:
      if (!spec.arg_type.IsInteger())
        ctx_.Error(e.args[0]->pos, fmt::format("{} needs an integer argument, not {}", e.name, type_name));
      break;
    default:
      if (boolean && spec.arg_type.id != TypeId::kBoolean)
        ctx_.Error(e.args[0]->pos, fmt::format("{} needs a BOOLEAN argument, not {}", e.name, type_name));
      break;
  }
  if (spec.kind == AggKind::kCountStar || spec.kind == AggKind::kCount) {
    spec.result_type = SqlType::Of(TypeId::kBigInt, false);
  } else if (spec.kind == AggKind::kSum) {
    if (spec.arg_type.IsInteger())
      spec.result_type = SqlType::Of(TypeId::kBigInt);
    else if (spec.arg_type.id == TypeId::kDecimal)
      spec.result_type = SqlType::Decimal(kMaxDecimalPrecision, spec.arg_type.scale);
    else
      spec.result_type = SqlType::Of(TypeId::kDouble);
  } else {
    // AVG, STDDEV, VARIANCE (as in Feldera), MIN/MAX, ARG_MIN/ARG_MAX, BIT_*: the argument's type.
    spec.result_type = spec.arg_type.WithNullable(true);
    // ARRAY_AGG: an array of it, empty (not NULL) over no rows.
    if (spec.kind == AggKind::kArrayAgg) spec.result_type = SqlType::Array(spec.arg_type, false);
    // MAP_AGG: a map from the (non-NULL) keys to the values, empty over no rows.
    if (map_agg) spec.result_type = SqlType::Map(spec.key_type.WithNullable(false), spec.arg_type, false);
  }
  if (e.filter) {
    if (ContainsAggregate(*e.filter))
      ctx_.Error(e.filter->pos,
                 agg->outer ? "aggregate functions are not allowed in FILTER" : "aggregate calls cannot be nested");
    BoundExprPtr f = agg->outer ? RequireBool(BindAggregate(*e.filter, agg->outer), e.filter->pos)
                                : BindPredicate(*e.filter, *agg->input);
    filter = filter ? Logic(ExprOp::kAnd, std::move(filter), std::move(f), e.filter->pos) : std::move(f);
  }
  // Reuse an identical aggregate already in the block.
  auto same = [](const BoundExprPtr& a, const BoundExprPtr& b) { return a ? (b && a->Equals(*b)) : !b; };
  for (size_t i = 0; i < agg->aggs.size(); ++i) {
    const AggSpec& o = agg->aggs[i];
    if (o.kind != spec.kind || o.distinct != spec.distinct || agg->grouping_calls.contains(i)) continue;
    if (!same(arg, agg->args[i]) || !same(key, agg->keys[i]) || !same(filter, agg->filters[i])) continue;
    return MakeColumn(static_cast<int>(agg->group_exprs.size() + i), o.result_type);
  }
  agg->aggs.push_back(spec);
  agg->args.push_back(countif ? nullptr : std::move(arg));
  agg->keys.push_back(std::move(key));
  agg->filters.push_back(std::move(filter));
  return MakeColumn(static_cast<int>(agg->group_exprs.size() + agg->aggs.size() - 1), spec.result_type);
}

// GROUPING(a, b, ...): each argument must be a GROUP BY expression; the value is a BIGINT bit
// mask per grouping set, computed by the planner (see AggContext::grouping_calls).
// GROUP_ID(): which copy of a repeated grouping set a row comes from (see AggContext).
BoundExprPtr Binder::GroupingCall(const Expr& e, AggContext* agg) {
  const bool group_id = e.name == "GROUP_ID";
  if (group_id && (e.star_arg || !e.args.empty())) ctx_.Error(e.pos, "GROUP_ID takes no arguments");
  if (!group_id && (e.star_arg || e.args.empty()))
    ctx_.Error(e.pos, fmt::format("{} needs at least one argument", e.name));
  if (e.distinct || e.filter) ctx_.Error(e.pos, fmt::format("{} takes neither DISTINCT nor FILTER", e.name));
  if (e.args.size() > 62) ctx_.Error(e.pos, fmt::format("{} takes at most 62 arguments", e.name));
  std::vector<int> keys;
  if (group_id) keys.push_back(AggContext::kGroupId);
  for (const auto& a : e.args) {
    if (ContainsAggregate(*a)) ctx_.Error(a->pos, "aggregate calls cannot be nested");
    BoundExprPtr b = Bind(*a, *agg->input);
    int g = -1;
    for (size_t i = 0; i < agg->group_exprs.size() && g < 0; ++i)
      if (b->Equals(*agg->group_exprs[i])) g = static_cast<int>(i);
    if (g < 0) ctx_.Error(a->pos, fmt::format("the arguments of {} must be GROUP BY expressions", e.name));
    keys.push_back(g);
  }
  const SqlType type = SqlType::Of(TypeId::kBigInt, false);
  for (const auto& [slot, k] : agg->grouping_calls)
    if (k == keys) return MakeColumn(static_cast<int>(agg->group_exprs.size() + slot), type);
  AggSpec spec;  // a placeholder: never given to an aggregate operator
  spec.result_type = type;
  agg->grouping_calls.emplace(agg->aggs.size(), std::move(keys));
  agg->aggs.push_back(spec);
  agg->args.push_back(nullptr);
  agg->keys.push_back(nullptr);
  agg->filters.push_back(nullptr);
  return MakeColumn(static_cast<int>(agg->group_exprs.size() + agg->aggs.size() - 1), type);
}

BoundExprPtr Binder::BindAggregate(const Expr& e, AggContext* agg) {
  if (e.kind == ExprKind::kFunction && e.over) {
    // A window function over the aggregate's output, planned as a column of it.
    for (const auto& [k, v] : subquery_columns_)
      if (k == &e) return MakeColumn(v.first, v.second);
  }
  if (e.kind == ExprKind::kFunction && IsAggregateName(e.name)) return AggregateCall(e, agg);
  if (BoundExprPtr w = GroupWindowBound(e, agg)) return w;
  if (!ContainsAggregate(e) && OnlyInputSubqueries(e, agg->input_subqueries) && !ContainsWindow(e) &&
      e.kind != ExprKind::kLiteral) {
    BoundExprPtr b = Bind(e, *agg->input);
    for (size_t g = 0; g < agg->group_exprs.size(); ++g)
      if (b->Equals(*agg->group_exprs[g])) return MakeColumn(static_cast<int>(g), agg->group_exprs[g]->type);
    if (b->IsConstant()) return b;
    if (e.kind == ExprKind::kColumnRef) {
      std::string full = e.qualifier.empty() ? e.name : e.qualifier + "." + e.name;
      ctx_.Error(e.pos, fmt::format("column '{}' must appear in GROUP BY or be used in an aggregate function", full));
    }
    // A subquery computed per input row (a GROUP BY key's) is read only as that key.
    if (agg->input_subqueries.contains(&e))
      ctx_.Error(e.pos, "a subquery of GROUP BY must appear in the select list as written in GROUP BY");
  }
  if (BoundExprPtr c = CoalesceInAggregate(e, agg)) return c;
  if (e.kind == ExprKind::kCase) {
    // The values that never run are bound over the input, for their types only.
    return BindCase(
        e, [&](const Expr& c) { return BindAggregate(c, agg); },
        [&](const Expr& c) {
          const bool plain = !ContainsAggregate(c) && !ContainsSubquery(c) && !ContainsWindow(c);
          return plain ? Bind(c, *agg->input) : BindAggregate(c, agg);
        });
  }
  return BindWith(e, nullptr, [&](const Expr& c) { return BindAggregate(c, agg); });
}

BoundExprPtr Binder::Coalesce(std::vector<BoundExprPtr> args, size_t keep, const Expr& e) const {
  SqlType t = args[0]->type;
  for (size_t i = 1; i < args.size(); ++i) t = CommonType(t, args[i]->type, e.args[i]->pos);
  if (t.id == TypeId::kNull) t = SqlType::Of(TypeId::kInteger);
  // The arguments after one that cannot be NULL are never evaluated.
  for (size_t i = 0; i < keep; ++i)
    if (!args[i]->type.nullable && args[i]->type.id != TypeId::kNull) keep = i + 1;
  args.resize(keep);
  bool nullable = true;
  for (const auto& a : args) nullable = nullable && a->type.nullable;
  for (size_t i = 0; i < args.size(); ++i)
    args[i] = Coerce(std::move(args[i]), t.WithNullable(args[i]->type.nullable), e.args[i]->pos);
  if (args.size() == 1) return std::move(args[0]);
  return MakeCall(ExprOp::kCoalesce, t.WithNullable(nullable), std::move(args));
}

BoundExprPtr Binder::CoalesceInAggregate(const Expr& e, AggContext* agg) {
  if (e.kind != ExprKind::kFunction || e.name != "COALESCE" || e.over || e.distinct || e.filter || e.star_arg ||
      e.args.empty())
    return nullptr;
  for (const UserFunction& f : functions_)
    if (EqualsIgnoreCase(f.name, e.name)) return nullptr;
  std::vector<BoundExprPtr> args;
  size_t keep = e.args.size();
  for (size_t i = 0; i < e.args.size(); ++i) {
    if (i < keep) {
      args.push_back(BindAggregate(*e.args[i], agg));
      if (!args.back()->type.nullable && args.back()->type.id != TypeId::kNull) keep = i + 1;
    } else if (!ContainsAggregate(*e.args[i]) && !ContainsSubquery(*e.args[i]) && !ContainsWindow(*e.args[i])) {
      args.push_back(Bind(*e.args[i], *agg->input));  // for its type only
    } else {
      args.push_back(BindAggregate(*e.args[i], agg));
    }
  }
  return Coalesce(std::move(args), keep, e);
}

namespace {

// Whether e is built from literals by operators whose value is fixed at planning time (so no
// column, no function call: those may depend on the time or be external).
bool FixedValue(const BoundExpr& e) {
  switch (e.op) {
    case ExprOp::kLiteral:
    case ExprOp::kEq:
    case ExprOp::kNe:
    case ExprOp::kLt:
    case ExprOp::kLe:
    case ExprOp::kGt:
    case ExprOp::kGe:
    case ExprOp::kIsDistinct:
    case ExprOp::kNot:
    case ExprOp::kAnd:
    case ExprOp::kOr:
    case ExprOp::kIsNull:
    case ExprOp::kIsNotNull:
    case ExprOp::kIsTrue:
    case ExprOp::kIsFalse:
    case ExprOp::kNeg:
    case ExprOp::kAdd:
    case ExprOp::kSub:
    case ExprOp::kMul:
    case ExprOp::kCast:
      break;
    default:
      return false;
  }
  for (const auto& a : e.args)
    if (!FixedValue(*a)) return false;
  return true;
}

// A CASE condition's value when it is fixed at planning time: 1 TRUE, 0 FALSE or NULL; else -1.
int FixedTruth(const BoundExpr& cond) {
  if (!FixedValue(cond)) return -1;
  try {
    Value v = EvaluateConstant(cond);
    return !v.IsNull() && v.i != 0 ? 1 : 0;
  } catch (const fld::Error&) {
    return -1;  // an error at run time, as written
  }
}

}  // namespace

BoundExprPtr Binder::BindCase(const Expr& e, const ChildBinder& child, const ChildBinder& dead) {
  size_t i = 0;
  BoundExprPtr operand;
  if (e.has_operand) operand = child(*e.args[i++]);
  const size_t end = e.args.size() - (e.has_else ? 1 : 0);
  std::vector<BoundExprPtr> conds, vals;  // the WHENs that may run
  std::vector<Pos> val_pos;
  BoundExprPtr else_val;  // the ELSE, or the value of a WHEN that is always TRUE
  Pos else_pos;
  std::vector<SqlType> types;  // every value's, dead or not
  std::vector<Pos> type_pos;
  bool decided = false;  // a WHEN before is always TRUE: nothing after it runs
  auto value = [&](const Expr& v, bool runs) {
    BoundExprPtr b = runs ? child(v) : dead(v);
    types.push_back(b->type);
    type_pos.push_back(v.pos);
    return b;
  };
  for (; i < end; i += 2) {
    const Expr& v = *e.args[i + 1];
    if (decided) {
      value(v, false);
      continue;
    }
    BoundExprPtr w = child(*e.args[i]);
    if (operand)
      w = Compare(ExprOp::kEq, operand->Clone(), std::move(w), e.args[i]->pos);
    else
      w = RequireBool(std::move(w), e.args[i]->pos);
    const int fixed = FixedTruth(*w);
    if (fixed == 0) {
      value(v, false);
      continue;
    }
    BoundExprPtr b = value(v, true);
    if (fixed == 1) {
      else_val = std::move(b);
      else_pos = v.pos;
      decided = true;
      continue;
    }
    conds.push_back(std::move(w));
    vals.push_back(std::move(b));
    val_pos.push_back(v.pos);
  }
  if (e.has_else) {
    BoundExprPtr b = value(*e.args.back(), !decided);
    if (!decided) {
      else_val = std::move(b);
      else_pos = e.args.back()->pos;
    }
  }
  SqlType t = types[0];
  for (size_t k = 1; k < types.size(); ++k) t = CommonType(t, types[k], type_pos[k]);
  if (t.id == TypeId::kNull) t = SqlType::Of(TypeId::kInteger);
  bool nullable = !e.has_else;
  for (const auto& ty : types) nullable = nullable || ty.nullable;
  t = t.WithNullable(nullable);
  if (conds.empty()) return else_val ? Coerce(std::move(else_val), t, else_pos) : MakeLiteral(Value::Null(), t);
  std::vector<BoundExprPtr> args;
  for (size_t k = 0; k < conds.size(); ++k) {
    args.push_back(std::move(conds[k]));
    args.push_back(Coerce(std::move(vals[k]), t, val_pos[k]));
  }
  const bool has_else = else_val != nullptr;
  if (has_else) args.push_back(Coerce(std::move(else_val), t, else_pos));
  auto c = MakeCall(ExprOp::kCase, t, std::move(args));
  c->has_else = has_else;
  return c;
}

BoundExprPtr Binder::BindWith(const Expr& e, const Scope* scope, const ChildBinder& child) {
  using sql::Op;
  switch (e.kind) {
    case ExprKind::kLiteral:
      return BindLiteral(e);
    case ExprKind::kColumnRef: {
      if (!scope)
        ctx_.Error(e.pos,
                   fmt::format("column '{}' must appear in GROUP BY or be used in an aggregate function", e.name));
      int i = TryResolve(*scope, e.qualifier, e.name, e.pos);
      if (i < 0 && !e.qualifier.empty()) {
        // `column.field` of a ROW column (Feldera asks for `table.column.field`).
        // `v.field` of a VARIANT column is v['field'].
        int r = TryResolve(*scope, "", e.qualifier, e.pos);
        if (r >= 0 && scope->cols[r].type.id == TypeId::kVariant)
          return VariantField(MakeColumn(r, scope->cols[r].type), e.name, e.quoted);
        if (r >= 0 && scope->cols[r].type.id == TypeId::kRow)
          return BindFieldAccess(*this, MakeColumn(r, scope->cols[r].type), e.name, e.pos);
      }
      if (i < 0 && e.qualifier.empty() && EqualsIgnoreCase(e.name, "PI"))  // PI is written without ()
        return BindLibraryCall(*this, *FindFunction("PI"), e, {});
      if (i < 0) i = Resolve(*scope, e.qualifier, e.name, e.pos);
      return MakeColumn(i, scope->cols[i].type);
    }
    case ExprKind::kStar:
      ctx_.Error(e.pos, "'*' is not allowed here");
    case ExprKind::kUnary: {
      // -9223372036854775808 is BIGINT's smallest value, though its digits alone are out of range.
      const Expr& operand = *e.args[0];
      if (e.op == Op::kNeg && operand.kind == ExprKind::kLiteral && operand.lit_kind == sql::LiteralKind::kInteger) {
        std::string_view digits = operand.text;
        while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
        if (digits == "9223372036854775808")
          return MakeLiteral(Value::Int(INT64_MIN), SqlType::Of(TypeId::kBigInt, false));
      }
      BoundExprPtr a = child(*e.args[0]);
      if (e.op == Op::kNot) {
        a = RequireBool(std::move(a), e.args[0]->pos);
        SqlType t = a->type;
        std::vector<BoundExprPtr> args;
        args.push_back(std::move(a));
        return MakeCall(ExprOp::kNot, t, std::move(args));
      }
      if (a->type.id == TypeId::kNull) return a;
      if (!a->type.IsNumeric() && !a->type.IsInterval())
        ctx_.Error(e.pos, fmt::format("cannot apply unary {} to {}", e.op == Op::kNeg ? "-" : "+",
                                      a->type.WithNullable(true).ToString()));
      if (e.op == Op::kPlus) return a;
      if (a->op == ExprOp::kLiteral) {  // fold -literal so that -9223372036854775808 works
        Value v = a->literal;
        if (a->type.IsWideDecimal())
          v = Value::String(EncodeInt128(-DecodeInt128(v.s)));
        else if (v.kind == Value::Kind::kDouble)
          v.d = -v.d;
        else if (v.i == INT64_MIN)
          ctx_.Error(e.pos, "integer overflow in unary -");
        else
          v.i = -v.i;
        return MakeLiteral(v, a->type);
      }
      SqlType t = a->type;
      std::vector<BoundExprPtr> args;
      args.push_back(std::move(a));
      return MakeCall(ExprOp::kNeg, t, std::move(args));
    }
    case ExprKind::kBinary: {
      BoundExprPtr a = child(*e.args[0]);
      BoundExprPtr b = child(*e.args[1]);
      switch (e.op) {
        case Op::kAdd:
          return Arith(ExprOp::kAdd, std::move(a), std::move(b), e.pos);
        case Op::kSub:
          return Arith(ExprOp::kSub, std::move(a), std::move(b), e.pos);
        case Op::kMul:
          return Arith(ExprOp::kMul, std::move(a), std::move(b), e.pos);
        case Op::kDiv:
          return Arith(ExprOp::kDiv, std::move(a), std::move(b), e.pos);
        case Op::kMod:
          return Arith(ExprOp::kMod, std::move(a), std::move(b), e.pos);
        case Op::kConcat: {
          SqlType vc = SqlType::Of(TypeId::kVarchar, a->type.nullable || b->type.nullable);
          std::vector<BoundExprPtr> args;
          args.push_back(Coerce(std::move(a), vc, e.pos));
          args.push_back(Coerce(std::move(b), vc, e.pos));
          return MakeCall(ExprOp::kConcat, vc, std::move(args));
        }
        case Op::kEq:
          return Compare(ExprOp::kEq, std::move(a), std::move(b), e.pos);
        case Op::kNe:
          return Compare(ExprOp::kNe, std::move(a), std::move(b), e.pos);
        case Op::kLt:
          return Compare(ExprOp::kLt, std::move(a), std::move(b), e.pos);
        case Op::kLe:
          return Compare(ExprOp::kLe, std::move(a), std::move(b), e.pos);
        case Op::kGt:
          return Compare(ExprOp::kGt, std::move(a), std::move(b), e.pos);
        case Op::kGe:
          return Compare(ExprOp::kGe, std::move(a), std::move(b), e.pos);
        case Op::kAnd:
          return Logic(ExprOp::kAnd, std::move(a), std::move(b), e.pos);
        case Op::kOr:
          return Logic(ExprOp::kOr, std::move(a), std::move(b), e.pos);
        default:
          ctx_.Error(e.pos, "unsupported operator");
      }
    }
    case ExprKind::kLambda:
      ctx_.Error(e.pos, fmt::format("a lambda ({} -> ...) is allowed only as the second argument of ARRAY_EXISTS "
                                    "or TRANSFORM, after an ARRAY, or of the VARIANT_FILTER and VARIANT_MAP functions",
                                    e.name));
    case ExprKind::kFunction: {
      if (e.over) {
        for (const auto& [k, v] : subquery_columns_)
          if (k == &e) return MakeColumn(v.first, v.second);
        ctx_.Error(e.pos, fmt::format("window function {} is allowed only in a SELECT list (not in WHERE, GROUP BY, "
                                      "HAVING, ON, ORDER BY or another function's window)",
                                      e.name));
      }
      if (IsWindowOnlyName(e.name)) ctx_.Error(e.pos, fmt::format("{} needs an OVER clause", e.name));
      if (IsAggregateName(e.name)) ctx_.Error(e.pos, fmt::format("aggregate function {} is not allowed here", e.name));
      if (BoundExprPtr t = BindTimeFunction(e, child)) return t;
      RefuseUnsupported(*this, e);
      std::vector<BoundExprPtr> args;
      std::vector<BoundExprPtr> captures;  // the outer values a lambda reads
      for (const auto& a : e.args) {
        // A lambda's parameter is the element of the array before it (functions.h). Its body sees
        // the parameter as column 0 and each outer column it reads as one more column, whose
        // value the call receives as an extra argument (bound here like any argument).
        // The VARIANT functions' (k, x) -> lambdas see the key (a VARIANT, or for the DEEP ones
        // the VARCHAR path) as column 0 and the value (a VARIANT) as column 1.
        const bool on_array = !args.empty() && args.back()->type.id == TypeId::kArray;
        const bool on_variant = !args.empty() && args.back()->type.id == TypeId::kVariant && !a->text.empty();
        if (a->kind == ExprKind::kLambda && (on_array || on_variant)) {
          Scope lambda;
          if (on_variant) {
            const bool deep = e.name.find("DEEP") != std::string::npos;
            lambda.cols.push_back({"", a->name, SqlType::Of(deep ? TypeId::kVarchar : TypeId::kVariant, true)});
            lambda.cols.push_back({"", a->text, SqlType::Of(TypeId::kVariant, true)});
          } else {
            lambda.cols.push_back({"", a->name, (*args.back()->type.fields)[0]});
          }
          std::vector<const Expr*> refs;
          OuterReferences(*a->args[0], {a->name}, &refs);
          for (const Expr* r : refs) {
            bool seen = false;
            for (const ScopeColumn& c : lambda.cols)
              seen = seen || (EqualsIgnoreCase(c.qualifier, r->qualifier) && EqualsIgnoreCase(c.name, r->name));
            if (seen) continue;
            captures.push_back(child(*r));
            lambda.cols.push_back({r->qualifier, r->name, captures.back()->type});
            lambda.cols.back().qualified_only = !r->qualifier.empty();
          }
          args.push_back(Bind(*a->args[0], lambda));
          continue;
        }
        args.push_back(child(*a));
      }
      if (!captures.empty()) {
        const FunctionDef* def = FindFunction(e.name);
        BoundExprPtr call = def ? BindLibraryCall(*this, *def, e, std::move(args)) : nullptr;
        if (!call || !call->lambda) ctx_.Error(e.pos, fmt::format("{} takes no lambda", e.name));
        for (auto& c : captures) call->args.push_back(std::move(c));
        return call;
      }
      if (e.name == "$FIELD") {
        if (args[0]->type.id == TypeId::kVariant) return VariantField(std::move(args[0]), e.text, e.quoted);
        return BindFieldAccess(*this, std::move(args[0]), e.text, e.pos);
      }
      for (const UserFunction& f : functions_)
        if (EqualsIgnoreCase(f.name, e.name)) return CallUserFunction(f, e, std::move(args));
      // a[i] and CARDINALITY on a MAP or VARIANT are the collection functions'; on an ARRAY the
      // library's.
      if ((e.name == "ITEM" || e.name == "CARDINALITY") && !args.empty() &&
          (args[0]->type.id == TypeId::kMap || args[0]->type.id == TypeId::kVariant))
        if (BoundExprPtr c = BindCollectionFunction(e, args)) return c;
      if (const FunctionDef* def = FindFunction(e.name)) return BindLibraryCall(*this, *def, e, std::move(args));
      auto need = [&](size_t n) {
        if (args.size() != n) ctx_.Error(e.pos, fmt::format("{} takes {} argument{}", e.name, n, n == 1 ? "" : "s"));
      };
      if (e.name == "ROW") {
        if (args.empty()) ctx_.Error(e.pos, "ROW needs at least one field");
        std::vector<SqlType> types;
        for (auto& a : args) {
          if (a->type.id == TypeId::kNull) a = Coerce(std::move(a), SqlType::Of(TypeId::kInteger), e.pos);
          types.push_back(a->type);
        }
        return MakeCall(ExprOp::kRow, SqlType::Row(std::move(types), false), std::move(args));
      }
      if (BoundExprPtr c = BindCollectionFunction(e, args)) return c;
      if (e.name == "ABS") {
        need(1);
        if (args[0]->type.id == TypeId::kNull) return std::move(args[0]);
        if (!args[0]->type.IsNumeric() && !args[0]->type.IsInterval())
          ctx_.Error(e.pos, "ABS needs a numeric or INTERVAL argument");
        SqlType t = args[0]->type;
        return MakeCall(ExprOp::kAbs, t, std::move(args));
      }
      if (e.name == "COALESCE") {
        if (args.empty()) ctx_.Error(e.pos, "COALESCE needs at least one argument");
        const size_t n = args.size();
        return Coalesce(std::move(args), n, e);
      }
      if (e.name == "NULLIF") {
        need(2);
        SqlType t = args[0]->type.WithNullable(true);
        if (t.id == TypeId::kNull) return std::move(args[0]);
        BoundExprPtr cond = Compare(ExprOp::kEq, args[0]->Clone(), std::move(args[1]), e.pos);
        std::vector<BoundExprPtr> cargs;
        cargs.push_back(std::move(cond));
        cargs.push_back(MakeLiteral(Value::Null(), t));
        cargs.push_back(Coerce(std::move(args[0]), t, e.pos));
        auto c = MakeCall(ExprOp::kCase, t, std::move(cargs));
        c->has_else = true;
        return c;
      }
      ctx_.Error(e.pos, fmt::format("unknown function {}", e.name));
    }
    case ExprKind::kCase:
      return BindCase(e, child, child);
    case ExprKind::kCast: {
      if (BoundExprPtr d = BindIntervalCast(e, child)) return d;
      BoundExprPtr a = child(*e.args[0]);
      if (e.safe_cast) {
        // SAFE_CAST: NULL where the value does not convert.
        SqlType t = e.cast_type.WithNullable(true);
        if (a->type.SameAs(t) || a->type.id == TypeId::kNull) return Coerce(std::move(a), t, e.pos);
        if (a->op == ExprOp::kLiteral) {
          try {
            return MakeLiteral(CastValue(a->literal, a->type, t), t);
          } catch (const fld::Error&) {
            return MakeLiteral(Value::Null(), t);
          }
        }
        std::vector<BoundExprPtr> args;
        args.push_back(std::move(a));
        return MakeCall(ExprOp::kSafeCast, t, std::move(args));
      }
      SqlType t = e.cast_type.WithNullable(a->type.nullable);
      return Coerce(std::move(a), t, e.pos);
    }
    case ExprKind::kBetween: {
      BoundExprPtr a = child(*e.args[0]);
      BoundExprPtr lo = child(*e.args[1]);
      BoundExprPtr hi = child(*e.args[2]);
      BoundExprPtr ge = Compare(ExprOp::kGe, a->Clone(), std::move(lo), e.pos);
      BoundExprPtr le = Compare(ExprOp::kLe, std::move(a), std::move(hi), e.pos);
      BoundExprPtr both = Logic(ExprOp::kAnd, std::move(ge), std::move(le), e.pos);
      if (!e.negated) return both;
      SqlType t = both->type;
      std::vector<BoundExprPtr> args;
      args.push_back(std::move(both));
      return MakeCall(ExprOp::kNot, t, std::move(args));
    }
    case ExprKind::kInList: {
      BoundExprPtr a = child(*e.args[0]);
      BoundExprPtr any;
      for (size_t i = 1; i < e.args.size(); ++i) {
        BoundExprPtr eq = Compare(ExprOp::kEq, a->Clone(), child(*e.args[i]), e.args[i]->pos);
        any = any ? Logic(ExprOp::kOr, std::move(any), std::move(eq), e.pos) : std::move(eq);
      }
      if (!any) return MakeLiteral(Value::Int(e.negated ? 1 : 0), Bool(false));  // SQLite's x [NOT] IN ()
      if (!e.negated) return any;
      SqlType t = any->type;
      std::vector<BoundExprPtr> args;
      args.push_back(std::move(any));
      return MakeCall(ExprOp::kNot, t, std::move(args));
    }
    case ExprKind::kIsNull: {
      std::vector<BoundExprPtr> args;
      args.push_back(child(*e.args[0]));
      return MakeCall(e.negated ? ExprOp::kIsNotNull : ExprOp::kIsNull, Bool(false), std::move(args));
    }
    case ExprKind::kIsBool: {
      std::vector<BoundExprPtr> args;
      args.push_back(RequireBool(child(*e.args[0]), e.pos));
      auto t = MakeCall(e.bool_value ? ExprOp::kIsTrue : ExprOp::kIsFalse, Bool(false), std::move(args));
      if (!e.negated) return t;
      std::vector<BoundExprPtr> nargs;
      nargs.push_back(std::move(t));
      return MakeCall(ExprOp::kNot, Bool(false), std::move(nargs));
    }
    case ExprKind::kIsDistinct: {
      BoundExprPtr d = Compare(ExprOp::kIsDistinct, child(*e.args[0]), child(*e.args[1]), e.pos);
      d->type.nullable = false;
      if (!e.negated) return d;
      std::vector<BoundExprPtr> args;
      args.push_back(std::move(d));
      return MakeCall(ExprOp::kNot, Bool(false), std::move(args));
    }
    case ExprKind::kLike: {
      std::vector<BoundExprPtr> args;
      bool nullable = false;
      for (const auto& a : e.args) {
        BoundExprPtr b = child(*a);
        nullable = nullable || b->type.nullable;
        if (!b->type.IsString() && b->type.id != TypeId::kNull)
          ctx_.Error(a->pos, fmt::format("LIKE needs strings, not {}", b->type.WithNullable(true).ToString()));
        args.push_back(Coerce(std::move(b), SqlType::Of(TypeId::kVarchar, b ? true : true), a->pos));
      }
      auto like = MakeCall(ExprOp::kLike, Bool(nullable), std::move(args));
      if (!e.negated) return like;
      std::vector<BoundExprPtr> nargs;
      nargs.push_back(std::move(like));
      return MakeCall(ExprOp::kNot, Bool(nullable), std::move(nargs));
    }
    case ExprKind::kInQuery:
    case ExprKind::kExists:
    case ExprKind::kSubquery:
      for (const auto& [k, v] : subquery_columns_)
        if (k == &e) return MakeColumn(v.first, v.second);
      ctx_.Error(e.pos, fmt::format("{} are not supported here yet (in a window's PARTITION BY or ORDER BY, "
                                    "an ASOF or UNNEST join's ON condition or a VALUES row)",
                                    e.kind == ExprKind::kExists    ? "EXISTS subqueries"
                                    : e.kind == ExprKind::kInQuery ? "IN (SELECT ...) subqueries"
                                                                   : "scalar subqueries"));
  }
  ctx_.Error(e.pos, "unsupported expression");
}

void Binder::OuterReferences(const Expr& e, std::vector<std::string> params, std::vector<const Expr*>* out) {
  auto is_param = [&](std::string_view n) {
    for (const auto& p : params)
      if (EqualsIgnoreCase(p, n)) return true;
    return false;
  };
  if (e.kind == ExprKind::kColumnRef) {
    // `x` and `x.field` read the parameter; anything else an outer column (or PI).
    if (!is_param(e.qualifier.empty() ? e.name : e.qualifier)) out->push_back(&e);
    return;
  }
  if (e.kind == ExprKind::kLambda) params.push_back(e.name);
  for (const auto& a : e.args)
    if (a) OuterReferences(*a, params, out);
}

BoundExprPtr Binder::VariantField(BoundExprPtr v, std::string_view field, bool quoted) const {
  // Unquoted names are lower-cased, as Feldera does with all unquoted identifiers.
  std::string key(field);
  if (!quoted)
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<BoundExprPtr> args;
  args.push_back(std::move(v));
  args.push_back(MakeLiteral(Value::String(std::move(key)), SqlType::Of(TypeId::kVarchar, false)));
  return MakeCall(ExprOp::kItem, SqlType::Of(TypeId::kVariant), std::move(args));
}

BoundExprPtr Binder::BindCollectionFunction(const Expr& e, std::vector<BoundExprPtr>& args) const {
  auto need = [&](size_t n) {
    if (args.size() != n) ctx_.Error(e.pos, fmt::format("{} takes {} argument{}", e.name, n, n == 1 ? "" : "s"));
  };
  auto type_of = [](const BoundExprPtr& a) { return a->type.WithNullable(true).ToString(); };
  auto strict = [&](ExprOp op, SqlType t) {
    bool nullable = false;
    for (const auto& a : args) nullable = nullable || a->type.nullable;
    return MakeCall(op, t.WithNullable(nullable || t.nullable), std::move(args));
  };
  auto require = [&](size_t i, TypeId id, const char* what) {
    if (args[i]->type.id == TypeId::kNull) args[i] = Coerce(std::move(args[i]), SqlType::Of(id), e.pos);
    if (args[i]->type.id != id)
      ctx_.Error(e.args[i]->pos, fmt::format("{} needs {}, not {}", e.name, what, type_of(args[i])));
  };
  const std::string& name = e.name;
  if (name == "MAP[]") {
    if (args.empty() || args.size() % 2 != 0)
      ctx_.Error(e.pos, "MAP[...] needs keys and values in pairs (MAP[k1, v1, k2, v2, ...])");
    SqlType kt = args[0]->type, vt = args[1]->type;
    for (size_t i = 2; i < args.size(); i += 2) {
      kt = CommonType(kt, args[i]->type, e.args[i]->pos);
      vt = CommonType(vt, args[i + 1]->type, e.args[i + 1]->pos);
    }
    if (kt.id == TypeId::kNull) ctx_.Error(e.pos, "MAP keys cannot be NULL");
    if (vt.id == TypeId::kNull) vt = SqlType::Of(TypeId::kInteger);
    for (size_t i = 0; i < args.size(); ++i)
      args[i] = Coerce(std::move(args[i]), (i % 2 ? vt : kt).WithNullable(args[i]->type.nullable), e.args[i]->pos);
    return MakeCall(ExprOp::kMapValue, SqlType::Map(kt.WithNullable(false), vt.WithNullable(true), false),
                    std::move(args));
  }
  if (name == "ITEM") {
    const SqlType t = args[0]->type;
    if (t.id == TypeId::kVariant) return strict(ExprOp::kItem, SqlType::Of(TypeId::kVariant));
    if (t.id == TypeId::kArray) {
      if (!args[1]->type.IsInteger() && args[1]->type.id != TypeId::kNull)
        ctx_.Error(e.args[1]->pos, fmt::format("an ARRAY index must be an integer, not {}", type_of(args[1])));
      args[1] = Coerce(std::move(args[1]), SqlType::Of(TypeId::kBigInt, args[1]->type.nullable), e.pos);
      auto c = strict(ExprOp::kItem, (*t.fields)[0]);
      c->type.nullable = true;
      return c;
    }
    if (t.id == TypeId::kMap) {
      args[1] = Coerce(std::move(args[1]), (*t.fields)[0].WithNullable(args[1]->type.nullable), e.args[1]->pos);
      auto c = strict(ExprOp::kItem, (*t.fields)[1]);
      c->type.nullable = true;
      return c;
    }
    ctx_.Error(e.pos, fmt::format("[...] needs an ARRAY, a MAP or a VARIANT, not {}", type_of(args[0])));
  }
  if (name == "CARDINALITY") {
    need(1);
    if (args[0]->type.id != TypeId::kMap && args[0]->type.id != TypeId::kArray)
      ctx_.Error(e.pos, fmt::format("CARDINALITY needs a MAP or an ARRAY, not {}", type_of(args[0])));
    return strict(ExprOp::kCardinality, SqlType::Of(TypeId::kInteger, false));
  }
  if (name == "MAP_CONTAINS_KEY") {
    need(2);
    require(0, TypeId::kMap, "a MAP");
    args[1] = Coerce(std::move(args[1]), (*args[0]->type.fields)[0].WithNullable(args[1]->type.nullable), e.pos);
    return strict(ExprOp::kMapContainsKey, Bool(false));
  }
  if (name == "MAP_KEYS" || name == "MAP_VALUES") {
    need(1);
    require(0, TypeId::kMap, "a MAP");
    const bool keys = name == "MAP_KEYS";
    const SqlType el = (*args[0]->type.fields)[keys ? 0 : 1];
    return strict(keys ? ExprOp::kMapKeys : ExprOp::kMapValues, SqlType::Array(el, false));
  }
  if (name == "PARSE_JSON") {
    need(1);
    if (!args[0]->type.IsString())
      args[0] = Coerce(std::move(args[0]), SqlType::Of(TypeId::kVarchar, args[0]->type.nullable), e.pos);
    auto c = strict(ExprOp::kParseJson, SqlType::Of(TypeId::kVariant));
    c->type.nullable = true;
    return c;
  }
  if (name == "TO_JSON" || name == "TYPEOF") {
    need(1);
    require(0, TypeId::kVariant, "a VARIANT");
    auto c = strict(name == "TO_JSON" ? ExprOp::kToJson : ExprOp::kTypeOf, SqlType::Of(TypeId::kVarchar, false));
    if (name == "TO_JSON") c->type.nullable = true;
    return c;
  }
  if (name == "VARIANTNULL") {
    need(0);
    return MakeLiteral(Value::String(VariantNull()), SqlType::Of(TypeId::kVariant, false));
  }
  return nullptr;
}

}  // namespace fld::plan
