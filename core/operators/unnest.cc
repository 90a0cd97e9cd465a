#include "core/operators/unnest.h"

#include <algorithm>

namespace fld {

namespace {

// The columns one UNNEST argument contributes: an array's element (or its fields when it is a
// ROW), a map's key and value.
size_t ArgWidth(const SqlType& t) {
  if (t.id == TypeId::kMap) return 2;
  const SqlType& et = (*t.fields)[0];
  return et.id == TypeId::kRow ? et.fields->size() : 1;
}

// One argument's value in one row, decoded: its positions, each the columns it contributes.
std::vector<std::vector<Value>> Decode(const Column& c, size_t r, const SqlType& t) {
  std::vector<std::vector<Value>> out;
  if (c.IsNull(r)) return out;
  if (t.id == TypeId::kMap) {
    for (auto& [k, v] : DecodeMapValue(c.str[r], t)) out.push_back({std::move(k), std::move(v)});
    return out;
  }
  const SqlType& et = (*t.fields)[0];
  for (Value& e : DecodeArrayValue(c.str[r], et)) {
    if (et.id != TypeId::kRow) {
      out.push_back({std::move(e)});
    } else {
      // A ROW element is its fields (a NULL element: every field NULL).
      out.push_back(e.IsNull() ? std::vector<Value>(et.fields->size()) : DecodeRowValue(e.s, *et.fields));
    }
  }
  return out;
}

}  // namespace

UnnestOp::UnnestOp(std::vector<BoundExprPtr> args, bool ordinality, size_t keep, BoundExprPtr on, bool outer,
                   std::vector<PhysType> output_types)
    : args_(std::move(args)),
      ordinality_(ordinality),
      keep_(keep),
      on_(std::move(on)),
      outer_(outer),
      output_types_(std::move(output_types)) {}

Batch UnnestOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  if (in.empty()) return BatchBuilder(output_types_).Finish();
  std::vector<ColumnPtr> values;
  for (const auto& a : args_) values.push_back(Evaluate(*a, in));
  // The candidate rows: the output row, then the input's columns after `keep`.
  std::vector<PhysType> cand_types = output_types_;
  for (size_t c = keep_; c < in.width(); ++c) cand_types.push_back(in.cols[c]->phys);
  BatchBuilder cand(cand_types);
  std::vector<size_t> owner;  // the input row of each candidate
  const size_t out_width = output_types_.size();
  for (size_t r = 0; r < in.size(); ++r) {
    std::vector<std::vector<std::vector<Value>>> decoded;
    size_t n = 0;
    for (size_t i = 0; i < args_.size(); ++i) {
      decoded.push_back(Decode(*values[i], r, args_[i]->type));
      n = std::max(n, decoded.back().size());
    }
    for (size_t k = 0; k < n; ++k) {
      size_t c = 0;
      for (; c < keep_; ++c) cand.col(c).AppendFrom(*in.cols[c], r);
      for (size_t i = 0; i < args_.size(); ++i) {
        const size_t w = ArgWidth(args_[i]->type);
        for (size_t j = 0; j < w; ++j) {
          if (k < decoded[i].size())
            cand.col(c++).Append(decoded[i][k][j]);
          else
            cand.col(c++).AppendNull();
        }
      }
      if (ordinality_) cand.col(c++).Append(Value::Int(static_cast<int64_t>(k) + 1));
      for (size_t x = keep_; x < in.width(); ++x) cand.col(c++).AppendFrom(*in.cols[x], r);
      cand.AddWeight(in.weights[r]);
      owner.push_back(r);
    }
  }
  Batch rows = cand.Finish();
  if (!on_ && !outer_ && cand_types.size() == out_width) return rows;
  std::vector<uint8_t> pass(rows.size(), on_ ? 0 : 1);
  if (on_ && !rows.empty())
    for (uint32_t i : SelectTrue(*on_, rows)) pass[i] = 1;
  BatchBuilder out(output_types_);
  size_t i = 0;
  for (size_t r = 0; r < in.size(); ++r) {
    bool any = false;
    for (; i < rows.size() && owner[i] == r; ++i) {
      if (!pass[i]) continue;
      any = true;
      for (size_t c = 0; c < out_width; ++c) out.col(c).AppendFrom(*rows.cols[c], i);
      out.AddWeight(rows.weights[i]);
    }
    if (outer_ && !any) {
      for (size_t c = 0; c < keep_; ++c) out.col(c).AppendFrom(*in.cols[c], r);
      for (size_t c = keep_; c < out_width; ++c) out.col(c).AppendNull();
      out.AddWeight(in.weights[r]);
    }
  }
  return out.Finish();
}

std::string UnnestOp::Describe() const {
  std::string s = outer_ ? "outer unnest " : "unnest ";
  for (size_t i = 0; i < args_.size(); ++i) s += (i ? ", " : "") + args_[i]->ToString();
  if (ordinality_) s += " with ordinality";
  if (on_) s += " on " + on_->ToString();
  return s;
}

}  // namespace fld
