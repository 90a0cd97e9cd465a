#include "core/circuit/waterline.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/common/error.h"
#include "core/expr/time.h"

namespace fld {

namespace {

// A copy of e with every reference to column `col` replaced by a copy of `with` (or by column 0
// when `with` is null).
BoundExprPtr Substitute(const BoundExpr& e, int col, const BoundExpr* with) {
  if (e.op == ExprOp::kColumn && e.column_index == col) return with ? with->Clone() : MakeColumn(0, e.type);
  auto out = std::make_unique<BoundExpr>();
  out->op = e.op;
  out->type = e.type;
  out->column_index = e.column_index;
  out->literal = e.literal;
  out->has_else = e.has_else;
  for (const auto& a : e.args) out->args.push_back(Substitute(*a, col, with));
  return out;
}

bool OrderedType(const SqlType& t) {
  return t.IsNumeric() || t.id == TypeId::kDate || t.id == TypeId::kTimestamp;
}

bool PositiveConstant(const BoundExpr& e) {
  if (!e.IsConstant()) return false;
  try {
    Value v = EvaluateConstant(e);
    if (v.kind == Value::Kind::kInt) return v.i > 0;
    if (v.kind == Value::Kind::kDouble) return v.d > 0;
  } catch (const Error&) {
  }
  return false;
}

}  // namespace

int SingleColumn(const BoundExpr& e) {
  if (e.op == ExprOp::kColumn) return e.column_index;
  int found = -1;
  for (const auto& a : e.args) {
    if (a->IsConstant()) continue;
    int c = SingleColumn(*a);
    if (c < 0 || (found >= 0 && c != found)) return -1;
    found = c;
  }
  return found;
}

bool IsMonotoneIn(const BoundExpr& e, int col) {
  switch (e.op) {
    case ExprOp::kColumn:
      return e.column_index == col;
    case ExprOp::kCast:
      return OrderedType(e.type) && OrderedType(e.args[0]->type) && IsMonotoneIn(*e.args[0], col);
    case ExprOp::kAdd:
      if (e.args[1]->IsConstant()) return IsMonotoneIn(*e.args[0], col);
      if (e.args[0]->IsConstant()) return IsMonotoneIn(*e.args[1], col);
      return false;
    case ExprOp::kSub:
      return e.args[1]->IsConstant() && IsMonotoneIn(*e.args[0], col);
    case ExprOp::kMul:
      if (PositiveConstant(*e.args[1])) return IsMonotoneIn(*e.args[0], col);
      if (PositiveConstant(*e.args[0])) return IsMonotoneIn(*e.args[1], col);
      return false;
    case ExprOp::kDiv:  // truncating integer division by a positive constant never decreases
      return PositiveConstant(*e.args[1]) && IsMonotoneIn(*e.args[0], col);
    case ExprOp::kTimeFunc: {
      // The start of a TUMBLE window, FLOOR/CEIL(x TO unit), and a date or timestamp plus a
      // constant interval never decrease as x grows (TIME plus an interval wraps: not monotone).
      for (size_t i = 2; i < e.args.size(); ++i)
        if (!e.args[i]->IsConstant()) return false;
      switch (TimeFnOf(e)) {
        case TimeFn::kWindowStart:
        case TimeFn::kTrunc:
        case TimeFn::kCeil:
        case TimeFn::kAddMonths:
        case TimeFn::kDateAddMicros:
          return e.args.size() >= 2 && IsMonotoneIn(*e.args[1], col);
        default:
          return false;
      }
    }
    default:
      return false;
  }
}

WaterlineRef WaterlineRef::Through(const BoundExpr& f, int col) const {
  WaterlineRef out = *this;
  out.fn_ = std::shared_ptr<const BoundExpr>(Substitute(f, col, fn_.get()));
  if (min_with_) out.min_with_ = std::make_shared<const WaterlineRef>(min_with_->Through(f, col));  // f monotone
  return out;
}

WaterlineRef WaterlineRef::Min(WaterlineRef a, WaterlineRef b) {
  if (!a.valid() || !b.valid()) return WaterlineRef();
  a.min_with_ = std::make_shared<const WaterlineRef>(a.min_with_ ? Min(*a.min_with_, std::move(b)) : std::move(b));
  return a;
}

std::optional<Value> WaterlineRef::Current() const {
  if (min_with_) {
    WaterlineRef self = *this;
    self.min_with_.reset();
    std::optional<Value> a = self.Current(), b = min_with_->Current();
    if (!a || !b) return std::nullopt;
    return std::min(*a, *b);
  }
  if (!cell_ || !cell_->known) return std::nullopt;
  if (!fn_) return cell_->value;
  Batch one;
  auto c = std::make_shared<Column>(type_.phys());
  c->Append(cell_->value);
  one.cols.push_back(std::move(c));
  one.weights.push_back(1);
  try {
    Value v = Evaluate(*fn_, one)->Get(0);
    if (v.IsNull()) return std::nullopt;
    return v;
  } catch (const Error&) {
    return std::nullopt;  // e.g. an overflow near the type's limits: no waterline this step
  }
}

Value WaterlineIndex::ValueOf(const std::string& key) const {
  size_t pos = 0;
  Value v;
  for (int i = 0; i <= col_; ++i) v = DecodeValue(key, &pos);
  return v;
}

void WaterlineIndex::Added(const std::string& key) {
  if (!active()) return;
  Value v = ValueOf(key);
  if (!v.IsNull()) entries_.emplace(std::move(v), key);
}

void WaterlineIndex::Removed(const std::string& key) {
  if (!active()) return;
  Value v = ValueOf(key);
  if (!v.IsNull()) entries_.erase({std::move(v), key});
}

std::vector<std::string> WaterlineIndex::TakeBelow() {
  std::vector<std::string> out;
  if (!active() || entries_.empty()) return out;
  std::optional<Value> w = w_.Current();
  if (!w) return out;
  auto end = entries_.lower_bound({*w, std::string()});
  for (auto it = entries_.begin(); it != end; ++it) out.push_back(it->second);
  entries_.erase(entries_.begin(), end);
  return out;
}

std::string WaterlineRef::ToString() const {
  if (!cell_) return "none";
  return fn_ ? fn_->ToString() : "$0";
}

}  // namespace fld
