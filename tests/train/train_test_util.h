// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the train tests: a two-layer network written out (so the loop is tested apart from
// the nn layers), a toy data set, and exact comparisons of training runs.
#include <gtest/gtest.h>
#include <spore/nn/cell.h>
#include <spore/spore.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace spore::train::testing {

class TinyNet : public nn::UnaryCell {
 public:
  TinyNet() : UnaryCell("TinyNet") {
    w1 = ops::normal({6, 16}) * 0.3;
    b1 = ops::zeros({16});
    w2 = ops::normal({16, 3}) * 0.3;
    b2 = ops::zeros({3});
    register_parameter("w1", &w1);
    register_parameter("b1", &b1);
    register_parameter("w2", &w2);
    register_parameter("b2", &b2);
  }
  Tensor construct(const Tensor& x) override { return ops::matmul(ops::relu(ops::matmul(x, w1) + b1), w2) + b2; }
  Tensor w1, b1, w2, b2;
};

/// Three separable classes in 6 dimensions.
inline std::pair<Tensor, Tensor> toy_data(int64_t n, uint64_t seed) {
  manual_seed(seed);
  Tensor y = ops::randint(0, 3, {n});
  Tensor centers = ops::normal({3, 6}) * 2.0;
  Tensor x = ops::index_select(centers, 0, y) + ops::normal({n, 6}) * 0.5;
  return {x, y};
}

inline Tensor ce(const Tensor& out, const Tensor& y) { return ops::cross_entropy(out, y); }

/// Restores PyNative even when a test fails half-way, so one failure does not leak Graph mode.
struct ModeGuard {
  explicit ModeGuard(Mode m) { set_context(m); }
  ~ModeGuard() { set_context(Mode::PyNative); }
};

/// True when both hold the same names in the same order with bit-identical tensors.
inline ::testing::AssertionResult bitwise_equal(const std::vector<std::pair<std::string, Tensor>>& a,
                                                const std::vector<std::pair<std::string, Tensor>>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " vs " << b.size() << " entries";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].first != b[i].first) return ::testing::AssertionFailure() << "entry " << i << ": " << a[i].first << " vs " << b[i].first;
    const Tensor x = a[i].second.contiguous(), y = b[i].second.contiguous();
    if (x.dtype() != y.dtype() || x.shape() != y.shape())
      return ::testing::AssertionFailure() << a[i].first << ": " << dtype_name(x.dtype()) << shape_str(x.shape()) << " vs "
                                           << dtype_name(y.dtype()) << shape_str(y.shape());
    if (std::memcmp(x.data_ptr(), y.data_ptr(), static_cast<size_t>(x.numel()) * dtype_size(x.dtype())) != 0)
      return ::testing::AssertionFailure() << a[i].first << " differs";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace spore::train::testing
