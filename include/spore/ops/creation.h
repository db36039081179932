// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "spore/tensor.h"

namespace spore::ops {

/// Options shared by factories.
struct TensorOptions {
  DType dtype = DType::Float32;
  Device device = kCPU;
};

Tensor empty(const Shape& shape, TensorOptions opt = {});
Tensor zeros(const Shape& shape, TensorOptions opt = {});
Tensor ones(const Shape& shape, TensorOptions opt = {});
Tensor full(const Shape& shape, Scalar value, TensorOptions opt = {});
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, Scalar value);
/// A 0-d tensor holding `value` (dtype: the scalar's own, unless given).
Tensor scalar_tensor(Scalar value, DType dtype);
Tensor scalar_tensor(Scalar value);
/// [start, stop) with `step`; dtype int64 when all are integers, else float32 (as PyTorch).
Tensor arange(Scalar stop);
Tensor arange(Scalar start, Scalar stop, Scalar step = 1);
Tensor arange(Scalar start, Scalar stop, Scalar step, TensorOptions opt);
/// `steps` evenly spaced values from start to stop inclusive.
Tensor linspace(double start, double stop, int64_t steps, TensorOptions opt = {});
/// Identity (n x m, m = n when negative).
Tensor eye(int64_t n, int64_t m = -1, TensorOptions opt = {});

/// A tensor copied from values; the shape defaults to 1-D.
template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, DType dtype = dtype_of<T>());
template <class T>
Tensor from_vector(const std::vector<T>& values) {
  return from_vector(values, Shape{static_cast<Dim>(values.size())});
}
/// `tensor({1.f, 2.f, 3.f})`, `tensor({{1, 2}, {3, 4}})`.
Tensor tensor(std::initializer_list<float> v);
Tensor tensor(std::initializer_list<double> v);
Tensor tensor(std::initializer_list<int64_t> v);
Tensor tensor(std::initializer_list<int> v);
Tensor tensor(std::initializer_list<bool> v);
/// A 2-D tensor from rows: `tensor({{1, 2}, {3, 4}})` (int64), `tensor({{0.5f, 1.f}})` (float32).
/// One template, so a single row such as {{0, 4}} is not ambiguous. (A single column written as
/// {{1.f}, {2.f}} is read by C++ as the 1-D list {1.f, 2.f}: use from_vector with a shape.)
template <class T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows) {
  using S = std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int64_t, T>;
  const size_t cols = rows.size() ? rows.begin()->size() : 0;
  std::vector<S> flat;
  flat.reserve(rows.size() * cols);
  for (const auto& row : rows) {
    SPORE_CHECK(row.size() == cols, "[tensor] ragged nested list: rows of ", cols, " and ", row.size(), " values");
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return from_vector(flat, {static_cast<Dim>(rows.size()), static_cast<Dim>(cols)});
}

/// In-place updates: write into dst's own storage (through its strides; src broadcasts and is
/// cast to dst's dtype) and bump its version counter. Not allowed on tensors that an open
/// transform tracks, nor inside jit/vmap.
Tensor& copy_(Tensor& dst, const Tensor& src);
Tensor& add_(Tensor& dst, const Tensor& src);
Tensor& mul_(Tensor& dst, const Tensor& src);
Tensor& fill_(Tensor& dst, Scalar value);

}  // namespace spore::ops
