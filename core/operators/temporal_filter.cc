#include "core/operators/temporal_filter.h"

#include <algorithm>
#include <cstring>

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

namespace {

// The compared value's part of a kept row's key: one ascending sort key (never NULL there).
constexpr SortKey kX{0, false, true};

}  // namespace

TemporalFilterOp::TemporalFilterOp(std::vector<PhysType> types, TemporalBound bound)
    : types_(std::move(types)), x_type_(bound.row->type.phys()), b_(std::move(bound)) {}

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

size_t TemporalFilterOp::XBytes(std::string_view key) const {
  return OrderKeySortBytes(key, {&kX, 1}, {&x_type_, 1});
}

Value TemporalFilterOp::XOf(std::string_view key) const {
  return RowOfOrderKey(key.substr(0, XBytes(key)), {&kX, 1}, {&x_type_, 1})[0];
}

std::string TemporalFilterOp::StoredKey(std::string_view key) const {
  std::string s;
  EncodeValue(&s, XOf(key));
  s.append(key.substr(XBytes(key)));
  return s;
}

std::string TemporalFilterOp::KeptKey(std::string_view stored) const {
  static constexpr Value::Kind kKind[] = {Value::Kind::kInt, Value::Kind::kDouble, Value::Kind::kString};
  size_t pos = 0;
  if (!RowEncodingValid(stored) || stored.empty())  // (then its first value decodes safely)
    Fail(ErrorKind::kCorruption, "a temporal filter's stored row is malformed");
  const Value x = DecodeValue(stored, &pos);
  const std::string_view row = stored.substr(pos);
  if (x.IsNull() || x.kind != kKind[static_cast<int>(x_type_)] || !RowEncodingFits(row, types_))
    Fail(ErrorKind::kCorruption, "a temporal filter's stored row is malformed or does not fit the columns");
  std::string key;
  AppendOrderKey({&kX, 1}, std::vector<Value>{x}, &key);
  AppendCompactRow(row, &key);
  return key;
}

void TemporalFilterOp::Add(std::string_view key, int64_t w) {
  if (w == 0) return;
  if (track_ && !all_changed_) changed_.emplace_back(key);
  auto [it, fresh] = kept_.try_emplace(InlineKey(key), 0);
  it->second += w;
  if (it->second == 0) kept_.erase(it);
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
    for (auto it = kept_.begin(); it != kept_.end() && Passes(XOf(it->first.view())) != lower();) {
      const std::string_view key = it->first.view();
      DecodeRowInto(key.substr(XBytes(key)), &out, 0);
      out.AddWeight(lower() ? -it->second : it->second);
      if (track_ && !all_changed_) changed_.emplace_back(key);
      it = kept_.erase(it);
    }
  }
  if (in.empty()) return out.Finish();
  ColumnPtr x = Evaluate(*b_.row, in);
  std::string key;
  std::vector<Value> one(1);
  for (size_t r = 0; r < in.size(); ++r) {
    if (x->IsNull(r)) continue;
    one[0] = x->Get(r);
    const bool pass = Passes(one[0]);
    if (pass) out.AppendFrom(in, r, in.weights[r]);
    if (pass != lower()) continue;  // passes an upper bound for good, or never passes a lower one again
    key.clear();
    AppendOrderKey({&kX, 1}, one, &key);
    for (const auto& c : in.cols) EncodeCompactValue(&key, *c, r);
    Add(key, in.weights[r]);
  }
  return out.Finish();
}

void TemporalFilterOp::SaveBound(StateWriter& w) const {
  std::string enc;
  if (bound_) EncodeValue(&enc, *bound_);
  w.U64(bound_ ? 1 : 0);
  w.Str(enc);
}

// The whole state: the bound, then the kept rows (their stored keys split in two: the compared
// value's encoding, the row) and weights.
void TemporalFilterOp::SaveState(StateWriter& w) const {
  SaveBound(w);
  w.U64(kept_.size());
  for (const auto& [k, weight] : kept_) {
    const std::string stored = StoredKey(k.view());
    size_t pos = 0;
    DecodeValue(stored, &pos);
    w.Str(std::string_view(stored).substr(0, pos));
    w.Str(std::string_view(stored).substr(pos));
    w.I64(weight);
  }
}

void TemporalFilterOp::RestoreState(StateReader& r) {
  kept_.clear();
  changed_.clear();
  all_changed_ = true;
  RestoreWhole(r);
}

void TemporalFilterOp::RestoreWhole(StateReader& r) {
  const bool known = r.U64() != 0;
  const std::string enc = r.Str();
  bound_.reset();
  if (known) {
    if (!RowEncodingValid(enc) || enc.empty())
      Fail(ErrorKind::kCorruption, "a temporal filter's saved bound is malformed");
    size_t pos = 0;
    bound_ = DecodeValue(enc, &pos);
    if (pos != enc.size()) Fail(ErrorKind::kCorruption, "a temporal filter's saved bound is malformed");
  }
  const uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) {
    std::string stored = r.Str();
    stored.append(r.View());
    const int64_t weight = r.I64();
    const std::string key = KeptKey(stored);
    // (rows of an older checkpoint's header: entries from the next checkpoint on)
    if (!all_changed_) changed_.push_back(key);
    kept_[InlineKey(key)] += weight;
  }
}

// Keyed state: the header is SaveState's form with no rows (the bound); each kept row is an
// entry, its stored key -> its 8-byte weight.
void TemporalFilterOp::SaveChanges(StateWriter& w, StateDelta& d) {
  SaveBound(w);
  w.U64(0);
  auto put = [&](std::string_view key, int64_t weight) {
    d.Put(StoredKey(key), std::string_view(reinterpret_cast<const char*>(&weight), 8));
  };
  if (all_changed_) {
    for (const auto& [k, weight] : kept_) put(k.view(), weight);
  } else {
    std::sort(changed_.begin(), changed_.end());
    changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
    for (const std::string& k : changed_) {
      auto it = kept_.find(InlineKey(k));
      if (it == kept_.end())
        d.Erase(StoredKey(k));
      else
        put(k, it->second);
    }
  }
  std::vector<std::string>().swap(changed_);
  all_changed_ = false;
}

void TemporalFilterOp::BeginRestore(StateReader& r) {
  kept_.clear();
  changed_.clear();
  all_changed_ = false;
  RestoreWhole(r);
}

void TemporalFilterOp::RestoreEntry(std::string_view key, std::string_view value) {
  if (value.size() != 8) Fail(ErrorKind::kCorruption, "a temporal filter's stored weight has {} bytes", value.size());
  int64_t weight;
  std::memcpy(&weight, value.data(), 8);
  if (weight == 0) Fail(ErrorKind::kCorruption, "a temporal filter's stored row has weight 0");
  auto [it, fresh] = kept_.try_emplace(InlineKey(KeptKey(key)), weight);
  if (!fresh) Fail(ErrorKind::kCorruption, "a temporal filter's stored state holds a row twice");
}

}  // namespace fld
