// ChunkedVector<T>: a growable array whose elements live in chunks of kChunk, for objects kept by
// the million (an aggregate's per-group accumulators). Growing never moves an element: a
// std::vector doubling past a million 200-byte elements copies them all and, for a while, holds
// both copies, and on average a quarter of its capacity is unused. Here memory is the elements
// plus what the last chunk has not used yet, and those pages are not touched (elements are
// constructed as they are added), so they take no resident memory.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace fld {

template <class T, size_t kChunk = 4096>
class ChunkedVector {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);

 public:
  ChunkedVector() = default;
  ChunkedVector(const ChunkedVector&) = delete;
  ChunkedVector& operator=(const ChunkedVector&) = delete;
  ChunkedVector(ChunkedVector&& o) noexcept : chunks_(std::move(o.chunks_)), size_(o.size_) { o.size_ = 0; }
  ChunkedVector& operator=(ChunkedVector&& o) noexcept {
    if (this != &o) {
      clear();
      chunks_ = std::move(o.chunks_);
      size_ = o.size_;
      o.size_ = 0;
    }
    return *this;
  }
  ~ChunkedVector() { clear(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return Slot(i); }
  const T& operator[](size_t i) const { return const_cast<ChunkedVector*>(this)->Slot(i); }
  // Appends a value-initialized T and returns it.
  T& emplace_back() {
    if (size_ == chunks_.size() * kChunk) chunks_.emplace_back(static_cast<T*>(::operator new(kChunk * sizeof(T))));
    T* p = new (&Slot(size_)) T();
    ++size_;
    return *p;
  }
  // Destroys every element and frees the chunks.
  void clear() {
    for (size_t i = size_; i > 0; --i) Slot(i - 1).~T();
    chunks_.clear();
    size_ = 0;
  }
  // Bytes of the elements (the last chunk's unused part is reserved, not resident).
  size_t MemoryBytes() const { return size_ * sizeof(T); }

 private:
  struct Free {
    void operator()(T* p) const { ::operator delete(p); }
  };
  T& Slot(size_t i) { return chunks_[i / kChunk].get()[i % kChunk]; }

  std::vector<std::unique_ptr<T, Free>> chunks_;
  size_t size_ = 0;
};

}  // namespace fld
