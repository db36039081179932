// SPDX-License-Identifier: Apache-2.0
// The row-fill paths of the data-movement kernels (prims/index_map.h table_copy): a broadcast
// (stride-0) source row, as a slice's vjp concatenates, and constant-pad rows, each against the
// same op on a materialized copy or hand-written values, for every element size.
#include <gtest/gtest.h>

#include <spore/spore.h>

#include <vector>

namespace spore {
namespace {

Tensor ramp(const Shape& s, DType dt) { return ops::arange(0, numel_of(s), 1, {DType::Float64}).reshape(s).to(dt); }

TEST(TableCopyFill, ConcatOfBroadcastMatchesMaterialized) {
  for (DType dt : {DType::Bool, DType::Int8, DType::BFloat16, DType::Int16, DType::Float32, DType::Int32,
                   DType::Float64, DType::Int64}) {
    SCOPED_TRACE(static_cast<int>(dt));
    const Tensor g = ramp({3, 5}, dt);
    const Tensor scalar = ramp({}, dt) + 1;  // a non-zero value shows a wrong source element
    for (int64_t axis : {0, 1}) {
      Shape zs = {3, 5};
      zs[static_cast<size_t>(axis)] = 4;
      const Tensor wide = ops::broadcast_to(scalar, zs);          // stride 0 on every axis
      const Tensor col = ops::broadcast_to(ramp({zs[0], 1}, dt), zs);  // stride 0 on the last axis only
      for (const Tensor& z : {wide, col}) {
        const Tensor got = ops::concat({z, g, z}, axis);
        const Tensor want = ops::concat({z.contiguous(), g, z.contiguous()}, axis);
        EXPECT_EQ(got.to(DType::Float64).to_vector<double>(), want.to(DType::Float64).to_vector<double>());
      }
    }
  }
}

TEST(TableCopyFill, ConstantPadRows) {
  const Tensor x = ramp({2, 3}, DType::Float32);
  // One row above and below (whole fill rows), one column left (fill inside a row).
  const Tensor got = ops::pad(x, {1, 0, 1, 1}, ops::PadMode::Constant, -2.5);
  const std::vector<float> want = {-2.5f, -2.5f, -2.5f, -2.5f, -2.5f, 0, 1, 2, -2.5f, 3, 4, 5, -2.5f, -2.5f, -2.5f, -2.5f};
  EXPECT_EQ(got.to_vector<float>(), want);
  const Tensor i16 = ops::pad(ramp({1, 2}, DType::Int16), {0, 0, 1, 0}, ops::PadMode::Constant, 7);
  EXPECT_EQ(i16.to(DType::Float64).to_vector<double>(), (std::vector<double>{7, 7, 0, 1}));
}

}  // namespace
}  // namespace spore
