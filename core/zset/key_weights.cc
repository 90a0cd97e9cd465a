#include "core/zset/key_weights.h"

#include <algorithm>
#include <utility>

namespace fld {

void KeyWeights::Add(std::string_view key, int64_t w) {
  if (w == 0) return;
  InlineKey k(key);
  if (tree_) {
    auto it = tree_->find(key);
    if (it == tree_->end()) {
      heap_ += InlineKeyHeapBytes(key.size());
      tree_->insert(Entry{std::move(k), w});
      return;
    }
    it->weight += w;
    if (it->weight != 0) return;
    heap_ -= InlineKeyHeapBytes(key.size());
    tree_->erase(it);
    return;
  }
  auto it = std::lower_bound(small_.begin(), small_.end(), k,
                             [](const Entry& e, const InlineKey& x) { return e.key.Compare(x) < 0; });
  if (it != small_.end() && it->key.Compare(k) == 0) {
    it->weight += w;
    if (it->weight != 0) return;
    heap_ -= InlineKeyHeapBytes(key.size());
    small_.erase(it);
    return;
  }
  heap_ += InlineKeyHeapBytes(key.size());
  if (small_.size() == kSmall) {
    ToTree();
    tree_->insert(Entry{std::move(k), w});
    return;
  }
  if (small_.size() == small_.capacity()) {
    const size_t at = static_cast<size_t>(it - small_.begin());
    small_.reserve(std::min(kSmall, NextSmallCapacity(small_.capacity())));
    it = small_.begin() + static_cast<std::ptrdiff_t>(at);
  }
  small_.insert(it, Entry{std::move(k), w});
}

void KeyWeights::ToTree() {
  tree_ = std::make_unique<absl::btree_set<Entry, Less>>();
  for (Entry& e : small_) tree_->insert(tree_->end(), std::move(e));
  std::vector<Entry>().swap(small_);
}

size_t KeyWeights::HeapBytes() const {
  if (tree_) return tree_->size() * kInlineKeyEntryBytes + heap_;
  return small_.capacity() * sizeof(Entry) + heap_;
}

const InlineKey* KeyWeights::FirstPositive(std::string_view from) const {
  if (tree_) {
    for (auto it = from.empty() ? tree_->begin() : tree_->lower_bound(from); it != tree_->end(); ++it)
      if (it->weight > 0) return &it->key;
    return nullptr;
  }
  auto it = small_.begin();
  if (!from.empty())
    it = std::lower_bound(small_.begin(), small_.end(), from,
                          [](const Entry& e, std::string_view x) { return e.key.view() < x; });
  for (; it != small_.end(); ++it)
    if (it->weight > 0) return &it->key;
  return nullptr;
}

const InlineKey* KeyWeights::LastPositive() const {
  if (tree_) {
    for (auto it = tree_->rbegin(); it != tree_->rend(); ++it)
      if (it->weight > 0) return &it->key;
    return nullptr;
  }
  for (auto it = small_.rbegin(); it != small_.rend(); ++it)
    if (it->weight > 0) return &it->key;
  return nullptr;
}

}  // namespace fld
