#include "core/operators/aggregate.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <tuple>

#include "core/common/byte_order.h"
#include "core/common/error.h"
#include "core/common/int512.h"
#include "core/common/prefetch.h"
#include "core/operators/moment.h"

namespace fld {

namespace {
[[noreturn]] void SumOverflow() {
  Fail(ErrorKind::kRuntime, "integer overflow in SUM");
}

// A group record's 8-byte fields, read and added to in place (unaligned).
int64_t LoadI64(const char* p) {
  int64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
void AddI64(char* p, int64_t v) {
  v += LoadI64(p);
  std::memcpy(p, &v, 8);
}
void AddSum(char* p, int64_t v) {  // a SUM's exact sum: overflow is an error
  if (__builtin_add_overflow(LoadI64(p), v, &v)) SumOverflow();
  std::memcpy(p, &v, 8);
}
void AddF64(char* p, double v) {
  double x;
  std::memcpy(&x, p, 8);
  x += v;
  std::memcpy(p, &x, 8);
}
// FILTER (WHERE c): whether row i is left out (c, the BOOLEAN column `filter`, is not TRUE).
bool FilteredOut(const Column* filter, size_t i) {
  return filter != nullptr && (filter->IsNull(i) || filter->i64[i] == 0);
}
[[noreturn]] void DeletionFromInsertsOnly() {
  Fail(ErrorKind::kRuntime, "internal error: a deletion reached an aggregate over an input that only inserts");
}
// A pair's order key: the row (key, value) sorted by the key, ascending, NULLs first; the value
// is the tie-break. A MIN/MAX extreme's: the one-column row (value).
constexpr SortKey kPairOrder[] = {SortKey{0, false, true}};
}  // namespace

AggregateOp::AggregateOp(std::vector<PhysType> in_types, int num_keys, std::vector<AggSpec> aggs, ThreadPool* pool)
    : in_types_(std::move(in_types)), pool_(pool), num_keys_(num_keys), aggs_(std::move(aggs)) {
  for (int k = 0; k < num_keys_; ++k) out_types_.push_back(in_types_[k]);
  for (const auto& a : aggs_) out_types_.push_back(a.result_type.phys());
  Layout();
  shards_.resize(pool_ != nullptr && pool_->workers() > 1 && num_keys_ > 0 ? pool_->workers() : 1);
}

void AggregateOp::InputsInsertOnly() {
  for (const Shard& sh : shards_)
    if (sh.groups.size() != 0 || sh.stored.backed())
      Fail(ErrorKind::kRuntime, "internal error: aggregate layout changed with state");
  inserts_only_ = true;
  Layout();
}

void AggregateOp::Layout() {
  stored_.clear();
  offset_.clear();
  stored_offset_.clear();
  record_bytes_ = stored_bytes_ = 8;
  // Layout of a group record. Inline kinds are those whose Preaggregate / SmallKeyPreaggregate /
  // Fold touch only count and one sum (isum over 64-bit integer columns, dsum over floating ones).
  for (const auto& a : aggs_) {
    Stored st = Stored::kBox;
    const bool plain = !a.distinct && !IsWideSum(a) && a.arg >= 0;
    const PhysType phys = a.arg >= 0 ? in_types_[a.arg] : PhysType::kI64;
    if (a.kind == AggKind::kCountStar)
      st = a.filter < 0 ? Stored::kNothing : Stored::kCount;
    else if (inserts_only_ && (a.kind == AggKind::kMin || a.kind == AggKind::kMax))
      st = phys == PhysType::kStr ? Stored::kExtremeKey : Stored::kExtremeNum;
    else if (inserts_only_ && IsArg(a))
      st = Stored::kExtremeKey;
    else if (a.kind == AggKind::kMin || a.kind == AggKind::kMax)
      st = Stored::kValues;
    else if (IsPairs(a))
      st = Stored::kPairs;
    else if (plain && a.kind != AggKind::kCount && phys == PhysType::kI64 && a.filter < 0 && !a.arg_type.nullable &&
             (a.kind == AggKind::kSum || a.kind == AggKind::kAvg))
      st = Stored::kSumInt;  // every row counts: the count is the row count
    else if (plain && (a.kind == AggKind::kCount || a.kind == AggKind::kSum || a.kind == AggKind::kAvg))
      st = phys == PhysType::kI64      ? (a.kind == AggKind::kCount ? Stored::kCount : Stored::kCountInt)
           : phys == PhysType::kF64    ? Stored::kCountDouble
           : a.kind == AggKind::kCount ? Stored::kCount
                                       : Stored::kBox;
    offset_.push_back(record_bytes_);
    record_bytes_ += st == Stored::kSumInt ? 8 : StoredFieldBytes(st);
    // Checkpoints store kSumInt as kCountInt (count then sum): the stored form predates it.
    stored_offset_.push_back(stored_bytes_);
    stored_bytes_ += StoredFieldBytes(st);
    stored_.push_back(st);
  }
  extreme_form_.assign(aggs_.size(), ExtremeForm::kOrderKey);
  for (size_t a = 0; a < aggs_.size(); ++a) {
    if (stored_[a] != Stored::kExtremeKey) continue;
    const AggSpec& spec = aggs_[a];
    auto number = [&](int col, const SqlType& t) {
      return !t.nullable && (in_types_[static_cast<size_t>(col)] == PhysType::kI64 ||
                             in_types_[static_cast<size_t>(col)] == PhysType::kF64);
    };
    if (!IsArg(spec))
      extreme_form_[a] = ExtremeForm::kText;  // (kExtremeKey MIN/MAX: a string argument)
    else if (number(spec.arg, spec.arg_type) && number(spec.key, spec.key_type))
      extreme_form_[a] = ExtremeForm::kNumPair;
  }
  all_inline_ = std::none_of(stored_.begin(), stored_.end(), FoldsThroughAcc);
  has_extreme_keys_ = std::find(stored_.begin(), stored_.end(), Stored::kExtremeKey) != stored_.end();
  records_own_heap_ = std::any_of(stored_.begin(), stored_.end(), [](Stored st) {
    return st == Stored::kExtremeKey || st == Stored::kValues || st == Stored::kPairs;
  });
  has_box_ = std::find(stored_.begin(), stored_.end(), Stored::kBox) != stored_.end();
  raw_ = all_inline_ && !has_extreme_keys_;
}

void AggregateOp::InlineAcc(const char* rec, size_t a, Acc* acc) const {
  const char* p = rec + offset_[a];
  acc->count = acc->isum = 0;
  acc->dsum = 0;
  switch (stored_[a]) {
    case Stored::kNothing:
    case Stored::kBox:
    case Stored::kValues:
    case Stored::kPairs:
      break;
    case Stored::kCount:
    case Stored::kExtremeNum:  // (the extreme itself: AccIn)
    case Stored::kExtremeKey:
      std::memcpy(&acc->count, p, 8);
      break;
    case Stored::kCountInt:
      std::memcpy(&acc->count, p, 8);
      std::memcpy(&acc->isum, p + 8, 8);
      break;
    case Stored::kCountDouble:
      std::memcpy(&acc->count, p, 8);
      std::memcpy(&acc->dsum, p + 8, 8);
      break;
    case Stored::kSumInt:
      std::memcpy(&acc->count, rec, 8);  // the row count
      std::memcpy(&acc->isum, p, 8);
      break;
  }
}

void AggregateOp::WriteInline(char* rec, size_t a, int64_t count, int64_t isum, double dsum) const {
  char* p = rec + offset_[a];
  switch (stored_[a]) {
    case Stored::kNothing:
    case Stored::kBox:
    case Stored::kValues:
    case Stored::kPairs:
    case Stored::kExtremeNum:  // (StoreGroup writes them)
    case Stored::kExtremeKey:
      break;
    case Stored::kCount:
      std::memcpy(p, &count, 8);
      break;
    case Stored::kCountInt:
      std::memcpy(p, &count, 8);
      std::memcpy(p + 8, &isum, 8);
      break;
    case Stored::kCountDouble:
      std::memcpy(p, &count, 8);
      std::memcpy(p + 8, &dsum, 8);
      break;
    case Stored::kSumInt:
      std::memcpy(p, &isum, 8);
      break;
  }
}

void AggregateOp::RecordToStored(std::string_view rec, std::string* out) const {
  if (stored_bytes_ == record_bytes_) {  // no kSumInt: the same bytes
    out->append(rec);
    return;
  }
  const size_t at = out->size();
  out->resize(at + stored_bytes_, '\0');
  char* q = out->data() + at;
  std::memcpy(q, rec.data(), 8);
  for (size_t a = 0; a < aggs_.size(); ++a) {
    const size_t n = StoredFieldBytes(stored_[a]);
    if (stored_[a] == Stored::kSumInt) {
      std::memcpy(q + stored_offset_[a], rec.data(), 8);  // count = rows
      std::memcpy(q + stored_offset_[a] + 8, rec.data() + offset_[a], 8);
    } else {
      std::memcpy(q + stored_offset_[a], rec.data() + offset_[a], n);
    }
  }
}

void AggregateOp::StoredToRecord(std::string_view stored, std::string* out) const {
  out->assign(record_bytes_, '\0');
  char* q = out->data();
  std::memcpy(q, stored.data(), 8);
  for (size_t a = 0; a < aggs_.size(); ++a) {
    const size_t n = StoredFieldBytes(stored_[a]);
    if (stored_[a] == Stored::kSumInt) {
      if (std::memcmp(stored.data() + stored_offset_[a], stored.data(), 8) != 0)
        Fail(ErrorKind::kCorruption, "an aggregate's stored group counts NULLs in a NOT NULL column");
      std::memcpy(q + offset_[a], stored.data() + stored_offset_[a] + 8, 8);
    } else {
      std::memcpy(q + offset_[a], stored.data() + stored_offset_[a], n);
    }
  }
}

int64_t AggregateOp::ViewGroup(Shard& sh, char* rec, std::vector<Acc>* scratch, std::vector<Acc*>* accs) {
  for (size_t a = 0; a < aggs_.size(); ++a) {
    const Stored st = stored_[a];
    uint32_t box = 0;
    if (st == Stored::kBox) {
      std::memcpy(&box, rec + offset_[a], 4);
      Acc& b = sh.boxes[box];
      sh.box_heap -= HeapBytes(b);  // (StoreGroup counts it again)
      (*accs)[a] = &b;
      continue;
    }
    Acc& acc = (*scratch)[a];
    (*accs)[a] = &acc;
    if (st == Stored::kValues || st == Stored::kPairs) {
      acc.count = acc.isum = 0;
      acc.dsum = 0;
      // (StoreGroup puts them back, and counts their heap again.)
      if (st == Stored::kValues) {
        acc.values = TakeSet<ValueMultiset>(rec + offset_[a]);
        sh.box_heap -= HeapBytes(acc.values);
      } else {
        acc.pairs = TakeSet<KeyWeights>(rec + offset_[a]);
        sh.box_heap -= HeapBytes(acc.pairs);
      }
    } else if (IsExtreme(st)) {
      acc = Acc{};
      ExtremeAcc(rec, a, &acc);
    } else {
      InlineAcc(rec, a, &acc);  // (an inline kind's Acc holds nothing else)
    }
  }
  return LoadI64(rec);
}

void AggregateOp::ExtremeAcc(const char* rec, size_t a, Acc* acc) const {
  const char* p = rec + offset_[a];
  acc->count = LoadI64(p);
  if (acc->count == 0) return;
  if (IsArg(aggs_[a])) {
    const std::string_view form = InlineKey::ViewAt(p + 8);
    if (extreme_form_[a] == ExtremeForm::kNumPair)
      AddPair(acc, PairKeyOfForm(a, form), 1);
    else
      AddPair(acc, form, 1);
  } else {
    acc->values.Add(ExtremeResult(rec, a), 1);
  }
}

size_t AggregateOp::HeapBytes(const Acc& acc) {
  return acc.values.HeapBytes() + acc.pairs.HeapBytes() + (acc.wide ? sizeof(Acc::Wide) : 0) +
         acc.W().bits.capacity() * sizeof(int64_t);
}

void AggregateOp::AddPair(Acc* acc, std::string_view key, int64_t w) {
  acc->pairs.Add(key, w);
}

void AggregateOp::AppendPairKey(Value k, Value v, std::string* out) {
  thread_local std::vector<Value> row(2);
  row[0] = std::move(k);
  row[1] = std::move(v);
  AppendOrderKey(kPairOrder, row, out);
}

std::pair<Value, Value> AggregateOp::PairOf(const AggSpec& a, std::string_view key) const {
  const PhysType types[] = {in_types_[static_cast<size_t>(a.key)], in_types_[static_cast<size_t>(a.arg)]};
  thread_local std::vector<Value> row;  // (a vector per call was an allocation per result)
  RowOfOrderKeyInto(key, kPairOrder, types, &row);
  return {std::move(row[0]), std::move(row[1])};
}

void AggregateOp::StoreGroup(Shard& sh, int64_t rows, Acc* const* accs, const char* old_rec, std::string* rec) {
  rec->assign(record_bytes_, '\0');
  char* out = rec->data();
  std::memcpy(out, &rows, 8);
  for (size_t a = 0; a < aggs_.size(); ++a) {
    Acc& acc = *accs[a];
    char* p = out + offset_[a];
    switch (stored_[a]) {
      case Stored::kNothing:
      case Stored::kCount:
      case Stored::kCountInt:
      case Stored::kCountDouble:
      case Stored::kSumInt:
        WriteInline(out, a, acc.count, acc.isum, acc.dsum);
        break;
      case Stored::kExtremeNum:
      case Stored::kExtremeKey: {
        // The extreme of the values (pairs) the accumulator holds (from ReadGroup, or folded
        // by Fold when the group also has boxed accumulators).
        const AggSpec& spec = aggs_[a];
        if (old_rec) std::memcpy(p, old_rec + offset_[a], StoredFieldBytes(stored_[a]));
        if (acc.count < 0) DeletionFromInsertsOnly();
        const bool first = !old_rec || LoadI64(p) == 0;
        std::memcpy(p, &acc.count, 8);
        if (acc.count == 0) {
          if (!first) Fail(ErrorKind::kRuntime, "internal error: an aggregate's extreme lost its values");
          break;
        }
        std::string key;
        if (IsArg(spec)) {
          acc.pairs.ForEach([&](std::string_view k, int64_t w) {
            if (w > 0 && (key.empty() || KeyBeats(a, k, key))) key.assign(k);
          });
          if (extreme_form_[a] == ExtremeForm::kNumPair) key = FormOfPairKey(a, key);
        } else {
          std::vector<Value> row{spec.kind == AggKind::kMin ? acc.values.FirstPositive() : acc.values.LastPositive()};
          if (stored_[a] == Stored::kExtremeNum) {
            const Value& v = row[0];
            const uint64_t bits =
                v.kind == Value::Kind::kDouble ? std::bit_cast<uint64_t>(v.d) : static_cast<uint64_t>(v.i);
            std::memcpy(p + 8, &bits, 8);
            break;
          }
          if (extreme_form_[a] == ExtremeForm::kText)
            key = row[0].s;
          else
            AppendOrderKey(kPairOrder, row, &key);
        }
        // The caller writes the record over old_rec: the extreme it held is freed here.
        if (!first && InlineKey::ViewAt(p + 8) == key) break;
        if (!first) {
          sh.box_heap -= InlineKey::HeapBytesAt(p + 8);
          InlineKey::FreeAt(p + 8);
        }
        InlineKey::PlaceAt(p + 8, key);
        sh.box_heap += InlineKey::HeapBytesAt(p + 8);
        break;
      }
      case Stored::kBox: {
        uint32_t box;
        if (old_rec)
          std::memcpy(&box, old_rec + offset_[a], 4);
        else
          box = sh.boxes.Take();
        std::memcpy(p, &box, 4);
        Acc& b = sh.boxes[box];
        if (&b != &acc) {
          b = std::move(acc);
          acc = Acc{};
        }
        sh.box_heap += HeapBytes(b);
        break;
      }
      case Stored::kValues:
      case Stored::kPairs:
        // The record keeps the container alone: the rest of the Acc must be empty.
        if (acc.count != 0 || acc.isum != 0 || acc.dsum != 0 || acc.wide)
          Fail(ErrorKind::kRuntime, "internal error: a {} accumulator holds sums", AggName(aggs_[a].kind));
        if (stored_[a] == Stored::kValues) {
          sh.box_heap += HeapBytes(acc.values);
          PutSet(p, acc.values);
        } else {
          sh.box_heap += HeapBytes(acc.pairs);
          PutSet(p, acc.pairs);
        }
        break;
    }
  }
}

bool AggregateOp::KeyBeats(size_t a, std::string_view candidate, std::string_view current) const {
  switch (aggs_[a].kind) {
    case AggKind::kMin:
      return candidate < current;
    case AggKind::kMax:
    case AggKind::kArgMax:  // the largest pair
      return candidate > current;
    default: {
      // ARG_MIN: the smallest pair whose key is not NULL; pairs whose key is NULL (their order
      // key starts with 0) only when there is no other.
      const bool cnull = candidate[0] == 0, knull = current[0] == 0;
      return cnull != knull ? knull : candidate < current;
    }
  }
}

bool AggregateOp::RowBeats(size_t a, const Batch& b, size_t i, size_t j) const {
  const AggSpec& spec = aggs_[a];
  const Column& v = *b.cols[spec.arg];
  if (!IsArg(spec)) {
    const int c = CompareCellsAsOrderKeys(v, i, j);
    return spec.kind == AggKind::kMin ? c < 0 : c > 0;
  }
  const Column& k = *b.cols[spec.key];
  int c = CompareCellsAsOrderKeys(k, i, j);
  if (c == 0) c = CompareCellsAsOrderKeys(v, i, j);
  if (spec.kind == AggKind::kArgMax) return c > 0;
  const bool inull = k.IsNull(i), jnull = k.IsNull(j);  // as KeyBeats
  return inull != jnull ? jnull : c < 0;
}

bool AggregateOp::NumBeats(size_t a, uint64_t candidate, uint64_t current) const {
  const AggSpec& spec = aggs_[a];
  if (in_types_[static_cast<size_t>(spec.arg)] == PhysType::kF64) {
    candidate = OrderedDoubleBits(std::bit_cast<double>(candidate));
    current = OrderedDoubleBits(std::bit_cast<double>(current));
    return spec.kind == AggKind::kMin ? candidate < current : candidate > current;
  }
  const auto x = static_cast<int64_t>(candidate), y = static_cast<int64_t>(current);
  return spec.kind == AggKind::kMin ? x < y : x > y;
}

bool AggregateOp::FormBeats(size_t a, std::string_view candidate, std::string_view current) const {
  // KeyBeats compares the bytes of every form alike, but for ARG_MIN's NULL keys: a kNumPair
  // has none (its first byte may be 0), so the plain order.
  if (extreme_form_[a] == ExtremeForm::kNumPair && aggs_[a].kind == AggKind::kArgMin) return candidate < current;
  return KeyBeats(a, candidate, current);
}

namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;

// An integer's or a double's ordered bits (unsigned order = the values' order) <-> the value.
uint64_t OrderedBits(PhysType t, int64_t i, double d) {
  return t == PhysType::kF64 ? OrderedDoubleBits(d) : static_cast<uint64_t>(i) ^ kSignBit;
}
Value ValueOfOrderedBits(PhysType t, uint64_t bits) {
  return t == PhysType::kF64 ? Value::Double(DoubleOfOrderedBits(bits))
                             : Value::Int(static_cast<int64_t>(bits ^ kSignBit));
}

[[noreturn]] void NullInNotNullPair() {
  Fail(ErrorKind::kRuntime, "internal error: ARG_MIN/ARG_MAX over NOT NULL columns met a NULL");
}

// A value's (a cell's) ordered bits, big-endian, appended to *out: kNumPair's half.
void AppendOrderedBits(PhysType t, const Value& v, std::string* out) {
  if (v.IsNull()) NullInNotNullPair();
  AppendBigEndian64(OrderedBits(t, v.i, v.d), out);
}
void AppendOrderedBits(const Column& c, size_t r, std::string* out) {
  if (c.IsNull(r)) NullInNotNullPair();
  AppendBigEndian64(
      OrderedBits(c.phys, c.phys == PhysType::kI64 ? c.i64[r] : 0, c.phys == PhysType::kF64 ? c.f64[r] : 0), out);
}

}  // namespace

std::string AggregateOp::FormOfPairKey(size_t a, std::string_view pair_key) const {
  const AggSpec& spec = aggs_[a];
  const auto [k, v] = PairOf(spec, pair_key);
  std::string out;
  AppendOrderedBits(in_types_[static_cast<size_t>(spec.key)], k, &out);
  AppendOrderedBits(in_types_[static_cast<size_t>(spec.arg)], v, &out);
  return out;
}

std::string AggregateOp::PairKeyOfForm(size_t a, std::string_view form) const {
  const AggSpec& spec = aggs_[a];
  if (form.size() != 16)
    Fail(ErrorKind::kRuntime, "internal error: an ARG_MIN/ARG_MAX extreme of {} bytes", form.size());
  std::string out;
  AppendPairKey(ValueOfOrderedBits(in_types_[static_cast<size_t>(spec.key)], BigEndian64At(form.data())),
                ValueOfOrderedBits(in_types_[static_cast<size_t>(spec.arg)], BigEndian64At(form.data() + 8)), &out);
  return out;
}

void AggregateOp::ExtremeKeyOf(size_t a, const Batch& b, size_t r, std::string* out) const {
  switch (extreme_form_[a]) {
    case ExtremeForm::kOrderKey:
      return OrderKeyOf(a, b, r, out);
    case ExtremeForm::kText:
      out->append(b.cols[aggs_[a].arg]->str[r]);  // (a NULL never is an extreme)
      return;
    case ExtremeForm::kNumPair:
      AppendOrderedBits(*b.cols[aggs_[a].key], r, out);
      AppendOrderedBits(*b.cols[aggs_[a].arg], r, out);
      return;
  }
}

void AggregateOp::OrderKeyOf(size_t a, const Batch& b, size_t r, std::string* out) const {
  const AggSpec& spec = aggs_[a];
  const bool pair = IsPairs(spec);
  const Column* cols[] = {pair ? b.cols[spec.key].get() : b.cols[spec.arg].get(), b.cols[spec.arg].get()};
  AppendOrderKey(kPairOrder, std::span<const Column* const>(cols, pair ? 2 : 1), r, out);
}

Value AggregateOp::ExtremeResult(const char* rec, size_t a) const {
  const char* p = rec + offset_[a];
  if (LoadI64(p) == 0) return Value::Null();
  const AggSpec& spec = aggs_[a];
  const PhysType arg = in_types_[static_cast<size_t>(spec.arg)];
  if (stored_[a] == Stored::kExtremeNum) {
    uint64_t bits;
    std::memcpy(&bits, p + 8, 8);
    return arg == PhysType::kF64 ? Value::Double(std::bit_cast<double>(bits)) : Value::Int(static_cast<int64_t>(bits));
  }
  const std::string_view key = InlineKey::ViewAt(p + 8);
  if (extreme_form_[a] == ExtremeForm::kText) return Value::String(std::string(key));
  if (extreme_form_[a] == ExtremeForm::kNumPair) return ValueOfOrderedBits(arg, BigEndian64At(key.data() + 8));
  thread_local std::vector<Value> row;  // (its strings' buffers reused)
  if (IsArg(spec)) {
    const PhysType types[] = {in_types_[static_cast<size_t>(spec.key)], arg};
    RowOfOrderKeyInto(key, kPairOrder, types, &row);
    return row[1];
  }
  const PhysType types[] = {arg};
  RowOfOrderKeyInto(key, kPairOrder, types, &row);
  return row[0];
}

void AggregateOp::ReplaceExtremes(Shard& sh, char* stored, const char* rec) {
  for (size_t a = 0; a < aggs_.size(); ++a) {
    if (stored_[a] != Stored::kExtremeKey) continue;
    char* old = stored + offset_[a] + 8;
    const char* now = rec + offset_[a] + 8;
    if (std::memcmp(old, now, InlineKey::kBytes) == 0) continue;
    sh.box_heap += InlineKey::HeapBytesAt(now);
    sh.box_heap -= InlineKey::HeapBytesAt(old);
    InlineKey::FreeAt(old);
  }
}

void AggregateOp::FreeRecordHeap() {
  if (!records_own_heap_) return;
  for (Shard& sh : shards_) sh.groups.ForEachSlot([&](uint32_t slot) { FreeGroupHeap(sh, slot); });
}

void AggregateOp::AccIn(const Shard& sh, const char* rec, size_t a, AccView* view) const {
  const Stored st = stored_[a];
  Acc& tmp = view->tmp;
  if (st == Stored::kBox) {
    uint32_t box;
    std::memcpy(&box, rec + offset_[a], 4);
    const Acc& acc = sh.boxes[box];
    view->acc = &acc, view->values = &acc.values, view->pairs = &acc.pairs;
    return;
  }
  view->acc = &tmp, view->values = &tmp.values, view->pairs = &tmp.pairs;
  if (st == Stored::kValues) {
    view->values = &*view->lent_values.emplace(rec + offset_[a]);
  } else if (st == Stored::kPairs) {
    view->pairs = &*view->lent_pairs.emplace(rec + offset_[a]);
  } else if (IsExtreme(st)) {
    ExtremeAcc(rec, a, &tmp);
  } else {
    InlineAcc(rec, a, &tmp);
  }
}

void AggregateOp::FreeGroupHeap(Shard& sh, uint32_t slot) {
  const char* rec = sh.groups.Value(slot).data();
  for (size_t a = 0; a < aggs_.size(); ++a) {
    if (stored_[a] == Stored::kExtremeKey) {
      // (The record is leaving: not MutableValue, which would mark it changed.)
      char* key = const_cast<char*>(rec) + offset_[a] + 8;
      sh.box_heap -= InlineKey::HeapBytesAt(key);
      InlineKey::FreeAt(key);
    }
    char* field = const_cast<char*>(rec) + offset_[a];
    if (stored_[a] == Stored::kBox) {
      uint32_t box;
      std::memcpy(&box, field, 4);
      sh.box_heap -= HeapBytes(sh.boxes[box]);
      sh.boxes.Give(box);
    } else if (stored_[a] == Stored::kValues) {
      sh.box_heap -= HeapBytes(TakeSet<ValueMultiset>(field));
    } else if (stored_[a] == Stored::kPairs) {
      sh.box_heap -= HeapBytes(TakeSet<KeyWeights>(field));
    }
  }
}

void AggregateOp::EraseGroup(Shard& sh, uint32_t slot) {
  FreeGroupHeap(sh, slot);
  sh.stored.Erased(sh.groups.Key(slot));
  sh.groups.Erase(slot);
}

uint32_t AggregateOp::LoadStored(Shard& sh, std::string_view key) {
  // RestoreEntry puts it into ShardOf(key), which is sh.
  return sh.stored.Load(sh.groups, key, [&](const std::string& value) { RestoreEntry(key, value); });
}

bool AggregateOp::GroupRow(uint32_t shard, std::string_view key, uint32_t hash, std::string* row) {
  Shard& sh = shards_[shard];
  uint32_t slot = sh.groups.Find(key, hash);
  if (slot == ArenaMap::kNone) slot = LoadStored(sh, key);
  if (slot == ArenaMap::kNone) return false;
  const char* rec = sh.groups.Value(slot).data();
  const int64_t rows = LoadI64(rec);
  if (rows == 0) return false;
  row->assign(key);
  for (size_t a = 0; a < aggs_.size(); ++a) {
    if (IsExtreme(stored_[a])) {
      EncodeValue(row, ExtremeResult(rec, a));
      continue;
    }
    AccView r;
    AccIn(sh, rec, a, &r);
    EncodeValue(row, Result(aggs_[a], rows, *r.acc, *r.values, *r.pairs));
  }
  return true;
}

void AggregateOp::BackState(StateSource* source, uint32_t node, bool all_stored) {
  for (Shard& sh : shards_) sh.stored.Attach(source, node, all_stored);
}

void AggregateOp::StateCommitted(bool evict) {
  for (Shard& sh : shards_) {
    if (!sh.stored.Committed() || !evict) continue;
    const size_t n = sh.groups.EvictClean([&](uint32_t slot) { FreeGroupHeap(sh, slot); });
    sh.stored.Evicted(n);
    sh.boxes.ReleaseIfUnused();
  }
}

size_t AggregateOp::StateMemoryBytes() const {
  size_t n = 0;
  for (const Shard& sh : shards_) n += sh.groups.MemoryBytes() + sh.boxes.items.MemoryBytes() + sh.box_heap;
  return n;
}

const char* AggName(AggKind kind) {
  static const char* kNames[] = {"COUNT(*)", "COUNT",   "SUM",        "AVG",         "MIN",     "MAX",
                                 "ARG_MIN",  "ARG_MAX", "STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP",
                                 "BIT_AND",  "BIT_OR",  "BIT_XOR",    "ARRAY_AGG",   "MAP_AGG"};
  return kNames[static_cast<int>(kind)];
}

std::string AggregateOp::Describe() const {
  std::string s = fmt::format("{} keys=${}..${}", Name(), 0, num_keys_ - 1);
  if (num_keys_ == 0) s = Name();
  for (const auto& a : aggs_) {
    s += fmt::format(" {}", AggName(a.kind));
    if (a.kind != AggKind::kCountStar) {
      s += fmt::format("({}${}", a.distinct ? "DISTINCT " : "", a.arg);
      if (IsPairs(a)) s += fmt::format(", ${}", a.key);
      s += ")";
    }
    if (a.filter >= 0) s += fmt::format(" FILTER(${})", a.filter);
  }
  if (std::any_of(stored_.begin(), stored_.end(), IsExtreme)) s += " (input inserts only: keeps extremes)";
  const WaterlineIndex& gc = shards_[0].gc;
  if (gc.active()) s += fmt::format(" (discards groups below the waterline of ${})", gc.column());
  if (shards_.size() > 1) s += fmt::format(" ({} shards)", shards_.size());
  return s;
}

namespace {

// The result of AVG/STDDEV/VARIANCE, computed as a double, in the argument's type: integers
// truncate toward zero, decimals are truncated to their scale (as Feldera does).
Value InArgType(double x, const SqlType& t) {
  if (t.IsFloat()) return Value::Double(x);
  if (t.id == TypeId::kDecimal) x *= static_cast<double>(Pow10(t.scale));
  x = std::trunc(x);
  if (!(std::fabs(x) < 9.2e18)) Fail(ErrorKind::kRuntime, "aggregate result out of range");
  return Value::Int(static_cast<int64_t>(x));
}

// Variance from n, sum and sum of squares (of values in units of `scale` digits), or NULL.
Value Moment(AggKind kind, int64_t n, __int128 isum, __int128 isumsq, double dsum, double dsumsq, bool exact,
             const SqlType& t) {
  const bool samp = kind == AggKind::kStddevSamp || kind == AggKind::kVarSamp;
  if (n <= 0 || (samp && n < 2)) return Value::Null();
  const double denom = samp ? static_cast<double>(n) * static_cast<double>(n - 1) : static_cast<double>(n) * n;
  double var;
  if (t.IsInteger()) {
    // Feldera's integer formula: (sumsq - sum * sum / n) / (n or n - 1), both divisions
    // truncating; STDDEV is the square root of that, truncated.
    __int128 v = (isumsq - isum * isum / n) / (samp ? n - 1 : n);
    var = static_cast<double>(v);
  } else if (exact) {
    // n * sumsq - sum^2 is exact in 128 bits for any realistic data; only the last division rounds.
    __int128 num = static_cast<__int128>(n) * isumsq - isum * isum;
    double unit = t.id == TypeId::kDecimal ? static_cast<double>(Pow10(t.scale)) : 1.0;
    var = static_cast<double>(num) / denom / (unit * unit);
  } else {
    var = (static_cast<double>(n) * dsumsq - dsum * dsum) / denom;
  }
  if (var < 0) var = 0;  // rounding of the floating form
  const bool stddev = kind == AggKind::kStddevPop || kind == AggKind::kStddevSamp;
  return InArgType(stddev ? std::sqrt(var) : var, t);
}

// STDDEV / VARIANCE of DECIMAL(p > 18, s) values (value -> weight; each live value once when
// `distinct`), exact: with n values, sum S and sum of squares Q in units of 10^-s, the variance
// is (n Q - S^2) / (n (n - 1) or n^2) units^2, truncated to s digits, and STDDEV the square root,
// truncated.
Value WideMoment(AggKind kind, const ValueMultiset& values, bool distinct, const SqlType& t) {
  Int512 n, sum, sumsq;
  values.ForEach([&](const Value& v, int64_t wt) {
    if (wt <= 0) return;
    const Int512 x = Int512::Of(UnscaledDecimal(v, t)), w = Int512::Of(distinct ? 1 : wt);
    n = n + w;
    sum = sum + x * w;
    sumsq = sumsq + x * x * w;
  });
  return WideMomentOf(kind, n, sum, sumsq, t);
}

}  // namespace

Value MomentOf(AggKind kind, int64_t n, const Value& sum, const Value& sumsq, const SqlType& t) {
  if (n <= 0 || sum.IsNull() || sumsq.IsNull()) return Moment(kind, 0, 0, 0, 0, 0, false, t);
  if (t.IsFloat()) return Moment(kind, n, 0, 0, sum.d, sumsq.d, false, t);
  return Moment(kind, n, sum.i, sumsq.i, 0, 0, true, t);
}

Value WideMomentOf(AggKind kind, const Int512& n, const Int512& sum, const Int512& sumsq, const SqlType& t) {
  const bool samp = kind == AggKind::kStddevSamp || kind == AggKind::kVarSamp;
  const Int512 one = Int512::Of(1);
  if (n < one || (samp && n < Int512::Of(2))) return Value::Null();
  const Int512 num = n * sumsq - sum * sum;  // never negative
  const Int512 denom = n * (samp ? n - one : n);
  Int128 units = 0;  // (set by ToInt128, which cannot fail for a square root: see below)
  if (kind == AggKind::kStddevPop || kind == AggKind::kStddevSamp) {
    Int512::Sqrt(Int512::Div(num, denom)).ToInt128(&units);  // below 2^254: always fits
  } else if (!Int512::Div(num, denom * Int512::Of(Pow10Wide(t.scale))).ToInt128(&units) ||
             !DecimalFits(units, t.precision)) {
    Fail(ErrorKind::kRuntime, "DECIMAL overflow in {}: the variance does not fit {}", AggName(kind),
         t.WithNullable(true).ToString());
  }
  if (!DecimalFits(units, t.precision))
    Fail(ErrorKind::kRuntime, "DECIMAL overflow in {}: the result does not fit {}", AggName(kind),
         t.WithNullable(true).ToString());
  return DecimalValue(units, t);
}

Value MomentOfSums(AggKind kind, int64_t n, __int128 sum, __int128 sumsq, const SqlType& t) {
  return Moment(kind, n, sum, sumsq, 0, 0, true, t);
}

namespace {

Value BitsResult(AggKind kind, int64_t count, const std::vector<int64_t>& bits) {
  if (count == 0 || bits.empty()) return Value::Null();
  uint64_t r = 0;
  for (int b = 0; b < 64; ++b) {
    bool set = kind == AggKind::kBitAnd ? bits[b] == count : kind == AggKind::kBitOr ? bits[b] != 0 : (bits[b] & 1);
    if (set) r |= uint64_t{1} << b;
  }
  return Value::Int(static_cast<int64_t>(r));
}

}  // namespace

Value AverageOf(const SqlType& arg_type, int64_t n, int64_t isum, double dsum) {
  if (n == 0) return Value::Null();
  if (arg_type.phys() != PhysType::kI64) return Value::Double(dsum / static_cast<double>(n));
  // Exact integer division truncates toward zero.
  if (arg_type.IsExactNumeric()) return Value::Int(isum / n);
  const double x = arg_type.id == TypeId::kDecimal
                       ? static_cast<double>(isum) / static_cast<double>(Pow10(arg_type.scale))
                       : static_cast<double>(isum);
  return InArgType(x / static_cast<double>(n), arg_type);
}

namespace {

Value WideSumResult(Int128 sum, const SqlType& t) {
  if (!DecimalFits(sum, t.precision))
    Fail(ErrorKind::kRuntime, "DECIMAL overflow in SUM: the sum does not fit {}", t.WithNullable(true).ToString());
  return DecimalValue(sum, t);
}

}  // namespace

Value AggregateOp::Result(const AggSpec& a, int64_t rows, const Acc& acc, const ValueMultiset& values,
                          const KeyWeights& pairs) const {
  if (IsWideMoment(a)) return WideMoment(a.kind, values, a.distinct, a.arg_type);
  if (IsWideSum(a) || (a.kind == AggKind::kSum && a.result_type.IsWideDecimal())) {
    // 128-bit sums: over wide decimals in wsum, over narrow ones in isum.
    int64_t n = acc.count;
    Int128 sum = IsWideSum(a) ? acc.W().wsum : acc.isum;
    if (a.distinct) {
      n = 0;
      sum = 0;
      values.ForEach([&](const Value& v, int64_t w) {
        if (w > 0) {
          ++n;
          sum += UnscaledDecimal(v, a.arg_type);
        }
      });
    }
    if (n == 0) return Value::Null();
    if (a.kind == AggKind::kSum) return WideSumResult(sum, a.result_type);
    return DecimalValue(sum / n, a.arg_type);  // AVG truncates to the argument's scale
  }
  const bool exact = a.arg_type.phys() == PhysType::kI64;
  auto avg = [&](int64_t n, int64_t isum, double dsum) { return AverageOf(a.arg_type, n, isum, dsum); };
  if (a.distinct && UsesMultiset(a) && a.kind != AggKind::kMin && a.kind != AggKind::kMax) {
    int64_t n = 0, isum = 0;
    __int128 isumsq = 0;
    double dsum = 0, dsumsq = 0;
    uint64_t bxor = 0;
    std::vector<Value> distinct;
    values.ForEach([&](const Value& v, int64_t w) {
      if (w <= 0) return;
      ++n;
      if (a.kind == AggKind::kArrayAgg) {
        distinct.push_back(v);
        return;
      }
      if (exact) {
        if (__builtin_add_overflow(isum, v.i, &isum)) SumOverflow();
        isumsq += static_cast<__int128>(v.i) * v.i;
        bxor ^= static_cast<uint64_t>(v.i);
      } else {
        dsum += v.d;
        dsumsq += v.d * v.d;
      }
    });
    switch (a.kind) {
      case AggKind::kCount:
        return Value::Int(n);
      case AggKind::kSum:
        if (n == 0) return Value::Null();
        return exact ? Value::Int(isum) : Value::Double(dsum);
      case AggKind::kAvg:
        return avg(n, isum, dsum);
      case AggKind::kStddevPop:
      case AggKind::kStddevSamp:
      case AggKind::kVarPop:
      case AggKind::kVarSamp:
        return Moment(a.kind, n, isum, isumsq, dsum, dsumsq, exact, a.arg_type);
      case AggKind::kBitXor:
        return n == 0 ? Value::Null() : Value::Int(static_cast<int64_t>(bxor));
      case AggKind::kArrayAgg:
        return Value::String(EncodeArrayValue(distinct, a.arg_type));
      default:
        break;
    }
  }
  switch (a.kind) {
    case AggKind::kCountStar:
      return Value::Int(a.filter >= 0 ? acc.count : rows);
    case AggKind::kCount:
      return Value::Int(acc.count);
    case AggKind::kSum:
      if (acc.count == 0) return Value::Null();
      return exact ? Value::Int(acc.isum) : Value::Double(acc.dsum);
    case AggKind::kAvg:
      return avg(acc.count, acc.isum, acc.dsum);
    case AggKind::kMin:
      return values.FirstPositive();
    case AggKind::kMax:
      return values.LastPositive();
    case AggKind::kArgMin: {
      // Rows whose key is NULL count only when no row has a key (NULL sorts first: its order
      // key's first byte is 0, a value's is not; so start at the smallest non-NULL key, then
      // fall back to the NULL keys).
      auto k = pairs.FirstPositive(std::string_view("\x01", 1));
      if (!k) k = pairs.FirstPositive();
      return k ? PairOf(a, *k).second : Value::Null();
    }
    case AggKind::kArgMax: {
      const auto k = pairs.LastPositive();
      return k ? PairOf(a, *k).second : Value::Null();
    }
    case AggKind::kStddevPop:
    case AggKind::kStddevSamp:
    case AggKind::kVarPop:
    case AggKind::kVarSamp:
      return Moment(a.kind, acc.count, acc.isum, acc.W().isumsq, acc.dsum, acc.W().dsumsq, exact, a.arg_type);
    case AggKind::kBitAnd:
    case AggKind::kBitOr:
    case AggKind::kBitXor:
      return BitsResult(a.kind, acc.count, acc.W().bits);
    case AggKind::kArrayAgg: {
      std::vector<Value> elements;
      pairs.ForEach([&](std::string_view key, int64_t w) {
        if (w <= 0) return;
        const Value v = PairOf(a, key).second;
        for (int64_t k = 0; k < w; ++k) elements.push_back(v);
      });
      return Value::String(EncodeArrayValue(elements, a.arg_type));
    }
    case AggKind::kMapAgg: {
      // Pairs are sorted by (key, value): the last live pair of a key holds its largest value.
      std::vector<std::pair<Value, Value>> entries;
      pairs.ForEach([&](std::string_view key, int64_t w) {
        if (w <= 0) return;
        auto kv = PairOf(a, key);
        if (kv.first.IsNull()) return;
        if (!entries.empty() && entries.back().first == kv.first)
          entries.back().second = kv.second;
        else
          entries.push_back(kv);
      });
      return Value::String(EncodeMapValue(std::move(entries), a.result_type));
    }
  }
  return Value::Null();
}

void AggregateOp::Fold(Acc* const* accs, const Sums* part) const {
  for (size_t a = 0; a < aggs_.size(); ++a) {
    Acc& dst = *accs[a];
    const Sums& src = part[a];
    dst.count += src.count;
    if (__builtin_add_overflow(dst.isum, src.isum, &dst.isum)) SumOverflow();
    dst.dsum += src.dsum;
    if (const Acc::Wide* sw = src.wide.get()) {
      Acc::Wide& dw = dst.wide.Get();
      if (__builtin_add_overflow(dw.wsum, sw->wsum, &dw.wsum)) SumOverflow();
      dw.isumsq += sw->isumsq;
      dw.dsumsq += sw->dsumsq;
      if (!sw->bits.empty()) {
        if (dw.bits.empty()) dw.bits.assign(64, 0);
        for (int b = 0; b < 64; ++b) dw.bits[b] += sw->bits[b];
      }
    }
  }
}

Batch AggregateOp::Step(std::span<const Batch* const> inputs) {
  const Batch& in = *inputs[0];
  const uint32_t shards = static_cast<uint32_t>(shards_.size());
  if (shards == 1) {
    BatchBuilder out(out_types_);
    StepShard(shards_[0], in, pool_, &out, nullptr);
    if (!in.empty()) initialized_ = true;
    return out.Finish();
  }
  if (in.empty()) {
    for (Shard& sh : shards_) DiscardBelow(sh);
    return EmptyBatch(out_types_);
  }
  {
    // A batch over few small integer keys (the slice path) is pre-aggregated by all workers in
    // slices, as without shards; its few groups then go to their shards on this thread.
    std::vector<std::string> keys;
    Partials partial;
    if (SmallKeyPreaggregate(in, pool_, &keys, &partial)) {
      BatchBuilder out(out_types_);
      FoldGroups(nullptr, keys, partial, &out, nullptr);
      for (Shard& sh : shards_) DiscardBelow(sh);
      initialized_ = true;
      return out.Finish();
    }
  }
  // Exchange: each shard steps over the rows of its keys; then the outputs merge in key order.
  std::vector<int> key_cols(static_cast<size_t>(num_keys_));
  for (int k = 0; k < num_keys_; ++k) key_cols[k] = k;
  const auto rows = PartitionRows(in, key_cols, shards);
  std::vector<Batch> outs(shards);
  std::vector<std::vector<std::pair<std::string, uint32_t>>> emitted(shards);
  pool_->ParallelFor(shards, [&](size_t s) {
    // (Into a vector of this thread's: the shards' vectors lie next to each other, and growing
    // them in place made the workers write one cache line row after row.)
    std::vector<std::pair<std::string, uint32_t>> keys;
    BatchBuilder b(out_types_);
    if (rows[s].size() == in.size())
      StepShard(shards_[s], in, nullptr, &b, &keys);
    else
      StepShard(shards_[s], Gather(in, rows[s]), nullptr, &b, &keys);
    outs[s] = b.Finish();
    emitted[s] = std::move(keys);
  });
  initialized_ = true;
  return GatherRows(outs, MergeByKey(emitted), out_types_, pool_);
}

void AggregateOp::StepShard(Shard& sh, const Batch& in, ThreadPool* pool, BatchBuilder* out_rows,
                            std::vector<std::pair<std::string, uint32_t>>* emitted) {
  const size_t n = in.size();
  BatchBuilder& out = *out_rows;
  if (n == 0 && (num_keys_ > 0 || initialized_)) {
    DiscardBelow(sh);
    return;
  }

  std::vector<std::string> keys;
  Partials partial;
  if (!SmallKeyPreaggregate(in, pool, &keys, &partial)) {
    // 1. Assign each row a dense group id; remember each group's key encoding.
    std::vector<uint32_t> gid(n);
    bool fast = false;
    if (num_keys_ == 1 && in.cols[0]->phys == PhysType::kI64 && !in.cols[0]->HasNulls() && n > 0) {
      const int64_t* k = in.cols[0]->i64.data();
      int64_t lo = k[0], hi = k[0];
      for (size_t i = 1; i < n; ++i) {
        lo = std::min(lo, k[i]);
        hi = std::max(hi, k[i]);
      }
      if (static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) < 65536) {
        fast = true;
        std::vector<int32_t> slot(static_cast<size_t>(hi - lo) + 1, -1);
        for (size_t i = 0; i < n; ++i) {
          int32_t& s = slot[static_cast<size_t>(k[i] - lo)];
          if (s < 0) {
            s = static_cast<int32_t>(keys.size());
            keys.emplace_back();
            EncodeValue(&keys.back(), Value::Int(k[i]));
          }
          gid[i] = static_cast<uint32_t>(s);
        }
      }
    }
    if (!fast) {
      // Group ids by key: a flat open-addressing table of ids (at most half full), no node per key.
      size_t cap = 16;
      while (cap < 2 * n) cap *= 2;
      std::vector<uint32_t> ids(cap, UINT32_MAX);
      std::string key;
      for (size_t i = 0; i < n; ++i) {
        key.clear();
        for (int c = 0; c < num_keys_; ++c) EncodeValue(&key, *in.cols[c], i);
        size_t at = ArenaMap::Hash(key) & (cap - 1);
        while (ids[at] != UINT32_MAX && keys[ids[at]] != key) at = (at + 1) & (cap - 1);
        if (ids[at] == UINT32_MAX) {
          ids[at] = static_cast<uint32_t>(keys.size());
          keys.push_back(key);
        }
        gid[i] = ids[at];
      }
    }
    if (num_keys_ == 0 && keys.empty()) keys.emplace_back();  // global: the one group exists

    // 2. Pre-aggregate the batch per group, one tight loop per aggregate.
    const size_t ng = keys.size();
    const int64_t* w = in.weights.data();
    if (all_inline_) {
      partial.flat.assign(ng * record_bytes_, '\0');
      char* flat = partial.flat.data();
      for (size_t i = 0; i < n; ++i) AddI64(flat + gid[i] * record_bytes_, w[i]);
      for (size_t a = 0; a < aggs_.size(); ++a) PreaggregateFlat(a, in, gid, flat);
    } else {
      partial.rows.assign(ng, 0);
      partial.sums.resize(ng * aggs_.size());
      for (size_t i = 0; i < n; ++i) partial.rows[gid[i]] += w[i];
      for (size_t a = 0; a < aggs_.size(); ++a) Preaggregate(a, in, gid, &partial.sums);
      if (std::any_of(aggs_.begin(), aggs_.end(), [](const AggSpec& s) { return KeepsValues(s); })) {
        // The batch's rows by group, in batch order (a counting sort of gid): the aggregates that
        // keep values take them straight into the group's containers, not through partial
        // containers built and merged per group (FoldRows).
        partial.group_rows.assign(ng + 1, 0);
        for (size_t i = 0; i < n; ++i) ++partial.group_rows[gid[i] + 1];
        for (size_t g = 0; g < ng; ++g) partial.group_rows[g + 1] += partial.group_rows[g];
        partial.rows_by_group.resize(n);
        std::vector<uint32_t> at(partial.group_rows.begin(), partial.group_rows.end() - 1);
        for (size_t i = 0; i < n; ++i) partial.rows_by_group[at[gid[i]]++] = static_cast<uint32_t>(i);
      }
    }
  }
  partial.batch = &in;
  FoldGroups(&sh, keys, partial, &out, emitted);
  if (num_keys_ == 0) initialized_ = true;  // (keyed: Step sets it; shards run in parallel)
  DiscardBelow(sh);
}

void AggregateOp::DiscardBelow(Shard& sh) {
  for (auto& key : sh.gc.TakeBelow()) {
    uint32_t slot = sh.groups.Find(key);
    if (slot != ArenaMap::kNone)
      EraseGroup(sh, slot);
    else
      sh.stored.EraseStoreOnly(std::move(key));
  }
}

namespace {
// The hashes (ArenaMap::Hash) of keys[order[i]].
std::vector<uint32_t> HashesInOrder(const std::vector<std::string>& keys, const std::vector<uint32_t>& order) {
  std::vector<uint32_t> h(order.size());
  for (size_t i = 0; i < order.size(); ++i) h[i] = ArenaMap::Hash(keys[order[i]]);
  return h;
}
}  // namespace

AggregateOp::Lookahead::Lookahead(AggregateOp* op, Shard* only, const std::vector<std::string>& keys,
                                  const std::vector<uint32_t>& order, bool boxes, const Partials* flat)
    : hashes(HashesInOrder(keys, order)),
      shards(ShardsOf(op, only, keys, order)),
      op_(op),
      keys_(keys),
      order_(order),
      flat_(flat != nullptr && op->has_extreme_keys_ && flat->batch != nullptr ? flat : nullptr),
      bursts_(order.size(),
              !boxes         ? 2
              : op->has_box_ ? 4
                             : 3,
              Fetch{this}) {}

std::vector<AggregateOp::Shard*> AggregateOp::Lookahead::ShardsOf(AggregateOp* op, Shard* only,
                                                                  const std::vector<std::string>& keys,
                                                                  const std::vector<uint32_t>& order) {
  std::vector<Shard*> s(order.size(), only);
  if (only == nullptr)
    for (size_t i = 0; i < order.size(); ++i) s[i] = &op->ShardOf(keys[order[i]]);
  return s;
}

void AggregateOp::Lookahead::Run(Stage stage, size_t j) {
  Shard& sh = *shards[j];
  if (flat_ != nullptr) {
    const char* part = flat_->flat.data() + static_cast<size_t>(order_[j]) * op_->record_bytes_;
    if (stage == kSlots) {
      fld::Prefetch(part);
      fld::Prefetch(part + op_->record_bytes_ - 1);
    } else if (stage == kRecords) {  // the partial is in cache: the cells of its extremes' rows
      for (size_t a = 0; a < op_->aggs_.size(); ++a) {
        if (op_->stored_[a] != Stored::kExtremeKey || LoadI64(part + op_->offset_[a]) == 0) continue;
        uint32_t r;
        std::memcpy(&r, part + op_->offset_[a] + 8, 4);
        const AggSpec& spec = op_->aggs_[a];
        auto cell = [&](int c) {
          const Column& col = *flat_->batch->cols[static_cast<size_t>(c)];
          if (col.phys == PhysType::kStr)
            fld::Prefetch(&col.str[r]);
          else
            fld::Prefetch(col.phys == PhysType::kI64 ? static_cast<const void*>(&col.i64[r]) : &col.f64[r]);
        };
        cell(spec.arg);
        if (IsArg(spec)) cell(spec.key);
      }
    }
  }
  if (stage == kSlots) return sh.groups.Prefetch(hashes[j]);
  // (A record: two length bytes, most often, then the key and the fixed-width value.)
  if (stage == kRecords) return sh.groups.PrefetchRecord(hashes[j], 2 + keys_[order_[j]].size() + op_->record_bytes_);
  // The record is in cache by now: its sets' and boxes' addresses can be read.
  const uint32_t slot = sh.groups.Find(keys_[order_[j]], hashes[j]);
  if (slot == ArenaMap::kNone) return;
  const char* rec = sh.groups.Value(slot).data();
  for (size_t a = 0; a < op_->aggs_.size(); ++a) {
    const Stored st = op_->stored_[a];
    const char* field = rec + op_->offset_[a];
    // A set in the record: its entries, at the first stage that can (kBoxes).
    if (st == Stored::kValues || st == Stored::kPairs) {
      if (stage != kBoxes) continue;
      if (st == Stored::kValues)
        Lent<ValueMultiset>(field)->Prefetch();
      else
        Lent<KeyWeights>(field)->Prefetch();
      continue;
    }
    if (st != Stored::kBox) continue;
    uint32_t box;
    std::memcpy(&box, field, 4);
    const Acc& acc = sh.boxes[box];
    if (stage == kBoxes) {  // the box's bytes (it need not start a cache line)
      const char* c = reinterpret_cast<const char*>(&acc);
      for (size_t at = 0; at < sizeof(Acc); at += 64) fld::Prefetch(c + at);
      fld::Prefetch(c + sizeof(Acc) - 1);
    } else {  // its containers' entries
      acc.values.Prefetch();
      acc.pairs.Prefetch();
    }
  }
}

void AggregateOp::FoldGroups(Shard* only, const std::vector<std::string>& keys, const Partials& partials,
                             BatchBuilder* out_rows, std::vector<std::pair<std::string, uint32_t>>* emitted) {
  BatchBuilder& out = *out_rows;
  const size_t ng = keys.size();
  // 3. Fold partials into state in key order; emit old/new rows of each changed group.
  const std::vector<uint32_t> order = SortedByBytes(ng, [&](size_t g) { return std::string_view(keys[g]); });
  if (all_inline_) return FoldInline(only, keys, partials, order, out_rows, emitted);
  const size_t A = aggs_.size();
  std::vector<Value> old_row, new_row;
  // The group being updated: its row count and accumulators, updated where they are (boxes) or
  // in scratch (inline and extreme fields, a new group's).
  int64_t rows = 0;
  std::vector<Acc> scratch(A);
  std::vector<Acc*> accs(A);
  // Into the row vectors kept across groups (a fresh vector per row was three allocations).
  auto row_of = [&](const std::string& key, std::vector<Value>* row) {
    row->clear();
    DecodeRowInto(key, row);
    for (size_t a = 0; a < A; ++a) row->push_back(Result(aggs_[a], rows, *accs[a]));
  };
  std::string rec;
  Lookahead ahead(this, only, keys, order, /*boxes=*/true);
  for (size_t i = 0; i < order.size(); ++i) {
    ahead.Prefetch(i);
    const uint32_t g = order[i];
    fld::Prefetch(&partials.sums[g * A]);
    const std::string& key = keys[g];
    Shard& sh = *ahead.shards[i];
    uint32_t slot = sh.groups.Find(key, ahead.hashes[i]);
    if (slot == ArenaMap::kNone) slot = LoadStored(sh, key);
    if (slot != ArenaMap::kNone) {
      rows = ViewGroup(sh, sh.groups.MutableValue(slot), &scratch, &accs);
    } else {
      rows = 0;
      for (size_t a = 0; a < A; ++a) {
        scratch[a] = Acc{};
        accs[a] = &scratch[a];
      }
    }
    bool had = slot != ArenaMap::kNone && (rows != 0 || num_keys_ == 0);
    if (num_keys_ == 0 && !initialized_) had = false;
    if (had) row_of(key, &old_row);
    rows += partials.rows[g];
    Fold(accs.data(), &partials.sums[g * A]);
    if (!partials.group_rows.empty()) {
      const std::span<const uint32_t> batch_rows(partials.rows_by_group.data() + partials.group_rows[g],
                                                 partials.group_rows[g + 1] - partials.group_rows[g]);
      for (size_t a = 0; a < A; ++a)
        if (KeepsValues(aggs_[a])) FoldRows(a, *partials.batch, batch_rows, accs[a]);
    }
    bool has = rows != 0 || num_keys_ == 0;
    if (has) row_of(key, &new_row);
    if (has && slot == ArenaMap::kNone) {
      StoreGroup(sh, rows, accs.data(), nullptr, &rec);
      sh.groups.Insert(key, rec);
      sh.gc.Added(key);
    } else if (has) {
      StoreGroup(sh, rows, accs.data(), sh.groups.Value(slot).data(), &rec);
      std::memcpy(sh.groups.MutableValue(slot), rec.data(), rec.size());
    } else if (slot != ArenaMap::kNone) {
      // The record as it now is (its extremes' keys), so that erasing frees what it holds.
      StoreGroup(sh, rows, accs.data(), sh.groups.Value(slot).data(), &rec);
      std::memcpy(sh.groups.MutableValue(slot), rec.data(), rec.size());
      sh.gc.Removed(key);
      EraseGroup(sh, slot);
    }
    if (had && has && old_row == new_row) continue;
    if (had) out.AppendRow(old_row, -1);
    if (has) out.AppendRow(new_row, +1);
    if (emitted) emitted->emplace_back(key, (had ? 1 : 0) + (has ? 1 : 0));
  }
}

void AggregateOp::FoldInline(Shard* only, const std::vector<std::string>& keys, const Partials& partials,
                             const std::vector<uint32_t>& order, BatchBuilder* out_rows,
                             std::vector<std::pair<std::string, uint32_t>>* emitted) {
  BatchBuilder& out = *out_rows;
  const size_t A = aggs_.size();
  std::vector<Acc> scratch(A);  // results are computed from accumulators set from each record
  std::vector<Value> old_vals(A), new_vals(A);
  std::string rec(record_bytes_, '\0');
  const std::vector<char>& flat = partials.flat;
  auto results = [&](const char* r, std::vector<Value>* vals) {
    const int64_t rows = LoadI64(r);
    for (size_t a = 0; a < A; ++a) {
      if (IsExtreme(stored_[a])) {
        (*vals)[a] = ExtremeResult(r, a);
        continue;
      }
      Acc& acc = scratch[a];
      InlineAcc(r, a, &acc);
      (*vals)[a] = Result(aggs_[a], rows, acc);
    }
  };
  auto emit = [&](const std::string& key, const std::vector<Value>& vals, int64_t w) {
    DecodeRowInto(key, &out, 0);
    for (size_t a = 0; a < A; ++a) out.col(static_cast<size_t>(num_keys_) + a).Append(vals[a]);
    out.AddWeight(w);
  };
  const size_t n = order.size();
  Lookahead ahead(this, only, keys, order, /*boxes=*/false, &partials);
  for (size_t i = 0; i < n; ++i) {
    ahead.Prefetch(i);
    const uint32_t g = order[i];
    const std::string& key = keys[g];
    Shard& sh = *ahead.shards[i];
    uint32_t slot = sh.groups.Find(key, ahead.hashes[i]);
    if (slot == ArenaMap::kNone) slot = LoadStored(sh, key);
    if (slot != ArenaMap::kNone)
      std::memcpy(rec.data(), sh.groups.Value(slot).data(), record_bytes_);
    else
      std::fill(rec.begin(), rec.end(), '\0');
    int64_t rows;
    std::memcpy(&rows, rec.data(), 8);
    bool had = slot != ArenaMap::kNone && (rows != 0 || num_keys_ == 0);
    if (num_keys_ == 0 && !initialized_) had = false;
    if (had) results(rec.data(), &old_vals);
    // Fold: the same additions as Fold, field by field of the two records.
    AddRecord(rec.data(), flat.data() + static_cast<size_t>(g) * record_bytes_, sh, partials.batch);
    rows = LoadI64(rec.data());
    const bool has = rows != 0 || num_keys_ == 0;
    if (has) results(rec.data(), &new_vals);
    if (has && slot == ArenaMap::kNone) {
      if (has_extreme_keys_)
        for (size_t a = 0; a < A; ++a)
          if (stored_[a] == Stored::kExtremeKey) sh.box_heap += InlineKey::HeapBytesAt(rec.data() + offset_[a] + 8);
      sh.groups.Insert(key, rec);
      sh.gc.Added(key);
    } else if (has) {
      if (has_extreme_keys_) ReplaceExtremes(sh, sh.groups.MutableValue(slot), rec.data());
      std::memcpy(sh.groups.MutableValue(slot), rec.data(), record_bytes_);
    } else if (slot != ArenaMap::kNone) {
      if (has_extreme_keys_) ReplaceExtremes(sh, sh.groups.MutableValue(slot), rec.data());
      std::memcpy(sh.groups.MutableValue(slot), rec.data(), record_bytes_);
      sh.gc.Removed(key);
      EraseGroup(sh, slot);
    }
    if (had && has && old_vals == new_vals) continue;
    if (had) emit(key, old_vals, -1);
    if (has) emit(key, new_vals, +1);
    if (emitted) emitted->emplace_back(key, (had ? 1 : 0) + (has ? 1 : 0));
  }
}

void AggregateOp::Preaggregate(size_t a, const Batch& in, const std::vector<uint32_t>& gid,
                               std::vector<Sums>* sums) const {
  const AggSpec& spec = aggs_[a];
  const size_t A = aggs_.size();
  // The sums of aggregate a in group gid[i].
  auto part = [&, s = sums->data()](size_t i) -> Sums& { return s[gid[i] * A + a]; };
  const size_t n = in.size();
  const int64_t* w = in.weights.data();
  // FILTER (WHERE c): only rows where c is TRUE take part.
  std::vector<uint8_t> skip;
  if (spec.filter >= 0) {
    const Column& f = *in.cols[spec.filter];
    skip.resize(n);
    for (size_t i = 0; i < n; ++i) skip[i] = FilteredOut(&f, i);
  }
  auto skipped = [&](size_t i) { return !skip.empty() && skip[i]; };
  if (spec.kind == AggKind::kCountStar) {
    if (spec.filter < 0) return;  // the group's row count
    for (size_t i = 0; i < n; ++i)
      if (!skipped(i)) part(i).count += w[i];
    return;
  }
  const Column& col = *in.cols[spec.arg];
  if (IsExtreme(stored_[a])) {
    // Only inserts: the count of values (MIN/MAX: non-NULL ones; ARG_*: rows), folded with
    // every value or pair of the batch; StoreGroup keeps the extreme.
    for (size_t i = 0; i < n; ++i) {
      if (w[i] < 0) DeletionFromInsertsOnly();
      if (w[i] == 0 || skipped(i) || (!IsArg(spec) && col.IsNull(i))) continue;
      part(i).count += w[i];
    }
  }
  if (KeepsValues(spec)) return;  // FoldRows adds them to the group itself

  const bool has_nulls = col.HasNulls();
  if (IsWideSum(spec)) {
    for (size_t i = 0; i < n; ++i) {
      if (skipped(i) || (has_nulls && col.nulls[i])) continue;
      Sums& acc = part(i);
      acc.count += w[i];
      Int128 prod;
      Int128& wsum = acc.wide.Get().wsum;
      if (__builtin_mul_overflow(DecodeInt128(col.str[i]), static_cast<Int128>(w[i]), &prod) ||
          __builtin_add_overflow(wsum, prod, &wsum))
        Fail(ErrorKind::kRuntime, "DECIMAL overflow in SUM: the sum does not fit {}",
             spec.result_type.WithNullable(true).ToString());
    }
    return;
  }
  if (IsBits(spec)) {
    const int64_t* x = col.i64.data();
    for (size_t i = 0; i < n; ++i) {
      if (skipped(i) || (has_nulls && col.nulls[i])) continue;
      Sums& acc = part(i);
      acc.count += w[i];
      std::vector<int64_t>& bits = acc.wide.Get().bits;
      if (bits.empty()) bits.assign(64, 0);
      const uint64_t v = static_cast<uint64_t>(x[i]);
      for (int b = 0; b < 64; ++b)
        if ((v >> b) & 1) bits[b] += w[i];
    }
    return;
  }
  const bool moments = IsMoment(spec);
  if (col.phys == PhysType::kI64) {
    const int64_t* x = col.i64.data();
    const bool need_sum = spec.kind != AggKind::kCount;
    for (size_t i = 0; i < n; ++i) {
      if (skipped(i) || (has_nulls && col.nulls[i])) continue;
      Sums& acc = part(i);
      acc.count += w[i];
      if (need_sum) {
        int64_t prod;
        if (__builtin_mul_overflow(w[i], x[i], &prod) || __builtin_add_overflow(acc.isum, prod, &acc.isum))
          SumOverflow();
      }
      if (moments) acc.wide.Get().isumsq += static_cast<__int128>(x[i]) * x[i] * w[i];
    }
  } else if (col.phys == PhysType::kF64) {
    const double* x = col.f64.data();
    for (size_t i = 0; i < n; ++i) {
      if (skipped(i) || (has_nulls && col.nulls[i])) continue;
      Sums& acc = part(i);
      acc.count += w[i];
      acc.dsum += static_cast<double>(w[i]) * x[i];
      if (moments) acc.wide.Get().dsumsq += static_cast<double>(w[i]) * x[i] * x[i];
    }
  } else {
    for (size_t i = 0; i < n; ++i)
      if (!skipped(i) && !col.IsNull(i)) part(i).count += w[i];
  }
}

void AggregateOp::FoldRows(size_t a, const Batch& in, std::span<const uint32_t> rows, Acc* into) const {
  const AggSpec& spec = aggs_[a];
  const Column* f = spec.filter >= 0 ? in.cols[spec.filter].get() : nullptr;
  const Column& col = *in.cols[spec.arg];
  const int64_t* w = in.weights.data();
  if (IsPairs(spec)) {
    std::string enc;
    for (uint32_t i : rows) {
      if (FilteredOut(f, i)) continue;
      enc.clear();
      OrderKeyOf(a, in, i, &enc);
      AddPair(into, enc, w[i]);
    }
    return;
  }
  const bool keep_nulls = spec.kind == AggKind::kArrayAgg;  // ARRAY_AGG lists NULLs too
  for (uint32_t i : rows) {
    if (FilteredOut(f, i) || (col.IsNull(i) && !keep_nulls)) continue;
    into->values.Add(col, i, w[i]);
  }
}

void AggregateOp::AddRecord(char* into, const char* part, Shard& sh, const Batch* rows) {
  AddI64(into, LoadI64(part));   // the row count
  thread_local std::string key;  // (one buffer for every group of every step)
  for (size_t a = 0; a < aggs_.size(); ++a) {
    char* q = into + offset_[a];
    const char* p = part + offset_[a];
    switch (stored_[a]) {
      case Stored::kNothing:
      case Stored::kBox:
      case Stored::kValues:
      case Stored::kPairs:
        break;
      case Stored::kExtremeNum: {
        const int64_t n = LoadI64(p);
        if (n == 0) break;
        uint64_t x, cur;
        std::memcpy(&x, p + 8, 8);
        std::memcpy(&cur, q + 8, 8);
        if (LoadI64(q) == 0 || NumBeats(a, x, cur)) std::memcpy(q + 8, &x, 8);
        AddI64(q, n);
        break;
      }
      case Stored::kExtremeKey: {
        const int64_t n = LoadI64(p);
        if (n == 0) break;
        uint32_t r;
        std::memcpy(&r, p + 8, 4);
        key.clear();
        ExtremeKeyOf(a, *rows, r, &key);
        // (into is a copy of the stored record, which still owns the extreme it replaces:
        // ReplaceExtremes frees it when the copy is written back.)
        if (LoadI64(q) == 0 || FormBeats(a, key, InlineKey::ViewAt(q + 8))) InlineKey::PlaceAt(q + 8, key);
        AddI64(q, n);
        break;
      }
      case Stored::kCount:
        AddI64(q, LoadI64(p));
        break;
      case Stored::kCountInt:
        AddI64(q, LoadI64(p));
        AddSum(q + 8, LoadI64(p + 8));
        break;
      case Stored::kCountDouble: {
        AddI64(q, LoadI64(p));
        double x;
        std::memcpy(&x, p + 8, 8);
        AddF64(q + 8, x);
        break;
      }
      case Stored::kSumInt:
        AddSum(q, LoadI64(p));
        break;
    }
  }
}

void AggregateOp::PreaggregateFlat(size_t a, const Batch& in, const std::vector<uint32_t>& gid, char* flat) const {
  // The inline kinds' cases of Preaggregate, on the records' fields.
  const AggSpec& spec = aggs_[a];
  if (stored_[a] == Stored::kNothing) return;  // COUNT(*): the row count
  const size_t n = in.size(), R = record_bytes_;
  const int64_t* w = in.weights.data();
  char* field = flat + offset_[a];
  const Column* f = spec.filter >= 0 ? in.cols[spec.filter].get() : nullptr;
  auto skipped = [&](size_t i) { return FilteredOut(f, i); };
  if (spec.kind == AggKind::kCountStar) {
    for (size_t i = 0; i < n; ++i)
      if (!skipped(i)) AddI64(field + gid[i] * R, w[i]);
    return;
  }
  const Column& col = *in.cols[spec.arg];
  const bool has_nulls = col.HasNulls();
  if (IsExtreme(stored_[a])) {
    // Count, and the extreme so far: the value itself (kExtremeNum) or its row (kExtremeKey).
    const bool num = stored_[a] == Stored::kExtremeNum, arg = IsArg(spec);
    for (size_t i = 0; i < n; ++i) {
      if (w[i] < 0) DeletionFromInsertsOnly();
      if (w[i] == 0 || skipped(i) || (!arg && has_nulls && col.nulls[i])) continue;
      char* p = field + gid[i] * R;
      const bool first = LoadI64(p) == 0;
      AddI64(p, w[i]);
      if (num) {
        uint64_t x =
            col.phys == PhysType::kF64 ? std::bit_cast<uint64_t>(col.f64[i]) : static_cast<uint64_t>(col.i64[i]);
        uint64_t cur;
        std::memcpy(&cur, p + 8, 8);
        if (first || NumBeats(a, x, cur)) std::memcpy(p + 8, &x, 8);
      } else {
        uint32_t cur;
        std::memcpy(&cur, p + 8, 4);
        if (first || RowBeats(a, in, i, cur)) {
          const auto r = static_cast<uint32_t>(i);
          std::memcpy(p + 8, &r, 4);
        }
      }
    }
    return;
  }
  if (stored_[a] == Stored::kSumInt) {
    // The argument's type is NOT NULL, so the record keeps no count of non-NULL values.
    if (has_nulls && std::find(col.nulls.begin(), col.nulls.end(), 1) != col.nulls.end())
      Fail(ErrorKind::kRuntime, "internal error: SUM/AVG over a NOT NULL column met a NULL");
    for (size_t i = 0; i < n; ++i) {
      int64_t prod;
      if (__builtin_mul_overflow(w[i], col.i64[i], &prod)) SumOverflow();
      AddSum(field + gid[i] * R, prod);
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    if (skipped(i) || (has_nulls && col.nulls[i])) continue;
    char* p = field + gid[i] * R;
    AddI64(p, w[i]);
    if (stored_[a] == Stored::kCountInt) {
      int64_t prod;
      if (__builtin_mul_overflow(w[i], col.i64[i], &prod)) SumOverflow();
      AddSum(p + 8, prod);
    } else if (stored_[a] == Stored::kCountDouble) {
      AddF64(p + 8, static_cast<double>(w[i]) * col.f64[i]);
    }
  }
}

bool AggregateOp::SmallKeyPreaggregate(const Batch& in, ThreadPool* pool, std::vector<std::string>* keys,
                                       Partials* partial) const {
  const size_t n = in.size();
  // (Only linear aggregates qualify: all inline, so the result is flat records.)
  if (!all_inline_ || num_keys_ != 1 || n == 0 || in.cols[0]->phys != PhysType::kI64 || in.cols[0]->HasNulls())
    return false;
  for (const auto& a : aggs_) {
    if (a.kind != AggKind::kCountStar && a.kind != AggKind::kCount && a.kind != AggKind::kSum &&
        a.kind != AggKind::kAvg)
      return false;
    if (UsesMultiset(a) || a.filter >= 0) return false;
    if (a.kind != AggKind::kCountStar && in.cols[a.arg]->phys == PhysType::kStr) return false;
  }
  const int64_t* k = in.cols[0]->i64.data();
  const int64_t* w = in.weights.data();
  constexpr size_t kSlice = 16384;  // fixed, so merging does not depend on the thread count
  const size_t slices = (n + kSlice - 1) / kSlice;
  // Phase 1: key range and whether every weight is 1, per slice.
  struct Range {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    bool unit = true;
  };
  std::vector<Range> ranges(slices);
  auto scan = [&](size_t s) {
    Range& r = ranges[s];
    const size_t b = s * kSlice, e = std::min(n, b + kSlice);
    int64_t lo = k[b], hi = k[b];
    bool unit = true;
    for (size_t i = b; i < e; ++i) {
      lo = std::min(lo, k[i]);
      hi = std::max(hi, k[i]);
      unit &= w[i] == 1;
    }
    r = {lo, hi, unit};
  };
  if (pool && slices > 1)
    pool->ParallelFor(slices, scan);
  else
    for (size_t s = 0; s < slices; ++s) scan(s);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  bool unit = true;
  for (const Range& r : ranges) {
    lo = std::min(lo, r.lo);
    hi = std::max(hi, r.hi);
    unit = unit && r.unit;
  }
  constexpr uint64_t kMaxRange = 1024;
  if (static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) >= kMaxRange) return false;
  const size_t R = static_cast<size_t>(hi - lo) + 1, A = aggs_.size();

  struct Part {
    std::vector<int64_t> rows, cnt, isum;
    std::vector<double> dsum;
    std::vector<uint8_t> seen;
    bool overflow = false;
  };
  std::vector<Part> parts(slices);
  auto work = [&](size_t s) {
    Part& p = parts[s];
    const size_t b = s * kSlice, e = std::min(n, b + kSlice);
    p.rows.assign(R, 0);
    p.seen.assign(R, 0);
    p.cnt.assign(A * R, 0);
    p.isum.assign(A * R, 0);
    p.dsum.assign(A * R, 0);
    for (size_t i = b; i < e; ++i) {
      const size_t g = static_cast<size_t>(k[i] - lo);
      p.rows[g] += w[i];
      p.seen[g] = 1;
    }
    for (size_t a = 0; a < A; ++a) {
      const AggSpec& spec = aggs_[a];
      if (spec.kind == AggKind::kCountStar) continue;
      const Column& col = *in.cols[spec.arg];
      const bool nulls = col.HasNulls();
      int64_t* cnt = &p.cnt[a * R];
      int64_t* isum = &p.isum[a * R];
      double* dsum = &p.dsum[a * R];
      const bool need_sum = spec.kind != AggKind::kCount;
      if (col.phys == PhysType::kI64) {
        const int64_t* x = col.i64.data();
        if (unit && !nulls) {
          for (size_t i = b; i < e; ++i) {
            const size_t g = static_cast<size_t>(k[i] - lo);
            cnt[g] += 1;
            if (need_sum) p.overflow |= __builtin_add_overflow(isum[g], x[i], &isum[g]);
          }
        } else {
          for (size_t i = b; i < e; ++i) {
            if (nulls && col.nulls[i]) continue;
            const size_t g = static_cast<size_t>(k[i] - lo);
            cnt[g] += w[i];
            int64_t prod;
            if (need_sum)
              p.overflow |=
                  __builtin_mul_overflow(w[i], x[i], &prod) || __builtin_add_overflow(isum[g], prod, &isum[g]);
          }
        }
      } else {
        const double* x = col.f64.data();
        for (size_t i = b; i < e; ++i) {
          if (nulls && col.nulls[i]) continue;
          const size_t g = static_cast<size_t>(k[i] - lo);
          cnt[g] += w[i];
          dsum[g] += static_cast<double>(w[i]) * x[i];
        }
      }
    }
  };
  if (pool && slices > 1)
    pool->ParallelFor(slices, work);
  else
    for (size_t s = 0; s < slices; ++s) work(s);

  for (const Part& p : parts)
    if (p.overflow) SumOverflow();
  for (size_t g = 0; g < R; ++g) {
    bool seen = false;
    for (const Part& p : parts) seen = seen || p.seen[g];
    if (!seen) continue;
    const size_t at = partial->flat.size();
    partial->flat.resize(at + record_bytes_, '\0');
    int64_t rows = 0;
    for (const Part& p : parts) rows += p.rows[g];
    std::memcpy(&partial->flat[at], &rows, 8);
    for (size_t a = 0; a < A; ++a) {
      if (stored_[a] == Stored::kNothing) continue;
      int64_t count = 0, isum = 0;
      double dsum = 0;
      for (const Part& p : parts) {
        count += p.cnt[a * R + g];
        if (__builtin_add_overflow(isum, p.isum[a * R + g], &isum)) SumOverflow();
        dsum += p.dsum[a * R + g];
      }
      WriteInline(partial->flat.data() + at, a, count, isum, dsum);
    }
    keys->emplace_back();
    EncodeValue(&keys->back(), Value::Int(lo + static_cast<int64_t>(g)));
  }
  return true;
}

void AggregateOp::SaveState(StateWriter& w) const {
  for (const Shard& sh : shards_)
    if (sh.stored.backed())
      Fail(ErrorKind::kRuntime, "aggregate: the whole state of a store-backed aggregate is in the store");
  w.U64(initialized_);
  // Sorted by key: equal states, equal bytes, whatever the shards.
  std::vector<std::tuple<std::string_view, const char*, const Shard*>> entries;
  for (const Shard& sh : shards_)
    sh.groups.ForEachSlot([&](uint32_t s) { entries.emplace_back(sh.groups.Key(s), sh.groups.Value(s).data(), &sh); });
  std::sort(entries.begin(), entries.end());
  w.U64(entries.size());
  for (const auto& [key, rec, sh] : entries) {
    w.Str(key);
    WriteGroup(w, *sh, rec);
  }
}

void AggregateOp::WriteGroup(StateWriter& w, const Shard& sh, const char* rec) const {
  int64_t rows;
  std::memcpy(&rows, rec, 8);
  w.I64(rows);
  for (size_t a = 0; a < aggs_.size(); ++a) {
    AccView r;
    AccIn(sh, rec, a, &r);
    const Acc& acc = *r.acc;
    w.I64(acc.count);
    w.I64(acc.isum);
    w.F64(acc.dsum);
    w.U64(r.values->size());
    r.values->ForEach([&](const Value& v, int64_t wt) {
      std::string enc;
      EncodeValue(&enc, v);
      w.Str(enc);
      w.I64(wt);
    });
    // Only the newer aggregates write more, so older checkpoints still read.
    if (IsMoment(aggs_[a])) {
      w.I64(static_cast<int64_t>(static_cast<unsigned __int128>(acc.W().isumsq) >> 64));
      w.I64(static_cast<int64_t>(static_cast<uint64_t>(acc.W().isumsq)));
      w.F64(acc.W().dsumsq);
    }
    if (IsWideSum(aggs_[a])) {
      w.I64(static_cast<int64_t>(static_cast<unsigned __int128>(acc.W().wsum) >> 64));
      w.I64(static_cast<int64_t>(static_cast<uint64_t>(acc.W().wsum)));
    }
    if (IsBits(aggs_[a])) {
      w.U64(acc.W().bits.size());
      for (int64_t b : acc.W().bits) w.I64(b);
    }
    if (IsPairs(aggs_[a])) {
      w.U64(r.pairs->size());
      r.pairs->ForEach([&](std::string_view key, int64_t wt) {
        const auto kv = PairOf(aggs_[a], key);
        std::string enc;
        EncodeValue(&enc, kv.first);
        EncodeValue(&enc, kv.second);
        w.Str(enc);
        w.I64(wt);
      });
    }
  }
}

void AggregateOp::RestoreState(StateReader& r) {
  BeginRestore(r);
  uint64_t n = r.U64();
  for (uint64_t i = 0; i < n; ++i) ReadGroup(r, r.Str());
  // Every group stays changed: the next SaveChanges writes them all.
}

void AggregateOp::ReadGroup(StateReader& r, const std::string& key) {
  const int64_t rows = r.I64();
  std::vector<Acc> accs(aggs_.size());
  for (size_t a = 0; a < accs.size(); ++a) {
    Acc& acc = accs[a];
    acc.count = r.I64();
    acc.isum = r.I64();
    acc.dsum = r.F64();
    uint64_t nv = r.U64();
    for (uint64_t j = 0; j < nv; ++j) {
      std::string enc = r.Str();
      size_t pos = 0;
      Value v = DecodeValue(enc, &pos);
      acc.values.Add(v, r.I64());
    }
    if (IsMoment(aggs_[a])) {
      uint64_t hi = static_cast<uint64_t>(r.I64()), lo = static_cast<uint64_t>(r.I64());
      acc.wide.Get().isumsq = static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
      acc.wide.Get().dsumsq = r.F64();
    }
    if (IsWideSum(aggs_[a])) {
      uint64_t hi = static_cast<uint64_t>(r.I64()), lo = static_cast<uint64_t>(r.I64());
      acc.wide.Get().wsum = static_cast<Int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
    }
    if (IsBits(aggs_[a])) {
      uint64_t nb = r.U64();
      std::vector<int64_t>& bits = acc.wide.Get().bits;
      bits.resize(nb);
      for (uint64_t b = 0; b < nb; ++b) bits[b] = r.I64();
    }
    if (IsPairs(aggs_[a])) {
      uint64_t np = r.U64();
      for (uint64_t j = 0; j < np; ++j) {
        std::string enc = r.Str();
        size_t pos = 0;
        Value k = DecodeValue(enc, &pos);
        Value v = DecodeValue(enc, &pos);
        std::string key;
        AppendPairKey(std::move(k), std::move(v), &key);
        AddPair(&acc, key, r.I64());
      }
    }
  }
  Shard& sh = ShardOf(key);
  sh.gc.Added(key);
  std::string rec;
  std::vector<Acc*> ptrs(accs.size());
  for (size_t a = 0; a < accs.size(); ++a) ptrs[a] = &accs[a];
  StoreGroup(sh, rows, ptrs.data(), nullptr, &rec);
  sh.groups.Insert(key, rec);
}

// Keyed state: group key -> entry; the header is the initialized flag. A group whose
// accumulators all sit in its record (COUNT, SUM, AVG of narrow types) is stored as 1 + the
// record's bytes (copied, not encoded: a restore inserts them as they are); any other as
// 0 + WriteGroup's bytes.
void AggregateOp::SaveChanges(StateWriter& w, StateDelta& d) {
  w.U64(initialized_);
  const bool raw = raw_;
  SaveShardChanges(pool_, shards_.size(), d, [&](size_t i, StateDelta& p) {
    Shard& sh = shards_[i];
    std::string buf;
    sh.stored.SaveChanges(sh.groups, p, [&](uint32_t s) {
      std::string_view rec = sh.groups.Value(s);
      buf.assign(1, raw ? 1 : 0);
      if (raw) {
        RecordToStored(rec, &buf);
      } else {
        StateWriter gw(&buf);
        WriteGroup(gw, sh, rec.data());
      }
      return std::string_view(buf);
    });
  });
}

void AggregateOp::BeginRestore(StateReader& r) {
  FreeRecordHeap();
  for (Shard& sh : shards_) {
    sh.groups.Clear();
    sh.boxes.Clear();
    sh.gc.Clear();
    sh.box_heap = 0;
    sh.stored.Reset();
  }
  initialized_ = r.U64() != 0;
}

void AggregateOp::RestoreEntry(std::string_view key, std::string_view value) {
  const bool raw = raw_;
  if (value.empty() || value[0] != (raw ? 1 : 0) || (raw && value.size() != 1 + stored_bytes_))
    Fail(ErrorKind::kCorruption, "an aggregate's stored group is malformed ({} bytes)", value.size());
  if (raw) {
    Shard& sh = ShardOf(key);
    if (stored_bytes_ == record_bytes_) {
      sh.groups.Insert(key, value.substr(1));
    } else {
      std::string rec;
      StoredToRecord(value.substr(1), &rec);
      sh.groups.Insert(key, rec);
    }
    sh.gc.Added(std::string(key));
    return;
  }
  StateReader r(value.substr(1));
  ReadGroup(r, std::string(key));
  if (!r.AtEnd()) Fail(ErrorKind::kCorruption, "an aggregate's stored group has {} bytes too many", value.size());
}

}  // namespace fld
