// Boxed<T>: a T on the heap, made on first use and copied with its owner. For the rarely used
// parts of objects kept by the million (one per aggregate group): an empty Boxed is one pointer,
// not the T's bytes in every object.
#pragma once

#include <memory>
#include <utility>

namespace fld {

template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;

  // The T, made (value-initialized) if there is none yet.
  T& Get() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  // The T, or null when none was made.
  const T* get() const { return p_.get(); }
  T* get() { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }
  void reset() { p_.reset(); }
  // The T's ownership as a raw pointer (null when none), and back: for owners kept as raw bytes.
  T* release() { return p_.release(); }
  static Boxed Adopt(T* p) {
    Boxed b;
    b.p_.reset(p);
    return b;
  }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace fld
