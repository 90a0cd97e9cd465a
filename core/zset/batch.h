// Z-set batches: the unit of data that flows through the circuit.
//
// A Batch is a set of rows in columnar form (one typed Column per field) plus a weight per row:
// +1 inserts one copy, -1 deletes one, any other integer is that many copies. A batch is a
// *change* (delta) unless it is explicitly an integrated contents. Batches are immutable once
// built and share their columns by shared_ptr, so a projection that keeps a column copies nothing.
//
// Row encoding (EncodeRow/DecodeRow) turns the values of some columns of one row into a byte
// string; operator state (traces, aggregate groups) keys its maps by it and checkpoints write it.
// The encoding is self-describing per value (a tag byte then the payload), stable across
// versions (it is written to disk) and equal rows encode to equal strings.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/types/types.h"

namespace fld {

struct Column {
  PhysType phys = PhysType::kI64;
  std::vector<int64_t> i64;      // kI64
  std::vector<double> f64;       // kF64
  std::vector<std::string> str;  // kStr
  std::vector<uint8_t> nulls;    // empty: no NULLs; else one byte per row, 1 = NULL

  Column() = default;
  explicit Column(PhysType p) : phys(p) {}

  size_t size() const {
    switch (phys) {
      case PhysType::kI64:
        return i64.size();
      case PhysType::kF64:
        return f64.size();
      case PhysType::kStr:
        return str.size();
    }
    return 0;
  }
  bool IsNull(size_t r) const { return !nulls.empty() && nulls[r]; }
  bool HasNulls() const { return !nulls.empty(); }
  Value Get(size_t r) const;
  void Reserve(size_t n);
  void Append(const Value& v);  // v must match phys (or be NULL)
  void AppendNull();
  void AppendFrom(const Column& src, size_t r);
  // Marks row r NULL (materializing the null vector on first use).
  void SetNull(size_t r);
  // Drops the null vector when it holds no NULL.
  void CompactNulls();
};

using ColumnPtr = std::shared_ptr<const Column>;

struct Batch {
  std::vector<ColumnPtr> cols;
  std::vector<int64_t> weights;

  size_t size() const { return weights.size(); }
  bool empty() const { return weights.empty(); }
  size_t width() const { return cols.size(); }
  Value Get(size_t col, size_t row) const { return cols[col]->Get(row); }
};

// An empty batch with the given column physical types.
Batch EmptyBatch(std::span<const PhysType> types);

// Builds a batch column by column or row by row.
class BatchBuilder {
 public:
  explicit BatchBuilder(std::span<const PhysType> types);
  size_t width() const { return cols_.size(); }
  Column& col(size_t i) { return *cols_[i]; }
  void AddWeight(int64_t w) { weights_.push_back(w); }
  void AppendRow(std::span<const Value> row, int64_t w);
  // Copies row r of src (all columns, in order) with weight w.
  void AppendFrom(const Batch& src, size_t r, int64_t w);
  size_t size() const { return weights_.size(); }
  Batch Finish();

 private:
  std::vector<std::shared_ptr<Column>> cols_;
  std::vector<int64_t> weights_;
};

// ---- Row encoding ----
void EncodeValue(std::string* out, const Column& c, size_t r);
void EncodeValue(std::string* out, const Value& v);
// Appends the values of columns `cols` of row r.
void EncodeRow(std::string* out, const Batch& b, size_t r, std::span<const int> cols);
// Appends all columns of row r.
void EncodeRow(std::string* out, const Batch& b, size_t r);
// Compact row encoding, for state whose rows are compared only for equality (join traces): as
// EncodeRow, except that a non-NULL integer is the tag 0x10 + n then the n low bytes (n = 0..8,
// the fewest that hold it) of its zigzag form, little-endian: 1 to 9 bytes instead of 9. Equal
// rows encode equally; the order is not the values'. DecodeValue, DecodeRow and DecodeRowInto
// read both encodings.
void EncodeCompactValue(std::string* out, const Column& c, size_t r);
// A row in either encoding -> the compact one (what EncodeCompactValue would have written).
std::string CompactRow(std::string_view row);
// The same, appended to *out.
void AppendCompactRow(std::string_view row, std::string* out);
// A row in either encoding -> the row encoding (what EncodeValue would have written).
std::string StandardRow(std::string_view row);
// Hints the cache to fetch row r's values in every column: for callers encoding rows in an order
// other than the batch's (a consolidation's), some rows ahead of the one they encode.
void PrefetchRow(const Batch& b, size_t r);
// Decodes one value at *pos and advances it.
Value DecodeValue(std::string_view in, size_t* pos);
std::vector<Value> DecodeRow(std::string_view in);
// Appends the values of an encoded row to *row (a vector kept across rows keeps its buffer).
void DecodeRowInto(std::string_view in, std::vector<Value>* row);
// One value of a row in either encoding, read in place: its kind, an integer's or a double's
// 64 bits (a compact integer widened), a string's bytes (a view into the row).
struct EncodedValue {
  enum class Kind : uint8_t { kNull, kInt, kDouble, kString };
  Kind kind = Kind::kNull;
  uint64_t bits = 0;
  std::string_view bytes;
};
// Reads the value at *pos into *v and advances *pos; false (nothing advanced) when the bytes
// there are not a whole value of a known tag.
bool NextEncodedValue(std::string_view in, size_t* pos, EncodedValue* v);
// Whether `in` is a whole row in either encoding (known tags, every value within the bytes): the
// decoders above trust their input, so a row read back from storage is checked first.
bool RowEncodingValid(std::string_view in);
// The same, and the row has one value per column of `types`, each NULL or of its column's type.
bool RowEncodingFits(std::string_view in, std::span<const PhysType> types);
// Decodes an encoded row and appends its values to the builder's columns starting at `first_col`.
void DecodeRowInto(std::string_view in, BatchBuilder* b, size_t first_col);
// Decodes the value at *pos (either encoding), appends it to col and advances *pos.
void DecodeValueInto(std::string_view in, size_t* pos, Column* col);

class ThreadPool;
// Below this many rows Consolidate runs on the calling thread even when given a pool.
inline constexpr size_t kParallelConsolidateRows = size_t{1} << 15;
// Adds the weights of equal rows and drops rows whose weight sums to 0. The result is sorted by
// the rows' encodings (memcmp order of EncodeRow; compared column by column, nothing encoded), so
// it is deterministic whatever the input order. Of several batches of the same shape: the
// consolidation of their concatenation, without building it. With a pool (of more than one
// worker) and at least `parallel_rows` rows, the work is spread over the pool's threads; the
// result is the same. Call it with a pool only from the thread that owns the pool's loops.
Batch Consolidate(const Batch& b, ThreadPool* pool = nullptr, size_t parallel_rows = kParallelConsolidateRows);
Batch Consolidate(std::span<const Batch> parts, ThreadPool* pool = nullptr,
                  size_t parallel_rows = kParallelConsolidateRows);
// Consolidate's result left in place: the rows (references into `parts`) and their summed
// weights, in the same order, nothing gathered.
struct ConsolidatedRows;
ConsolidatedRows ConsolidateRows(std::span<const Batch> parts, ThreadPool* pool = nullptr,
                                 size_t parallel_rows = kParallelConsolidateRows);
// Concatenates batches of the same shape.
Batch Concat(std::span<const Batch> parts);
// Concatenates columns of the same physical type (at least one; one is returned as it is). The
// strings of a part no one else holds are moved, not copied.
ColumnPtr Concat(std::vector<ColumnPtr>&& parts);
// Rows [begin, end) of c, copied.
ColumnPtr Slice(const Column& c, size_t begin, size_t end);
// One row of one of several batches.
struct RowRef {
  uint32_t part;
  uint32_t row;
};
struct ConsolidatedRows {
  std::vector<RowRef> rows;
  std::vector<int64_t> weights;
};
// The rows `order` names, in that order, from batches of the same shape as `types` (copied in
// parallel ranges with a pool).
Batch GatherRows(std::span<const Batch> parts, std::span<const RowRef> order, std::span<const PhysType> types,
                 ThreadPool* pool = nullptr);
// Rows of b selected by `sel` (indices), in that order.
Batch Gather(const Batch& b, std::span<const uint32_t> sel);
// Heap bytes a batch holds (its columns, their strings' heap buffers, NULL flags, weights).
size_t MemoryBytes(const Batch& b);

}  // namespace fld
