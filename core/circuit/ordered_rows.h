// OrderedRows: operator state made of rows held in the order of one value each (a temporal
// filter's compared value, emit_final's column), released from the front as a bound passes them.
//
// - Memory: a B-tree of byte strings, the value's order key (core/zset/order_key.h: memcmp
//   orders them as the values) then the row in the compact row encoding (core/zset/batch.h), to
//   weights (never 0). A key of up to 23 bytes is inline in the tree's node: no heap node per row.
// - Keyed state (core/circuit/operator.h): each row is one entry, EncodeValue of the value then
//   the row -> the 8-byte weight. SaveChanges writes the rows added or released since the last
//   call (all of them the first time), so a checkpoint's cost follows the changes. The owner
//   keeps anything else (a bound) in its header.
// - The whole state (SaveWhole): the count, then per row the value's encoding, the row and the
//   weight, in value order.
// A NULL value is never held (the callers never release one).
#pragma once

#include <absl/container/btree_map.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/circuit/operator.h"
#include "core/zset/order_key.h"

namespace fld {

class OrderedRows {
 public:
  // `value_type`: the values' physical type; `row_types`: the rows' columns; `what`: the owner,
  // for corruption errors ("a temporal filter").
  OrderedRows(PhysType value_type, std::vector<PhysType> row_types, std::string what);

  // Adds w to row r of b, held under the (non-NULL) value v.
  void Add(const Value& v, const Batch& b, size_t r, int64_t w);
  // Releases the rows from the front while keep(value) is false: emit(row encoding, weight) for
  // each, in value order.
  template <typename Keep, typename Emit>
  void ReleaseWhile(Keep keep, Emit emit) {
    for (auto it = rows_.begin(); it != rows_.end();) {
      const std::string_view key = it->first.view();
      const size_t n = ValueBytes(key);
      if (keep(ValueOf(key, n))) break;
      emit(key.substr(n), it->second);
      Changed(key);
      it = rows_.erase(it);
    }
  }
  size_t size() const { return rows_.size(); }
  void Clear();

  // Keyed state.
  void Track() { track_ = true; }
  void SaveChanges(StateDelta& d);
  // A stored entry, unchanged since (a corruption error when malformed or held twice).
  void RestoreEntry(std::string_view key, std::string_view value);
  // The whole state, and back; with `changed` the rows read are written by the next
  // SaveChanges (an older checkpoint's header, read before its entries).
  void SaveWhole(StateWriter& w) const;
  void RestoreWhole(StateReader& r, bool changed);
  // The same rows without a value of their own (emit_final's older checkpoints: the count, then
  // per row its encoding and weight), the value read from column `col`.
  void RestoreRows(StateReader& r, int col, bool changed);
  // After a restore: the store holds these rows (SaveChanges writes only later changes).
  void Restored() { all_changed_ = false; }

 private:
  size_t ValueBytes(std::string_view key) const;
  Value ValueOf(std::string_view key, size_t n) const;
  // A key's stored form (EncodeValue of the value, then the row) and back.
  std::string StoredKey(std::string_view key) const;
  std::string KeyOf(std::string_view stored) const;
  void AddKey(std::string_view key, int64_t w);
  void Changed(std::string_view key) {
    if (track_ && !all_changed_) changed_.emplace_back(key);
  }

  PhysType value_type_;
  std::vector<PhysType> row_types_;
  std::string what_;
  absl::btree_map<InlineKey, int64_t, InlineKeyLess> rows_;
  bool track_ = false;
  bool all_changed_ = true;           // nothing saved yet: the next SaveChanges writes every row
  std::vector<std::string> changed_;  // keys changed since the last SaveChanges (when tracking)
  std::vector<Value> value_;          // Add's buffers
  std::string key_;
};

}  // namespace fld
