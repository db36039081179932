// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <span>
#include <type_traits>

namespace spore {

/// A vector of trivially copyable values with N stored inline: shapes and strides live in the
/// tensor itself, so the eager hot path does not touch the heap for them.
template <class T, int N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  SmallVec() = default;
  SmallVec(std::initializer_list<T> v) { assign(v.begin(), v.end()); }
  explicit SmallVec(std::span<const T> v) { assign(v.begin(), v.end()); }
  SmallVec(size_t n, T fill) {
    resize(n);
    std::fill(begin(), end(), fill);
  }
  template <class It, std::enable_if_t<!std::is_integral_v<It>, int> = 0>
  SmallVec(It b, It e) { assign(b, e); }
  SmallVec(const SmallVec& o) { assign(o.begin(), o.end()); }
  SmallVec(SmallVec&& o) noexcept { steal(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SmallVec() { release(); }

  T* data() { return heap_ ? heap_ : inline_; }
  const T* data() const { return heap_ ? heap_ : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  operator std::span<const T>() const { return {data(), size_}; }

  void reserve(size_t n) {
    if (n <= capacity()) return;
    T* p = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, data(), size_ * sizeof(T));
    if (heap_) std::free(heap_);
    heap_ = p;
    cap_ = n;
  }
  void resize(size_t n) {
    reserve(n);
    if (n > size_) std::memset(static_cast<void*>(data() + size_), 0, (n - size_) * sizeof(T));
    size_ = n;
  }
  void push_back(T v) {
    if (size_ == capacity()) reserve(std::max<size_t>(2 * capacity(), N));
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void insert(size_t pos, T v) {
    push_back(v);
    std::rotate(begin() + pos, end() - 1, end());
  }
  void erase(size_t pos) {
    std::copy(begin() + pos + 1, end(), begin() + pos);
    --size_;
  }
  template <class It>
  void assign(It b, It e) {
    size_t n = static_cast<size_t>(std::distance(b, e));
    size_ = 0;
    reserve(n);
    std::copy(b, e, data());
    size_ = n;
  }

  friend bool operator==(const SmallVec& a, const SmallVec& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  size_t capacity() const { return heap_ ? cap_ : N; }
  void release() {
    if (heap_) std::free(heap_);
    heap_ = nullptr;
  }
  void steal(SmallVec& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
    } else {
      std::memcpy(inline_, o.inline_, size_ * sizeof(T));
    }
    o.size_ = 0;
  }

  T inline_[N];
  T* heap_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
};

}  // namespace spore
