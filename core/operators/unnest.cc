#include "core/operators/unnest.h"

namespace fld {

UnnestOp::UnnestOp(BoundExprPtr array, bool ordinality, std::vector<PhysType> output_types)
    : array_(std::move(array)), ordinality_(ordinality), output_types_(std::move(output_types)) {}

Batch UnnestOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  BatchBuilder out(output_types_);
  if (in.empty()) return out.Finish();
  ColumnPtr arrays = Evaluate(*array_, in);
  const SqlType& element_type = (*array_->type.fields)[0];
  const bool rows = element_type.id == TypeId::kRow;
  const size_t width = in.width();
  for (size_t r = 0; r < in.size(); ++r) {
    if (arrays->IsNull(r)) continue;
    std::vector<Value> elements = DecodeArrayValue(arrays->str[r], element_type);
    for (size_t k = 0; k < elements.size(); ++k) {
      for (size_t c = 0; c < width; ++c) out.col(c).AppendFrom(*in.cols[c], r);
      size_t c = width;
      if (rows) {
        // A ROW element is its fields (a NULL element: every field NULL).
        const size_t nf = element_type.fields->size();
        std::vector<Value> fields =
            elements[k].IsNull() ? std::vector<Value>(nf) : DecodeRowValue(elements[k].s, *element_type.fields);
        for (const Value& f : fields) out.col(c++).Append(f);
      } else {
        out.col(c++).Append(elements[k]);
      }
      if (ordinality_) out.col(c).Append(Value::Int(static_cast<int64_t>(k) + 1));
      out.AddWeight(in.weights[r]);
    }
  }
  return out.Finish();
}

std::string UnnestOp::Describe() const {
  return "unnest " + array_->ToString() + (ordinality_ ? " with ordinality" : "");
}

}  // namespace fld
