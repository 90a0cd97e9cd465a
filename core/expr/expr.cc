#include "core/expr/expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "core/common/error.h"
#include "core/common/utf8.h"
#include "core/expr/time.h"
#include "core/types/variant.h"

namespace fld {

// ---------------------------------------------------------------- construction & utilities

BoundExprPtr MakeColumn(int index, SqlType type) {
  auto e = std::make_unique<BoundExpr>();
  e->op = ExprOp::kColumn;
  e->column_index = index;
  e->type = type;
  return e;
}

BoundExprPtr MakeLiteral(Value v, SqlType type) {
  auto e = std::make_unique<BoundExpr>();
  e->op = ExprOp::kLiteral;
  e->literal = std::move(v);
  e->type = type;
  e->type.nullable = e->literal.IsNull();
  return e;
}

BoundExprPtr MakeCall(ExprOp op, SqlType type, std::vector<BoundExprPtr> args) {
  auto e = std::make_unique<BoundExpr>();
  e->op = op;
  e->type = type;
  e->args = std::move(args);
  return e;
}

std::unique_ptr<BoundExpr> BoundExpr::Clone() const {
  auto e = std::make_unique<BoundExpr>();
  e->op = op;
  e->type = type;
  e->column_index = column_index;
  e->literal = literal;
  e->has_else = has_else;
  e->function = function;
  e->external = external;
  e->lambda = lambda;
  for (const auto& a : args) e->args.push_back(a->Clone());
  return e;
}

bool BoundExpr::Equals(const BoundExpr& o) const {
  if (op != o.op || !type.SameAs(o.type) || column_index != o.column_index || has_else != o.has_else ||
      args.size() != o.args.size() || function != o.function || external != o.external)
    return false;
  if (op == ExprOp::kLiteral && !(literal == o.literal)) return false;
  if ((lambda == nullptr) != (o.lambda == nullptr) || (lambda && !lambda->Equals(*o.lambda))) return false;
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i]->Equals(*o.args[i])) return false;
  return true;
}

bool BoundExpr::IsConstant() const {
  if (op == ExprOp::kColumn || op == ExprOp::kNow) return false;
  for (const auto& a : args)
    if (!a->IsConstant()) return false;
  return true;
}

std::string BoundExpr::ToString() const {
  static const char* kNames[] = {"col",
                                 "lit",
                                 "-",
                                 "NOT",
                                 "+",
                                 "-",
                                 "*",
                                 "/",
                                 "%",
                                 "||",
                                 "=",
                                 "<>",
                                 "<",
                                 "<=",
                                 ">",
                                 ">=",
                                 "IS DISTINCT FROM",
                                 "AND",
                                 "OR",
                                 "IS NULL",
                                 "IS NOT NULL",
                                 "IS TRUE",
                                 "IS FALSE",
                                 "CASE",
                                 "CAST",
                                 "COALESCE",
                                 "ABS",
                                 "LIKE",
                                 "SAFE_CAST",
                                 "ROW",
                                 "SCALAR_SUBQUERY",
                                 "TIME",
                                 "MAP",
                                 "ITEM",
                                 "CARDINALITY",
                                 "MAP_CONTAINS_KEY",
                                 "MAP_KEYS",
                                 "MAP_VALUES",
                                 "PARSE_JSON",
                                 "TO_JSON",
                                 "TYPEOF",
                                 "CALL"};
  switch (op) {
    case ExprOp::kColumn:
      return fmt::format("${}", column_index);
    case ExprOp::kNow:
      return "NOW()";
    case ExprOp::kLiteral:
      if (literal.kind == Value::Kind::kString && (type.IsString() || type.IsBinary())) return "'" + literal.s + "'";
      return FormatValue(literal, type);
    case ExprOp::kNeg:
    case ExprOp::kNot:
      return fmt::format("({} {})", kNames[static_cast<int>(op)], args[0]->ToString());
    case ExprOp::kIsNull:
    case ExprOp::kIsNotNull:
    case ExprOp::kIsTrue:
    case ExprOp::kIsFalse:
      return fmt::format("({} {})", args[0]->ToString(), kNames[static_cast<int>(op)]);
    case ExprOp::kCast:
    case ExprOp::kSafeCast:
      return fmt::format("{}({} AS {})", op == ExprOp::kCast ? "CAST" : "SAFE_CAST", args[0]->ToString(),
                         type.WithNullable(true).ToString());
    case ExprOp::kTimeFunc:
      return TimeFuncToString(*this);
    case ExprOp::kCase:
    case ExprOp::kCoalesce:
    case ExprOp::kAbs:
    case ExprOp::kLike:
    case ExprOp::kRow:
    case ExprOp::kScalarSubquery:
    case ExprOp::kMapValue:
    case ExprOp::kItem:
    case ExprOp::kCardinality:
    case ExprOp::kMapContainsKey:
    case ExprOp::kMapKeys:
    case ExprOp::kMapValues:
    case ExprOp::kParseJson:
    case ExprOp::kToJson:
    case ExprOp::kTypeOf:
    case ExprOp::kCall: {
      std::string s = op == ExprOp::kCall ? std::string(function ? function->name : external->name) + "("
                                          : std::string(kNames[static_cast<int>(op)]) + "(";
      for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i]->ToString();
      if (lambda) s += ", $0 -> " + lambda->ToString();
      return s + ")";
    }
    default:
      return fmt::format("({} {} {})", args[0]->ToString(), kNames[static_cast<int>(op)], args[1]->ToString());
  }
}

namespace {

using ColPtr = std::shared_ptr<Column>;

ColPtr NewColumn(PhysType p, size_t n) {
  auto c = std::make_shared<Column>(p);
  switch (p) {
    case PhysType::kI64:
      c->i64.resize(n);
      break;
    case PhysType::kF64:
      c->f64.resize(n);
      break;
    case PhysType::kStr:
      c->str.resize(n);
      break;
  }
  return c;
}

ColumnPtr ConstantColumn(const Value& v, PhysType p, size_t n) {
  auto c = std::make_shared<Column>(p);
  if (v.IsNull()) {
    switch (p) {
      case PhysType::kI64:
        c->i64.assign(n, 0);
        break;
      case PhysType::kF64:
        c->f64.assign(n, 0);
        break;
      case PhysType::kStr:
        c->str.assign(n, std::string());
        break;
    }
    c->nulls.assign(n, 1);
    return c;
  }
  switch (p) {
    case PhysType::kI64:
      c->i64.assign(n, v.kind == Value::Kind::kDouble ? static_cast<int64_t>(v.d) : v.i);
      break;
    case PhysType::kF64:
      c->f64.assign(n, v.kind == Value::Kind::kInt ? static_cast<double>(v.i) : v.d);
      break;
    case PhysType::kStr:
      c->str.assign(n, v.s);
      break;
  }
  return c;
}

// nulls of the result of a strict binary operator.
void MergeNulls(const Column& a, const Column& b, size_t n, Column* out) {
  if (!a.HasNulls() && !b.HasNulls()) return;
  out->nulls.assign(n, 0);
  if (a.HasNulls())
    for (size_t i = 0; i < n; ++i) out->nulls[i] |= a.nulls[i];
  if (b.HasNulls())
    for (size_t i = 0; i < n; ++i) out->nulls[i] |= b.nulls[i];
}

[[noreturn]] void Overflow(const char* what) {
  Fail(ErrorKind::kRuntime, "integer overflow in {}", what);
}

int64_t CheckedMulDiv(__int128 v, const char* what) {
  if (v > INT64_MAX || v < INT64_MIN) Overflow(what);
  return static_cast<int64_t>(v);
}

// ---- DECIMAL arithmetic in 128 bits ----

using U128 = unsigned __int128;

// floor(a * b / d) for d > 0 through a 256-bit product; false when the quotient needs more than
// 127 bits.
bool MulDivUnsigned(U128 a, U128 b, U128 d, U128* q) {
  const uint64_t a0 = static_cast<uint64_t>(a), a1 = static_cast<uint64_t>(a >> 64);
  const uint64_t b0 = static_cast<uint64_t>(b), b1 = static_cast<uint64_t>(b >> 64);
  const U128 p00 = static_cast<U128>(a0) * b0, p01 = static_cast<U128>(a0) * b1;
  const U128 p10 = static_cast<U128>(a1) * b0, p11 = static_cast<U128>(a1) * b1;
  const U128 mid = (p00 >> 64) + static_cast<uint64_t>(p01) + static_cast<uint64_t>(p10);
  const U128 lo = (mid << 64) | static_cast<uint64_t>(p00);
  const U128 hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
  if (hi == 0) {
    *q = lo / d;
    return (*q >> 127) == 0;
  }
  if (hi >= d) return false;
  U128 r = hi, quot = 0;
  for (int i = 127; i >= 0; --i) {
    const bool carry = (r >> 127) != 0;
    r = (r << 1) | ((lo >> i) & 1);
    quot <<= 1;
    if (carry || r >= d) {
      r -= d;
      quot |= 1;
    }
  }
  *q = quot;
  return (quot >> 127) == 0;
}

// a * b / d truncated toward zero (d != 0); false on overflow.
bool MulDiv(Int128 a, Int128 b, Int128 d, Int128* out) {
  const bool neg = ((a < 0) != (b < 0)) != (d < 0);
  auto mag = [](Int128 x) { return x < 0 ? static_cast<U128>(-x) : static_cast<U128>(x); };
  U128 q;
  if (!MulDivUnsigned(mag(a), mag(b), mag(d), &q)) return false;
  *out = neg ? -static_cast<Int128>(q) : static_cast<Int128>(q);
  return true;
}

Int128 DecimalAt(const Column& c, size_t i, const SqlType& t) {
  return t.IsWideDecimal() ? DecodeInt128(c.str[i]) : static_cast<Int128>(c.i64[i]);
}

int ScaleOf(const SqlType& t);

[[noreturn]] void DecimalOverflow(const BoundExpr& e, Int128 a, Int128 b, const char* op) {
  const SqlType& ta = e.args[0]->type;
  const SqlType& tb = e.args[1]->type;
  Fail(ErrorKind::kRuntime, "DECIMAL overflow: {} {} {} does not fit {}", FormatDecimal(a, ScaleOf(ta)), op,
       FormatDecimal(b, ScaleOf(tb)), e.type.WithNullable(true).ToString());
}

// Exact numeric arithmetic with a DECIMAL result, row by row in 128 bits.
ColumnPtr EvalDecimalArith(const BoundExpr& e, const Column& x, const Column& y, size_t n) {
  const SqlType& ta = e.args[0]->type;
  const SqlType& tb = e.args[1]->type;
  const SqlType& t = e.type;
  const int sa = ScaleOf(ta), sb = ScaleOf(tb), s = t.scale;
  ColPtr out = NewColumn(t.phys(), n);
  MergeNulls(x, y, n, out.get());
  static const char* kOp[] = {"+", "-", "*", "/", "%"};
  const char* op = kOp[static_cast<int>(e.op) - static_cast<int>(ExprOp::kAdd)];
  for (size_t i = 0; i < n; ++i) {
    if (out->IsNull(i)) continue;
    const Int128 a = DecimalAt(x, i, ta), c = DecimalAt(y, i, tb);
    Int128 r = 0;
    bool ok = true;
    switch (e.op) {
      case ExprOp::kAdd:
      case ExprOp::kSub:
      case ExprOp::kMod: {
        // Align both to the larger scale.
        const int m = std::max(sa, sb);
        Int128 aa, cc;
        ok = !__builtin_mul_overflow(a, Pow10Wide(m - sa), &aa) && !__builtin_mul_overflow(c, Pow10Wide(m - sb), &cc);
        if (!ok) break;
        if (e.op == ExprOp::kAdd) {
          ok = !__builtin_add_overflow(aa, cc, &r);
        } else if (e.op == ExprOp::kSub) {
          ok = !__builtin_sub_overflow(aa, cc, &r);
        } else {
          if (cc == 0) {
            out->SetNull(i);
            continue;
          }
          r = aa % cc;
        }
        if (ok && m != s) r = m > s ? RoundDiv10(r, m - s) : r * Pow10Wide(s - m);
        break;
      }
      case ExprOp::kMul: {
        const int down = sa + sb - s;
        ok = down >= 0 ? MulDiv(a, c, Pow10Wide(down), &r) : MulDiv(a, c * Pow10Wide(-down), 1, &r);
        break;
      }
      case ExprOp::kDiv: {
        if (c == 0) {
          out->SetNull(i);
          continue;
        }
        // a / 10^sa / (c / 10^sb) * 10^s = a * 10^(s - sa + sb) / c
        const int up = s - sa + sb;
        if (up >= 0 && up <= 38) {
          ok = MulDiv(a, Pow10Wide(up), c, &r);
        } else if (up < 0 && up >= -38) {
          Int128 d;
          ok = !__builtin_mul_overflow(c, Pow10Wide(-up), &d) && MulDiv(a, 1, d, &r);
        } else {
          ok = false;
        }
        break;
      }
      default:
        break;
    }
    if (!ok || !DecimalFits(r, t.precision)) DecimalOverflow(e, a, c, op);
    if (t.IsWideDecimal())
      out->str[i] = EncodeInt128(r);
    else
      out->i64[i] = static_cast<int64_t>(r);
  }
  out->CompactNulls();
  return out;
}

ColumnPtr EvalArith(const BoundExpr& e, const Batch& b) {
  size_t n = b.size();
  ColumnPtr ac = Evaluate(*e.args[0], b), bc = Evaluate(*e.args[1], b);
  const Column& x = *ac;
  const Column& y = *bc;
  ColPtr out = NewColumn(e.type.phys(), n);
  MergeNulls(x, y, n, out.get());
  auto null_at = [&](size_t i) {
    if (out->nulls.empty()) out->nulls.assign(n, 0);
    out->nulls[i] = 1;
  };
  if (e.type.phys() == PhysType::kF64) {
    const double* a = x.f64.data();
    const double* c = y.f64.data();
    double* r = out->f64.data();
    switch (e.op) {
      case ExprOp::kAdd:
        for (size_t i = 0; i < n; ++i) r[i] = a[i] + c[i];
        break;
      case ExprOp::kSub:
        for (size_t i = 0; i < n; ++i) r[i] = a[i] - c[i];
        break;
      case ExprOp::kMul:
        for (size_t i = 0; i < n; ++i) r[i] = a[i] * c[i];
        break;
      case ExprOp::kDiv:
        for (size_t i = 0; i < n; ++i) {
          if (c[i] == 0)
            null_at(i);
          else
            r[i] = a[i] / c[i];
        }
        break;
      case ExprOp::kMod:
        for (size_t i = 0; i < n; ++i) {
          if (c[i] == 0)
            null_at(i);
          else
            r[i] = std::fmod(a[i], c[i]);
        }
        break;
      default:
        break;
    }
    out->CompactNulls();
    return out;
  }
  const bool decimal = e.type.id == TypeId::kDecimal;
  // DECIMAL: the 128-bit path, except * of narrow decimals into a narrow result.
  if (decimal && (e.op != ExprOp::kMul || e.type.IsWideDecimal() || x.phys != PhysType::kI64 ||
                  y.phys != PhysType::kI64 || e.args[0]->type.scale + e.args[1]->type.scale != e.type.scale))
    return EvalDecimalArith(e, x, y, n);
  const int64_t* a = x.i64.data();
  const int64_t* c = y.i64.data();
  int64_t* r = out->i64.data();
  switch (e.op) {
    case ExprOp::kAdd:
      for (size_t i = 0; i < n; ++i)
        if (__builtin_add_overflow(a[i], c[i], &r[i]) && !out->IsNull(i)) Overflow("+");
      break;
    case ExprOp::kSub:
      for (size_t i = 0; i < n; ++i)
        if (__builtin_sub_overflow(a[i], c[i], &r[i]) && !out->IsNull(i)) Overflow("-");
      break;
    case ExprOp::kMul:
      if (!decimal) {
        for (size_t i = 0; i < n; ++i)
          if (__builtin_mul_overflow(a[i], c[i], &r[i]) && !out->IsNull(i)) Overflow("*");
      } else {
        int shift = e.args[0]->type.scale + e.args[1]->type.scale - e.type.scale;
        int64_t div = Pow10(shift);
        for (size_t i = 0; i < n; ++i)
          if (!out->IsNull(i)) r[i] = CheckedMulDiv(static_cast<__int128>(a[i]) * c[i] / div, "*");
      }
      break;
    case ExprOp::kDiv:
      if (!decimal) {
        for (size_t i = 0; i < n; ++i) {
          if (c[i] == 0)
            null_at(i);
          else if (a[i] == INT64_MIN && c[i] == -1) {
            if (!out->IsNull(i)) Overflow("/");
          } else
            r[i] = a[i] / c[i];
        }
      } else {
        // result scale rs: a/10^sa / (c/10^sc) * 10^rs = a * 10^(rs - sa + sc) / c
        int up = e.type.scale - e.args[0]->type.scale + e.args[1]->type.scale;
        for (size_t i = 0; i < n; ++i) {
          if (c[i] == 0) {
            null_at(i);
            continue;
          }
          if (out->IsNull(i)) continue;
          __int128 num = a[i];
          if (up >= 0)
            num *= Pow10(up);
          else
            num /= Pow10(-up);
          r[i] = CheckedMulDiv(num / c[i], "/");
        }
      }
      break;
    case ExprOp::kMod:
      for (size_t i = 0; i < n; ++i) {
        if (c[i] == 0)
          null_at(i);
        else if (c[i] == -1)
          r[i] = 0;
        else
          r[i] = a[i] % c[i];
      }
      break;
    default:
      break;
  }
  out->CompactNulls();
  return out;
}

template <typename T, typename Cmp>
void CompareLoop(const T* a, const T* c, int64_t* r, size_t n, Cmp cmp) {
  for (size_t i = 0; i < n; ++i) r[i] = cmp(a[i], c[i]);
}

template <typename T>
void CompareTyped(ExprOp op, const T* a, const T* c, int64_t* r, size_t n) {
  switch (op) {
    case ExprOp::kEq:
      CompareLoop(a, c, r, n, [](const T& p, const T& q) { return p == q; });
      break;
    case ExprOp::kNe:
      CompareLoop(a, c, r, n, [](const T& p, const T& q) { return p != q; });
      break;
    case ExprOp::kLt:
      CompareLoop(a, c, r, n, [](const T& p, const T& q) { return p < q; });
      break;
    case ExprOp::kLe:
      CompareLoop(a, c, r, n, [](const T& p, const T& q) { return p <= q; });
      break;
    case ExprOp::kGt:
      CompareLoop(a, c, r, n, [](const T& p, const T& q) { return p > q; });
      break;
    case ExprOp::kGe:
      CompareLoop(a, c, r, n, [](const T& p, const T& q) { return p >= q; });
      break;
    default:
      break;
  }
}

int ScaleOf(const SqlType& t) {
  return t.id == TypeId::kDecimal ? t.scale : 0;
}

ColumnPtr EvalCompare(const BoundExpr& e, const Batch& b) {
  size_t n = b.size();
  ColumnPtr ac = Evaluate(*e.args[0], b), bc = Evaluate(*e.args[1], b);
  ColPtr out = NewColumn(PhysType::kI64, n);
  MergeNulls(*ac, *bc, n, out.get());
  const int sa = ScaleOf(e.args[0]->type), sb = ScaleOf(e.args[1]->type);
  const SqlType& ta = e.args[0]->type;
  const SqlType& tb = e.args[1]->type;
  if ((ta.IsWideDecimal() || tb.IsWideDecimal()) && ta.IsExactNumeric() && tb.IsExactNumeric()) {
    // A 38-digit DECIMAL against any exact numeric: align in 128 bits; a value that does not
    // align is beyond any value of the other side.
    const int s = std::max(sa, sb);
    std::vector<int> r(n);
    for (size_t i = 0; i < n; ++i) {
      if (out->IsNull(i)) continue;
      Int128 x = DecimalAt(*ac, i, ta), y = DecimalAt(*bc, i, tb), xs, ys;
      const bool xo = __builtin_mul_overflow(x, Pow10Wide(s - sa), &xs);
      const bool yo = __builtin_mul_overflow(y, Pow10Wide(s - sb), &ys);
      if (xo)
        r[i] = x < 0 ? -1 : 1;
      else if (yo)
        r[i] = y < 0 ? 1 : -1;
      else
        r[i] = xs < ys ? -1 : xs > ys ? 1 : 0;
    }
    const int zero = 0;
    CompareTyped(e.op, r.data(), std::vector<int>(n, zero).data(), out->i64.data(), n);
    return out;
  }
  if (ac->phys == PhysType::kI64 && sa != sb) {
    // Exact numerics of different scales (the binder leaves them uncast): align in 128 bits.
    const int s = std::max(sa, sb);
    const __int128 fa = Pow10(s - sa), fb = Pow10(s - sb);
    std::vector<__int128> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = ac->i64[i] * fa;
      y[i] = bc->i64[i] * fb;
    }
    CompareTyped(e.op, x.data(), y.data(), out->i64.data(), n);
    return out;
  }
  switch (ac->phys) {
    case PhysType::kI64:
      CompareTyped(e.op, ac->i64.data(), bc->i64.data(), out->i64.data(), n);
      break;
    case PhysType::kF64:
      CompareTyped(e.op, ac->f64.data(), bc->f64.data(), out->i64.data(), n);
      break;
    case PhysType::kStr:
      CompareTyped(e.op, ac->str.data(), bc->str.data(), out->i64.data(), n);
      break;
  }
  return out;
}

bool SameValue(const Column& a, const Column& b, size_t i) {
  bool an = a.IsNull(i), bn = b.IsNull(i);
  if (an || bn) return an && bn;
  switch (a.phys) {
    case PhysType::kI64:
      return a.i64[i] == b.i64[i];
    case PhysType::kF64:
      return a.f64[i] == b.f64[i];
    case PhysType::kStr:
      return a.str[i] == b.str[i];
  }
  return false;
}

ColumnPtr EvalLogic(const BoundExpr& e, const Batch& b) {
  size_t n = b.size();
  ColumnPtr ac = Evaluate(*e.args[0], b), bc = Evaluate(*e.args[1], b);
  ColPtr out = NewColumn(PhysType::kI64, n);
  const bool is_and = e.op == ExprOp::kAnd;
  if (!ac->HasNulls() && !bc->HasNulls()) {
    for (size_t i = 0; i < n; ++i) out->i64[i] = is_and ? (ac->i64[i] && bc->i64[i]) : (ac->i64[i] || bc->i64[i]);
    return out;
  }
  out->nulls.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    bool an = ac->IsNull(i), bn = bc->IsNull(i);
    bool av = !an && ac->i64[i], bv = !bn && bc->i64[i];
    if (is_and) {
      if ((!an && !av) || (!bn && !bv))
        out->i64[i] = 0;
      else if (an || bn)
        out->nulls[i] = 1;
      else
        out->i64[i] = 1;
    } else {
      if (av || bv)
        out->i64[i] = 1;
      else if (an || bn)
        out->nulls[i] = 1;
      else
        out->i64[i] = 0;
    }
  }
  out->CompactNulls();
  return out;
}

// SQL LIKE: '%' any sequence, '_' any one character, `esc` makes the next character literal.
// Characters are UTF-8: '_' matches a whole multi-byte character, and a '%' never ends in the
// middle of one.
bool LikeMatch(std::string_view s, std::string_view p, int esc) {
  size_t si = 0, pi = 0, star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size()) {
      char pc = p[pi];
      if (esc >= 0 && pc == static_cast<char>(esc) && pi + 1 < p.size()) {
        if (s[si] == p[pi + 1]) {
          si++;
          pi += 2;
          continue;
        }
      } else if (pc == '%') {
        star_p = pi++;
        star_s = si;
        continue;
      } else if (pc == '_') {
        si += CharLen(s, si);
        pi++;
        continue;
      } else if (pc == s[si]) {
        si++;
        pi++;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p + 1;
    star_s += CharLen(s, star_s);
    si = star_s;
  }
  while (pi < p.size() && p[pi] == '%') pi++;
  return pi == p.size();
}

ColumnPtr CastColumn(const Column& in, const SqlType& from, const SqlType& to, size_t n) {
  PhysType fp = in.phys, tp = to.phys();
  // Fast paths that need no per-row checks.
  if (fp == tp && fp == PhysType::kStr && to.length < 0 && (to.IsBinary() || !from.IsBinary()) &&
      (from.IsString() || from.IsBinary()) && (to.IsString() || to.IsBinary()))
    return std::make_shared<Column>(in);
  if (fp == PhysType::kI64 && tp == PhysType::kF64 && from.id != TypeId::kDecimal) {
    ColPtr out = NewColumn(tp, n);
    for (size_t i = 0; i < n; ++i) out->f64[i] = static_cast<double>(in.i64[i]);
    out->nulls = in.nulls;
    return out;
  }
  if (fp == PhysType::kI64 && tp == PhysType::kI64 && from.IsInteger() && to.id == TypeId::kBigInt) {
    return std::make_shared<Column>(in);
  }
  // Fast paths with per-row checks: a row they do not take the common way (out of range, text
  // that is not plain digits) goes through CastValue, which gives its result or its error.
  auto one = [&](size_t i) { return CastValue(in.Get(i), from, to); };
  if (fp == PhysType::kI64 && tp == PhysType::kStr && from.IsInteger() && to.IsString() && to.length < 0) {
    // Integers to strings without a length: their decimal digits (FormatValue's).
    ColPtr out = NewColumn(tp, n);
    out->nulls = in.nulls;
    char buf[24];
    for (size_t i = 0; i < n; ++i)
      if (!in.IsNull(i)) out->str[i].assign(buf, std::to_chars(buf, buf + sizeof buf, in.i64[i]).ptr);
    return out;
  }
  if (tp == PhysType::kI64 && to.IsInteger() &&
      ((fp == PhysType::kF64 && from.IsFloat()) || (fp == PhysType::kStr && from.IsString()))) {
    // Doubles (truncated) and texts of plain digits to integers in the target's range.
    const int64_t lo = to.id == TypeId::kTinyInt    ? -128
                       : to.id == TypeId::kSmallInt ? -32768
                       : to.id == TypeId::kInteger  ? INT32_MIN
                                                    : INT64_MIN;
    const int64_t hi = to.id == TypeId::kTinyInt    ? 127
                       : to.id == TypeId::kSmallInt ? 32767
                       : to.id == TypeId::kInteger  ? INT32_MAX
                                                    : INT64_MAX;
    ColPtr out = NewColumn(tp, n);
    out->nulls = in.nulls;
    for (size_t i = 0; i < n; ++i) {
      if (in.IsNull(i)) continue;
      int64_t x = 0;
      bool plain;
      if (fp == PhysType::kF64) {
        const double d = in.f64[i];
        plain = d > -9.2233720368547758e18 && d < 9.2233720368547758e18;  // (false for NaN)
        if (plain) x = static_cast<int64_t>(std::trunc(d));
      } else {
        const std::string& t = in.str[i];
        const auto r = std::from_chars(t.data(), t.data() + t.size(), x);
        plain = r.ec == std::errc() && r.ptr == t.data() + t.size() && !t.empty();
      }
      if (plain && x >= lo && x <= hi) {
        out->i64[i] = x;
        continue;
      }
      const Value v = one(i);
      if (v.IsNull())
        out->SetNull(i);
      else
        out->i64[i] = v.i;
    }
    return out;
  }
  auto out = std::make_shared<Column>(tp);
  out->Reserve(n);
  for (size_t i = 0; i < n; ++i) out->Append(one(i));
  out->CompactNulls();
  return out;
}

}  // namespace

Value CastValue(const Value& v, const SqlType& from, const SqlType& to) {
  if (v.IsNull()) return v;
  if (from.SameAs(to)) return v;
  if (from.IsInterval() || to.IsInterval()) {
    if (to.IsString()) return Value::String(FormatValue(v, from));
    return CastInterval(v, from, to);
  }
  auto bad = [&]() -> Value {
    Fail(ErrorKind::kRuntime, "cannot cast {} '{}' to {}", from.WithNullable(true).ToString(), FormatValue(v, from),
         to.WithNullable(true).ToString());
  };
  auto range_check = [&](int64_t x) -> Value {
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (to.id == TypeId::kTinyInt) lo = -128, hi = 127;
    if (to.id == TypeId::kSmallInt) lo = -32768, hi = 32767;
    if (to.id == TypeId::kInteger) lo = INT32_MIN, hi = INT32_MAX;
    if (x < lo || x > hi) bad();
    return Value::Int(x);
  };
  if (to.id == TypeId::kVariant) return Value::String(VariantFromValue(v, from));
  if (from.id == TypeId::kVariant) {
    // A VARIANT converts when its runtime type does; else the CAST is NULL (as Feldera).
    Value out;
    if (!VariantToValue(v.s, to.WithNullable(true), &out)) return Value::Null();
    return out;
  }
  if (to.id == TypeId::kMap || from.id == TypeId::kMap) {
    if (to.id != TypeId::kMap || from.id != TypeId::kMap) {
      if (to.IsString()) return Value::String(FormatValue(v, from));
      bad();
    }
    std::vector<std::pair<Value, Value>> entries;
    for (auto& [k, val] : DecodeMapValue(v.s, from))
      entries.emplace_back(CastValue(k, (*from.fields)[0], (*to.fields)[0]),
                           CastValue(val, (*from.fields)[1], (*to.fields)[1]));
    return Value::String(EncodeMapValue(std::move(entries), to));
  }
  if (to.id == TypeId::kArray && from.id == TypeId::kArray) {  // element by element
    const SqlType &fe = (*from.fields)[0], &te = (*to.fields)[0];
    std::vector<Value> e = DecodeArrayValue(v.s, fe);
    for (Value& x : e) x = CastValue(x, fe, te);
    return Value::String(EncodeArrayValue(e, te));
  }
  if (to.id == TypeId::kArray || from.id == TypeId::kArray || to.id == TypeId::kRow || from.id == TypeId::kRow) {
    if (to.id == TypeId::kRow && from.id == TypeId::kRow && to.fields->size() == from.fields->size()) {
      std::vector<Value> f = DecodeRowValue(v.s, *from.fields);
      for (size_t i = 0; i < f.size(); ++i) f[i] = CastValue(f[i], (*from.fields)[i], (*to.fields)[i]);
      return Value::String(EncodeRowValue(f, *to.fields));
    }
    if (!to.IsString()) bad();
  }
  if (to.id == TypeId::kUuid) {
    // From its text (a malformed one is an error) or from exactly 16 bytes (as Feldera).
    if (from.IsBinary()) {
      if (v.s.size() != 16) bad();
      return v;
    }
    if (!from.IsString()) bad();
    Value out;
    if (!ParseValue(v.s, to, &out)) bad();
    return out;
  }
  if (from.id == TypeId::kUuid && !to.IsString() && !to.IsBinary()) bad();
  if (to.IsBinary()) {
    // From a string: its bytes; from a UUID its 16 bytes; BINARY(n)/VARBINARY(n) keep at most n.
    if (!from.IsBinary() && !from.IsString() && from.id != TypeId::kUuid) bad();
    std::string s = v.s;
    if (to.length >= 0 && s.size() > static_cast<size_t>(to.length)) s.resize(to.length);
    return Value::String(std::move(s));
  }
  if (from.IsBinary()) {
    if (!to.IsString()) bad();
  }
  if (to.IsString()) {
    std::string s = FormatValue(v, from);
    if (to.length >= 0 && s.size() > static_cast<size_t>(to.length)) s.resize(to.length);
    return Value::String(std::move(s));
  }
  if (from.IsString()) {
    Value out;
    if (ParseValue(v.s, to, &out)) return out;
    if (to.IsExactNumeric() || to.IsFloat()) {  // '1.5' as INT: go through DOUBLE
      Value d;
      if (ParseValue(v.s, SqlType::Of(TypeId::kDouble), &d)) return CastValue(d, SqlType::Of(TypeId::kDouble), to);
    }
    return bad();
  }
  double as_double = 0;
  if (from.id == TypeId::kDecimal)
    as_double = static_cast<double>(UnscaledDecimal(v, from)) / static_cast<double>(Pow10Wide(from.scale));
  else if (from.IsFloat())
    as_double = v.d;
  else
    as_double = static_cast<double>(v.i);
  switch (to.id) {
    case TypeId::kBoolean:
      if (from.IsFloat()) return Value::Int(v.d != 0);
      return Value::Int(v.i != 0);
    case TypeId::kTinyInt:
    case TypeId::kSmallInt:
    case TypeId::kInteger:
    case TypeId::kBigInt:
      if (from.IsFloat()) {
        if (std::isnan(v.d) || v.d >= 9.2233720368547758e18 || v.d < -9.2233720368547758e18) bad();
        return range_check(static_cast<int64_t>(std::trunc(v.d)));
      }
      if (from.id == TypeId::kDecimal) {
        const Int128 x = UnscaledDecimal(v, from) / Pow10Wide(from.scale);  // truncates
        if (x > INT64_MAX || x < INT64_MIN) bad();
        return range_check(static_cast<int64_t>(x));
      }
      if (from.IsTemporal()) bad();
      return range_check(v.i);
    case TypeId::kDecimal: {
      // Exact: integers scale up; decimals rescale, rounding half away from zero (as Feldera).
      Int128 x;
      if (from.IsFloat()) {
        double scaled = std::round(v.d * std::pow(10.0, to.scale));
        if (std::isnan(scaled) || std::fabs(scaled) >= 1e38) bad();
        x = static_cast<Int128>(scaled);
      } else if (from.id == TypeId::kDecimal) {
        x = UnscaledDecimal(v, from);
        if (to.scale >= from.scale) {
          if (__builtin_mul_overflow(x, Pow10Wide(to.scale - from.scale), &x)) bad();
        } else {
          x = RoundDiv10(x, from.scale - to.scale);
        }
      } else if (from.IsTemporal()) {
        return bad();
      } else if (__builtin_mul_overflow(static_cast<Int128>(v.i), Pow10Wide(to.scale), &x)) {
        bad();
      }
      if (!DecimalFits(x, to.precision > 0 ? to.precision : kMaxDecimalPrecision)) bad();
      if (!to.IsWideDecimal() && (x > INT64_MAX || x < INT64_MIN)) bad();
      return DecimalValue(x, to);
    }
    case TypeId::kReal:
      if (from.IsTemporal()) bad();
      return Value::Double(static_cast<double>(static_cast<float>(as_double)));
    case TypeId::kDouble:
      if (from.IsTemporal()) bad();
      return Value::Double(as_double);
    case TypeId::kDate:
      if (from.id == TypeId::kTimestamp) {
        int64_t d = v.i >= 0 ? v.i / kMicrosPerDay : -((-v.i + kMicrosPerDay - 1) / kMicrosPerDay);
        return Value::Int(d);
      }
      return bad();
    case TypeId::kTimestamp:
      if (from.id == TypeId::kDate) return Value::Int(v.i * kMicrosPerDay);
      return bad();
    case TypeId::kTime:
      if (from.id == TypeId::kTimestamp) return Value::Int(((v.i % kMicrosPerDay) + kMicrosPerDay) % kMicrosPerDay);
      return bad();
    default:
      return bad();
  }
}

namespace {

// ---- CASE and COALESCE ----
// SQL evaluates a CASE branch (a COALESCE argument) only for the rows that reach it. The eager
// versions evaluate everything over the whole batch, which gives the same result unless some
// branch raises an error for a row that does not take it; the lazy versions narrow the batch
// branch by branch so that such rows never reach it.

ColumnPtr EvalCaseEager(const BoundExpr& e, const Batch& b) {
  const size_t n = b.size();
  size_t pairs = (e.args.size() - (e.has_else ? 1 : 0)) / 2;
  std::vector<ColumnPtr> conds, vals;
  for (size_t p = 0; p < pairs; ++p) {
    conds.push_back(Evaluate(*e.args[2 * p], b));
    vals.push_back(Evaluate(*e.args[2 * p + 1], b));
  }
  ColumnPtr els = e.has_else ? Evaluate(*e.args.back(), b) : nullptr;
  auto out = std::make_shared<Column>(e.type.phys());
  out->Reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Column* pick = els.get();
    for (size_t p = 0; p < pairs; ++p)
      if (!conds[p]->IsNull(i) && conds[p]->i64[i]) {
        pick = vals[p].get();
        break;
      }
    if (pick)
      out->AppendFrom(*pick, i);
    else
      out->AppendNull();
  }
  out->CompactNulls();
  return out;
}

ColumnPtr EvalCoalesceEager(const BoundExpr& e, const Batch& b) {
  const size_t n = b.size();
  std::vector<ColumnPtr> cols;
  for (const auto& a : e.args) cols.push_back(Evaluate(*a, b));
  auto out = std::make_shared<Column>(e.type.phys());
  out->Reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Column* pick = nullptr;
    for (const auto& c : cols)
      if (!c->IsNull(i)) {
        pick = c.get();
        break;
      }
    if (pick)
      out->AppendFrom(*pick, i);
    else
      out->AppendNull();
  }
  out->CompactNulls();
  return out;
}

void MarkColumns(const BoundExpr& e, std::vector<bool>* used) {
  if (e.op == ExprOp::kColumn && e.column_index >= 0 && static_cast<size_t>(e.column_index) < used->size())
    (*used)[e.column_index] = true;
  for (const auto& a : e.args) MarkColumns(*a, used);
}

ColumnPtr GatherColumn(const Column& src, const std::vector<uint32_t>& sel) {
  auto col = std::make_shared<Column>(src.phys);
  switch (src.phys) {
    case PhysType::kI64:
      col->i64.resize(sel.size());
      for (size_t k = 0; k < sel.size(); ++k) col->i64[k] = src.i64[sel[k]];
      break;
    case PhysType::kF64:
      col->f64.resize(sel.size());
      for (size_t k = 0; k < sel.size(); ++k) col->f64[k] = src.f64[sel[k]];
      break;
    case PhysType::kStr:
      col->str.resize(sel.size());
      for (size_t k = 0; k < sel.size(); ++k) col->str[k] = src.str[sel[k]];
      break;
  }
  if (src.HasNulls()) {
    col->nulls.resize(sel.size());
    for (size_t k = 0; k < sel.size(); ++k) col->nulls[k] = src.nulls[sel[k]];
    col->CompactNulls();
  }
  return col;
}

// The rows `sel` of b, holding only the columns marked in `used` (the expression reads no other).
Batch Narrow(const Batch& b, const std::vector<bool>& used, const std::vector<uint32_t>& sel) {
  Batch out;
  out.cols.resize(b.width());
  for (size_t c = 0; c < b.width(); ++c)
    if (used[c]) out.cols[c] = GatherColumn(*b.cols[c], sel);
  out.weights.assign(sel.size(), 1);
  return out;
}

// Evaluates the steps of a CASE (its WHEN conditions, then ELSE) or a COALESCE (its arguments)
// in order, each over the rows no earlier step settled. step.Eval(k, rows) evaluates step k's
// test; step.Settles(k, column, i) says whether it settles row i; step.Value(k, test, rows,
// taken) is the value of the rows `taken` (indices into rows). Rows no step settles are NULL.
template <typename Step>
ColumnPtr EvalNarrowing(const BoundExpr& e, const Batch& b, size_t nsteps, const Step& step) {
  const size_t n = b.size();
  std::vector<bool> used(b.width(), false);
  MarkColumns(e, &used);
  std::vector<ColumnPtr> parts;
  std::vector<int> part(n, -1);
  std::vector<uint32_t> pos(n, 0);
  std::vector<uint32_t> rest(n);  // rows of b not settled yet, in the order of `cur`
  for (size_t i = 0; i < n; ++i) rest[i] = static_cast<uint32_t>(i);
  Batch cur = b;
  for (size_t k = 0; k < nsteps && !rest.empty(); ++k) {
    ColumnPtr test = step.Eval(k, cur);
    std::vector<uint32_t> take, keep;
    for (size_t i = 0; i < rest.size(); ++i)
      (step.Settles(k, *test, i) ? take : keep).push_back(static_cast<uint32_t>(i));
    if (!take.empty()) {
      parts.push_back(take.size() == cur.size() ? step.Value(k, test, cur, nullptr)
                                                : step.Value(k, test, Narrow(cur, used, take), &take));
      for (size_t t = 0; t < take.size(); ++t) {
        part[rest[take[t]]] = static_cast<int>(parts.size() - 1);
        pos[rest[take[t]]] = static_cast<uint32_t>(t);
      }
    }
    if (keep.size() == rest.size()) continue;
    cur = Narrow(cur, used, keep);
    std::vector<uint32_t> next;
    next.reserve(keep.size());
    for (uint32_t i : keep) next.push_back(rest[i]);
    rest = std::move(next);
  }
  auto out = std::make_shared<Column>(e.type.phys());
  out->Reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (part[i] < 0)
      out->AppendNull();
    else
      out->AppendFrom(*parts[part[i]], pos[i]);
  }
  out->CompactNulls();
  return out;
}

ColumnPtr EvalCaseLazy(const BoundExpr& e, const Batch& b) {
  struct Step {
    const BoundExpr& e;
    size_t pairs;  // steps 0..pairs-1 test the WHEN conditions; step `pairs` is the ELSE
    ColumnPtr Eval(size_t k, const Batch& rows) const {
      return k < pairs ? Evaluate(*e.args[2 * k], rows) : Evaluate(*e.args.back(), rows);
    }
    bool Settles(size_t k, const Column& test, size_t i) const {
      return k >= pairs || (!test.IsNull(i) && test.i64[i] != 0);
    }
    // `rows` holds just the settled rows when `taken` is set, else all rows of the step.
    ColumnPtr Value(size_t k, const ColumnPtr& test, const Batch& rows, const std::vector<uint32_t>*) const {
      return k < pairs ? Evaluate(*e.args[2 * k + 1], rows) : test;
    }
  };
  const size_t pairs = (e.args.size() - (e.has_else ? 1 : 0)) / 2;
  return EvalNarrowing(e, b, pairs + (e.has_else ? 1 : 0), Step{e, pairs});
}

ColumnPtr EvalCoalesceLazy(const BoundExpr& e, const Batch& b) {
  struct Step {
    const BoundExpr& e;
    ColumnPtr Eval(size_t k, const Batch& rows) const { return Evaluate(*e.args[k], rows); }
    bool Settles(size_t, const Column& test, size_t i) const { return !test.IsNull(i); }
    ColumnPtr Value(size_t, const ColumnPtr& test, const Batch&, const std::vector<uint32_t>* taken) const {
      return taken ? GatherColumn(*test, *taken) : test;
    }
  };
  return EvalNarrowing(e, b, e.args.size(), Step{e});
}

// MAP, VARIANT and JSON functions, row by row on Values. Strict: a NULL argument gives NULL
// (MAP[...] excepted: its values may be NULL).
ColumnPtr EvalCollection(const BoundExpr& e, const Batch& b) {
  const size_t n = b.size();
  std::vector<ColumnPtr> cols;
  for (const auto& a : e.args) cols.push_back(Evaluate(*a, b));
  auto out = std::make_shared<Column>(e.type.phys());
  out->Reserve(n);
  const SqlType& t0 = e.args[0]->type;
  for (size_t i = 0; i < n; ++i) {
    if (e.op == ExprOp::kMapValue) {
      std::vector<std::pair<Value, Value>> entries;
      for (size_t k = 0; k + 1 < cols.size(); k += 2) {
        Value key = cols[k]->Get(i);
        if (key.IsNull()) Fail(ErrorKind::kRuntime, "a MAP key is NULL");
        entries.emplace_back(std::move(key), cols[k + 1]->Get(i));
      }
      out->Append(Value::String(EncodeMapValue(std::move(entries), e.type)));
      continue;
    }
    bool null = false;
    for (const auto& c : cols) null = null || c->IsNull(i);
    if (null) {
      out->AppendNull();
      continue;
    }
    const Value a = cols[0]->Get(i);
    switch (e.op) {
      case ExprOp::kItem: {
        const Value key = cols[1]->Get(i);
        const SqlType& kt = e.args[1]->type;
        if (t0.id == TypeId::kVariant) {
          std::optional<std::string> v = VariantIndex(a.s, key, kt);
          if (v)
            out->Append(Value::String(std::move(*v)));
          else
            out->AppendNull();
        } else if (t0.id == TypeId::kArray) {
          std::vector<Value> el = DecodeArrayValue(a.s, (*t0.fields)[0]);
          if (key.i >= 1 && static_cast<uint64_t>(key.i) <= el.size())
            out->Append(el[key.i - 1]);
          else
            out->AppendNull();
        } else {
          bool found = false;
          for (auto& [k, v] : DecodeMapValue(a.s, t0))
            if (k == key) {
              out->Append(v);
              found = true;
              break;
            }
          if (!found) out->AppendNull();
        }
        break;
      }
      case ExprOp::kCardinality:
        out->Append(Value::Int(static_cast<int64_t>(
            t0.id == TypeId::kArray ? DecodeArrayValue(a.s, (*t0.fields)[0]).size() : DecodeMapValue(a.s, t0).size())));
        break;
      case ExprOp::kMapContainsKey: {
        const Value key = cols[1]->Get(i);
        bool found = false;
        for (auto& [k, v] : DecodeMapValue(a.s, t0)) found = found || k == key;
        out->Append(Value::Int(found));
        break;
      }
      case ExprOp::kMapKeys:
      case ExprOp::kMapValues: {
        std::vector<Value> el;
        for (auto& [k, v] : DecodeMapValue(a.s, t0)) el.push_back(e.op == ExprOp::kMapKeys ? k : v);
        out->Append(Value::String(EncodeArrayValue(el, (*e.type.fields)[0])));
        break;
      }
      case ExprOp::kParseJson: {
        std::string v;
        if (ParseJsonVariant(a.s, &v))
          out->Append(Value::String(std::move(v)));
        else
          out->AppendNull();
        break;
      }
      case ExprOp::kToJson: {
        std::optional<std::string> j = VariantJson(a.s);
        if (j)
          out->Append(Value::String(std::move(*j)));
        else
          out->AppendNull();
        break;
      }
      case ExprOp::kTypeOf:
        out->Append(Value::String(VariantTypeName(a.s)));
        break;
      default:
        out->AppendNull();
        break;
    }
  }
  out->CompactNulls();
  return out;
}

// A function call, row by row: the arguments of each row as Values, NULL for a strict
// function's row with a NULL argument.
ColumnPtr EvalCall(const BoundExpr& e, const Batch& b) {
  const size_t n = b.size();
  std::vector<ColumnPtr> cols;
  cols.reserve(e.args.size());
  for (const auto& a : e.args) cols.push_back(Evaluate(*a, b));
  const bool strict = e.function ? e.function->strict : false;  // an external one sees NULLs
  if (e.external && !e.external->impl)
    Fail(ErrorKind::kRuntime, "function {} has no implementation (declared without a body; see the spec's udf key)",
         e.external->name);
  auto out = std::make_shared<Column>(e.type.phys());
  out->Reserve(n);
  std::vector<Value> args(cols.size());
  for (size_t i = 0; i < n; ++i) {
    bool has_null = false;
    for (size_t k = 0; k < cols.size(); ++k) {
      args[k] = cols[k]->Get(i);
      has_null = has_null || args[k].IsNull();
    }
    if (strict && has_null) {
      out->AppendNull();
      continue;
    }
    Value v = e.function ? e.function->eval(args, e) : e.external->impl(args);
    if (v.IsNull())
      out->AppendNull();
    else
      out->Append(v);
  }
  out->CompactNulls();
  return out;
}

}  // namespace

ColumnPtr Evaluate(const BoundExpr& e, const Batch& b) {
  const size_t n = b.size();
  switch (e.op) {
    case ExprOp::kColumn:
      return b.cols[e.column_index];
    case ExprOp::kLiteral:
      return ConstantColumn(e.literal, e.type.phys(), n);
    case ExprOp::kNeg: {
      ColumnPtr a = Evaluate(*e.args[0], b);
      ColPtr out = NewColumn(a->phys, n);
      out->nulls = a->nulls;
      if (e.type.IsWideDecimal()) {
        for (size_t i = 0; i < n; ++i)
          if (!a->IsNull(i)) out->str[i] = EncodeInt128(-DecodeInt128(a->str[i]));
      } else if (a->phys == PhysType::kF64) {
        for (size_t i = 0; i < n; ++i) out->f64[i] = -a->f64[i];
      } else {
        for (size_t i = 0; i < n; ++i) {
          if (a->i64[i] == INT64_MIN && !a->IsNull(i)) Overflow("unary -");
          out->i64[i] = -a->i64[i];
        }
      }
      return out;
    }
    case ExprOp::kNot: {
      ColumnPtr a = Evaluate(*e.args[0], b);
      ColPtr out = NewColumn(PhysType::kI64, n);
      out->nulls = a->nulls;
      for (size_t i = 0; i < n; ++i) out->i64[i] = !a->i64[i];
      return out;
    }
    case ExprOp::kAdd:
    case ExprOp::kSub:
    case ExprOp::kMul:
    case ExprOp::kDiv:
    case ExprOp::kMod:
      return EvalArith(e, b);
    case ExprOp::kConcat: {
      ColumnPtr a = Evaluate(*e.args[0], b), c = Evaluate(*e.args[1], b);
      ColPtr out = NewColumn(PhysType::kStr, n);
      MergeNulls(*a, *c, n, out.get());
      for (size_t i = 0; i < n; ++i)
        if (!out->IsNull(i)) out->str[i] = a->str[i] + c->str[i];
      return out;
    }
    case ExprOp::kEq:
    case ExprOp::kNe:
    case ExprOp::kLt:
    case ExprOp::kLe:
    case ExprOp::kGt:
    case ExprOp::kGe:
      return EvalCompare(e, b);
    case ExprOp::kIsDistinct: {
      ColumnPtr a = Evaluate(*e.args[0], b), c = Evaluate(*e.args[1], b);
      ColPtr out = NewColumn(PhysType::kI64, n);
      for (size_t i = 0; i < n; ++i) out->i64[i] = !SameValue(*a, *c, i);
      return out;
    }
    case ExprOp::kAnd:
    case ExprOp::kOr:
      return EvalLogic(e, b);
    case ExprOp::kIsNull:
    case ExprOp::kIsNotNull: {
      ColumnPtr a = Evaluate(*e.args[0], b);
      ColPtr out = NewColumn(PhysType::kI64, n);
      bool want_null = e.op == ExprOp::kIsNull;
      for (size_t i = 0; i < n; ++i) out->i64[i] = a->IsNull(i) == want_null;
      return out;
    }
    case ExprOp::kIsTrue:
    case ExprOp::kIsFalse: {
      ColumnPtr a = Evaluate(*e.args[0], b);
      ColPtr out = NewColumn(PhysType::kI64, n);
      int64_t want = e.op == ExprOp::kIsTrue ? 1 : 0;
      for (size_t i = 0; i < n; ++i) out->i64[i] = !a->IsNull(i) && (a->i64[i] != 0) == (want != 0);
      return out;
    }
    case ExprOp::kCase:
      // Every branch over every row is the fast path. A branch may fail (overflow, a bad
      // CAST) for rows that do not take it: then evaluate each branch only on its rows.
      try {
        return EvalCaseEager(e, b);
      } catch (const Error&) {
        return EvalCaseLazy(e, b);
      }
    case ExprOp::kCast: {
      ColumnPtr a = Evaluate(*e.args[0], b);
      return CastColumn(*a, e.args[0]->type, e.type, n);
    }
    case ExprOp::kRow: {
      std::vector<ColumnPtr> cols;
      for (const auto& a : e.args) cols.push_back(Evaluate(*a, b));
      ColPtr out = NewColumn(PhysType::kStr, n);
      std::vector<Value> fields(cols.size());
      for (size_t i = 0; i < n; ++i) {
        for (size_t k = 0; k < cols.size(); ++k) fields[k] = cols[k]->Get(i);
        out->str[i] = EncodeRowValue(fields, *e.type.fields);
      }
      return out;
    }
    case ExprOp::kSafeCast: {
      ColumnPtr a = Evaluate(*e.args[0], b);
      auto out = std::make_shared<Column>(e.type.phys());
      out->Reserve(n);
      for (size_t i = 0; i < n; ++i) {
        try {
          out->Append(CastValue(a->Get(i), e.args[0]->type, e.type));
        } catch (const Error&) {
          out->AppendNull();
        }
      }
      out->CompactNulls();
      return out;
    }
    case ExprOp::kCoalesce:
      try {
        return EvalCoalesceEager(e, b);
      } catch (const Error&) {
        return EvalCoalesceLazy(e, b);
      }
    case ExprOp::kAbs: {
      ColumnPtr a = Evaluate(*e.args[0], b);
      ColPtr out = NewColumn(a->phys, n);
      out->nulls = a->nulls;
      if (e.type.IsWideDecimal()) {
        for (size_t i = 0; i < n; ++i) {
          if (a->IsNull(i)) continue;
          Int128 x = DecodeInt128(a->str[i]);
          out->str[i] = EncodeInt128(x < 0 ? -x : x);
        }
      } else if (a->phys == PhysType::kF64) {
        for (size_t i = 0; i < n; ++i) out->f64[i] = std::fabs(a->f64[i]);
      } else {
        for (size_t i = 0; i < n; ++i) {
          if (a->i64[i] == INT64_MIN && !a->IsNull(i)) Overflow("ABS");
          out->i64[i] = a->i64[i] < 0 ? -a->i64[i] : a->i64[i];
        }
      }
      return out;
    }
    case ExprOp::kLike: {
      ColumnPtr s = Evaluate(*e.args[0], b), p = Evaluate(*e.args[1], b);
      ColumnPtr esc = e.args.size() > 2 ? Evaluate(*e.args[2], b) : nullptr;
      ColPtr out = NewColumn(PhysType::kI64, n);
      MergeNulls(*s, *p, n, out.get());
      for (size_t i = 0; i < n; ++i) {
        if (out->IsNull(i)) continue;
        int ec = -1;
        if (esc) {
          if (esc->IsNull(i)) {
            out->SetNull(i);
            continue;
          }
          if (esc->str[i].size() != 1) Fail(ErrorKind::kRuntime, "LIKE ESCAPE must be a single character");
          ec = static_cast<unsigned char>(esc->str[i][0]);
        }
        out->i64[i] = LikeMatch(s->str[i], p->str[i], ec);
      }
      return out;
    }
    case ExprOp::kMapValue:
    case ExprOp::kItem:
    case ExprOp::kCardinality:
    case ExprOp::kMapContainsKey:
    case ExprOp::kMapKeys:
    case ExprOp::kMapValues:
    case ExprOp::kParseJson:
    case ExprOp::kToJson:
    case ExprOp::kTypeOf:
      return EvalCollection(e, b);
    case ExprOp::kScalarSubquery: {
      ColumnPtr count = Evaluate(*e.args[0], b);
      for (size_t i = 0; i < n; ++i)
        if (!count->IsNull(i) && count->i64[i] > 1)
          Fail(ErrorKind::kRuntime, "a scalar subquery returned more than one row");
      return Evaluate(*e.args[1], b);
    }
    case ExprOp::kTimeFunc:
      return EvaluateTimeFunc(e, b);
    case ExprOp::kCall:
      return EvalCall(e, b);
    case ExprOp::kNow:
      Fail(ErrorKind::kRuntime, "NOW() evaluated outside a temporal filter");
  }
  return ConstantColumn(Value::Null(), e.type.phys(), n);
}

Value EvaluateConstant(const BoundExpr& e) {
  Batch one;
  one.weights.push_back(1);
  return Evaluate(e, one)->Get(0);
}

std::vector<uint32_t> SelectTrue(const BoundExpr& pred, const Batch& b) {
  ColumnPtr c = Evaluate(pred, b);
  std::vector<uint32_t> sel;
  sel.reserve(b.size());
  const int64_t* v = c->i64.data();
  if (!c->HasNulls()) {
    for (size_t i = 0; i < b.size(); ++i)
      if (v[i]) sel.push_back(static_cast<uint32_t>(i));
  } else {
    for (size_t i = 0; i < b.size(); ++i)
      if (v[i] && !c->nulls[i]) sel.push_back(static_cast<uint32_t>(i));
  }
  return sel;
}

}  // namespace fld
