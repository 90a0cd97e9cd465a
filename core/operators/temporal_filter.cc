#include "core/operators/temporal_filter.h"

#include "core/circuit/waterline.h"
#include "core/common/error.h"

namespace fld {

namespace {

bool ReadsColumns(const BoundExpr& e) {
  if (e.op == ExprOp::kColumn) return true;
  for (const auto& a : e.args)
    if (ReadsColumns(*a)) return true;
  return false;
}

BoundExprPtr NowAsColumn(const BoundExpr& e) {
  return ReplaceNow(e, 0);
}

ExprOp Flip(ExprOp op) {
  switch (op) {
    case ExprOp::kLt:
      return ExprOp::kGt;
    case ExprOp::kLe:
      return ExprOp::kGe;
    case ExprOp::kGt:
      return ExprOp::kLt;
    default:
      return ExprOp::kLe;
  }
}

}  // namespace

bool ContainsNow(const BoundExpr& e) {
  if (e.op == ExprOp::kNow) return true;
  if (e.lambda && ContainsNow(*e.lambda)) return true;
  for (const auto& a : e.args)
    if (ContainsNow(*a)) return true;
  return false;
}

BoundExprPtr ReplaceNow(const BoundExpr& e, int column) {
  if (e.op == ExprOp::kNow) return MakeColumn(column, e.type);
  if (e.lambda && ContainsNow(*e.lambda)) Fail(ErrorKind::kUsage, "NOW() in a lambda is not supported yet");
  BoundExprPtr out = e.Clone();
  out->args.clear();
  for (const auto& a : e.args) out->args.push_back(ReplaceNow(*a, column));
  return out;
}

std::optional<TemporalBound> MatchTemporalBound(const BoundExpr& c) {
  if (c.op != ExprOp::kLt && c.op != ExprOp::kLe && c.op != ExprOp::kGt && c.op != ExprOp::kGe) return std::nullopt;
  const BoundExpr* row = c.args[0].get();
  const BoundExpr* now = c.args[1].get();
  ExprOp cmp = c.op;
  if (ContainsNow(*row)) {
    std::swap(row, now);
    cmp = Flip(cmp);
  }
  if (ContainsNow(*row) || !ContainsNow(*now) || ReadsColumns(*now)) return std::nullopt;
  TemporalBound b;
  b.bound = NowAsColumn(*now);
  if (!IsMonotoneIn(*b.bound, 0)) return std::nullopt;
  b.row = row->Clone();
  b.cmp = cmp;
  b.text = c.ToString();
  return b;
}

// ---- ClockOp ----

void ClockOp::Set(int64_t micros) {
  next_ = value_ && *value_ > micros ? *value_ : micros;
}

Batch ClockOp::Step(std::span<const Batch* const>) {
  const PhysType t[] = {PhysType::kI64};
  BatchBuilder out(t);
  if (next_ && next_ != value_) {
    if (value_) out.AppendRow(std::vector<Value>{Value::Int(*value_)}, -1);
    out.AppendRow(std::vector<Value>{Value::Int(*next_)}, 1);
    value_ = next_;
  }
  next_.reset();
  return out.Finish();
}

void ClockOp::SaveState(StateWriter& w) const {
  w.U64(value_ ? 1 : 0);
  w.I64(value_.value_or(0));
}

void ClockOp::RestoreState(StateReader& r) {
  bool known = r.U64() != 0;
  int64_t v = r.I64();
  value_.reset();
  if (known) value_ = v;
  next_.reset();
}

// ---- TemporalFilterOp ----

TemporalFilterOp::TemporalFilterOp(std::vector<PhysType> types, TemporalBound bound)
    : types_(types), b_(std::move(bound)), kept_(b_.row->type.phys(), std::move(types), "a temporal filter") {}

bool TemporalFilterOp::Passes(const Value& x) const {
  if (x.IsNull()) return false;
  if (!bound_) return lower();  // -infinity
  if (bound_->IsNull()) return false;
  switch (b_.cmp) {
    case ExprOp::kLt:
      return x < *bound_;
    case ExprOp::kLe:
      return x <= *bound_;
    case ExprOp::kGt:
      return x > *bound_;
    default:
      return x >= *bound_;
  }
}

Batch TemporalFilterOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  const Batch& clock = *inputs[1];
  BatchBuilder out(types_);
  // The clock moved: the bound moves with it, and the rows crossing it leave (a lower bound) or
  // enter (an upper bound).
  for (size_t r = 0; r < clock.size(); ++r) {
    if (clock.weights[r] <= 0) continue;
    Batch now = Gather(clock, std::vector<uint32_t>{static_cast<uint32_t>(r)});
    bound_ = Evaluate(*b_.bound, now)->Get(0);
    kept_.ReleaseWhile([&](const Value& x) { return Passes(x) == lower(); },
                       [&](std::string_view row, int64_t w) {
                         DecodeRowInto(row, &out, 0);
                         out.AddWeight(lower() ? -w : w);
                       });
  }
  if (in.empty()) return out.Finish();
  ColumnPtr x = Evaluate(*b_.row, in);
  for (size_t r = 0; r < in.size(); ++r) {
    if (x->IsNull(r)) continue;
    const Value v = x->Get(r);
    const bool pass = Passes(v);
    if (pass) out.AppendFrom(in, r, in.weights[r]);
    if (pass != lower()) continue;  // passes an upper bound for good, or never passes a lower one again
    kept_.Add(v, in, r, in.weights[r]);
  }
  return out.Finish();
}

void TemporalFilterOp::SaveBound(StateWriter& w) const {
  std::string enc;
  if (bound_) EncodeValue(&enc, *bound_);
  w.U64(bound_ ? 1 : 0);
  w.Str(enc);
}

void TemporalFilterOp::RestoreBound(StateReader& r) {
  const bool known = r.U64() != 0;
  const std::string enc = r.Str();
  bound_.reset();
  if (!known) return;
  if (enc.empty() || !RowEncodingValid(enc))
    Fail(ErrorKind::kCorruption, "a temporal filter's saved bound is malformed");
  size_t pos = 0;
  bound_ = DecodeValue(enc, &pos);
  if (pos != enc.size()) Fail(ErrorKind::kCorruption, "a temporal filter's saved bound is malformed");
}

// The whole state: the bound, then the kept rows (OrderedRows::SaveWhole).
void TemporalFilterOp::SaveState(StateWriter& w) const {
  SaveBound(w);
  kept_.SaveWhole(w);
}

void TemporalFilterOp::RestoreState(StateReader& r) {
  kept_.Clear();
  RestoreBound(r);
  kept_.RestoreWhole(r, false);
}

// Keyed state: the header is SaveState's form with no rows (the bound); each kept row is an
// entry (OrderedRows).
void TemporalFilterOp::SaveChanges(StateWriter& w, StateDelta& d) {
  SaveBound(w);
  w.U64(0);
  kept_.SaveChanges(d);
}

void TemporalFilterOp::BeginRestore(StateReader& r) {
  kept_.Clear();
  kept_.Restored();
  RestoreBound(r);
  kept_.RestoreWhole(r, true);  // (none but in an older checkpoint's header)
}

void TemporalFilterOp::RestoreEntry(std::string_view key, std::string_view value) {
  kept_.RestoreEntry(key, value);
}

}  // namespace fld
