// SPDX-License-Identifier: Apache-2.0
// Deterministic test inputs (shared by the oracle driver and the gradient-check table).
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "oracle.h"

namespace spore::oracle {

Tensor rand_tensor(const Shape& shape, DType dtype, uint64_t seed, Fill fill) {
  std::mt19937_64 rng(seed * 7919 + 17);
  int64_t n = 1;
  for (Dim d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uni(0, 1);
  const double edge[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e30, 1e-30, 1.0, -1.0, 0.5, -0.5};
  for (int64_t i = 0; i < n; ++i) {
    double x = 0;
    switch (fill) {
      case Fill::Normal: x = normal(rng); break;
      case Fill::Positive: x = 0.1 + 2.9 * uni(rng); break;
      case Fill::Unit: x = -0.95 + 1.9 * uni(rng); break;
      case Fill::Edge: x = (i % 3 == 0) ? edge[(i / 3) % 12] : normal(rng) * 3; break;
      case Fill::Int: x = std::floor(uni(rng) * 41) - 20; break;
      case Fill::Bool: x = uni(rng) < 0.5 ? 0 : 1; break;
      case Fill::Index: x = 0; break;
    }
    if (dtype == DType::UInt8 && x < 0) x = -x;
    if (is_integral(dtype, true) && fill != Fill::Int && fill != Fill::Bool) x = std::floor(std::isfinite(x) ? x * 5 : 7);
    if (dtype == DType::Int8 || dtype == DType::UInt8) x = std::fmod(x, 100);
    if (dtype == DType::Bool) x = x != 0;
    v[static_cast<size_t>(i)] = x;
  }
  return ops::from_vector(v, shape).to(dtype);
}

Tensor rand_index(const Shape& shape, int64_t bound, uint64_t seed) {
  std::mt19937_64 rng(seed * 104729 + 3);
  int64_t n = 1;
  for (Dim d : shape) n *= d;
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int64_t>(rng() % static_cast<uint64_t>(bound));
  return ops::from_vector(v, shape);
}

Tensor non_contiguous(const Tensor& t) {
  // Interleave with junk along the last axis, then take every other element.
  Shape big = t.shape();
  if (big.empty()) return t;
  big.back() *= 2;
  Tensor buf = ops::zeros(big, {t.dtype()});
  // Write t into the even positions through a strided view of buf's storage.
  Tensor wide = Tensor::view_of(buf.storage(), t.shape(), [&] {
    Strides s = buf.strides();
    s.back() = 2;
    return s;
  }(), 0, t.dtype());
  // Copy element by element through contiguous order (test-only, small tensors).
  Tensor src = t.contiguous();
  const int64_t n = t.numel();
  const size_t isz = t.itemsize();
  std::vector<int64_t> idx(t.shape().size(), 0);
  char* dst = static_cast<char*>(buf.data_ptr());
  const char* sp = static_cast<const char*>(src.data_ptr());
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * wide.strides()[d];
    std::memcpy(dst + off * static_cast<int64_t>(isz), sp + i * static_cast<int64_t>(isz), isz);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < t.shape()[d]) break;
      idx[d] = 0;
    }
  }
  return wide;
}

}  // namespace spore::oracle
