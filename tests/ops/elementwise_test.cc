// SPDX-License-Identifier: Apache-2.0
// Behaviour of elementwise, creation and view ops that the oracle cannot see: error messages,
// weak literals, views sharing storage, IEEE edge cases.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <cmath>

#include <spore/spore.h>

namespace spore {
namespace {
using namespace ops;



TEST(Elementwise, ErrorsNameOpShapesAndFix) {
  EXPECT_ERROR(zeros({2, 3}) * zeros({3, 2}), "[mul] shapes (2, 3) and (3, 2) cannot broadcast: dimension 0 is 2 vs 3");
  EXPECT_ERROR(sub(tensor({true}), tensor({false})), "[sub] is not defined for two bool tensors");
  EXPECT_ERROR(exp(tensor({true})), "[exp] is not defined for bool tensors");
  EXPECT_ERROR(bitwise_and(zeros({2}), zeros({2})), "[bitwise_and] needs integer or bool tensors, got float32 and float32");
  EXPECT_ERROR(add(Tensor(), zeros({1})), "[add] an input is an undefined tensor");
  EXPECT_ERROR(softplus(zeros({1}), 0.0), "[softplus] beta must be non-zero");
}

TEST(Creation, ErrorsNameOpAndValues) {
  EXPECT_ERROR(zeros({2, -1}), "[full] shape (2, -1) has a negative dimension");
  EXPECT_ERROR(arange(0, 10, 0), "[arange] step must be non-zero");
  EXPECT_ERROR(arange(0, 10, -1), "[arange] step -1 goes away from stop");
  EXPECT_ERROR(linspace(0, 1, -2), "[linspace] steps must be >= 0, got -2");
  EXPECT_ERROR(from_vector(std::vector<float>{1, 2, 3}, {2, 2}), "[tensor] 3 values do not fill shape (2, 2)");
  EXPECT_ERROR(tensor({{1.f, 2.f}, {3.f}}), "[tensor] ragged nested list");
  EXPECT_ERROR(zeros({2}).item<float>(), "[item] needs a tensor with one element, got shape (2,)");
  EXPECT_ERROR(zeros({2}).data<double>(), "[data] tensor is float32, asked for float64");
}

TEST(Views, ErrorsNameOpAndShapes) {
  Tensor x = zeros({2, 3});
  EXPECT_ERROR(x.reshape({4, 2}), "[reshape] cannot reshape (2, 3) (6 elements) to (4, 2) (8 elements)");
  EXPECT_ERROR(x.reshape({-1, -1}), "[reshape] only one dimension can be -1");
  EXPECT_ERROR(x.transpose(0, 2), "[transpose] axis 2 is out of range for a tensor of rank 2");
  EXPECT_ERROR(x.permute({0, 0}), "[permute] axis 0 appears twice");
  EXPECT_ERROR(x.slice(1, 0, 2, 0), "[slice] step must be positive, got 0");
  EXPECT_ERROR(x[5], "[select] index 5 is out of range for axis 0 of size 2");
  EXPECT_ERROR(x.expand({4, 3}), "[broadcast_to] cannot broadcast (2, 3) to (4, 3): dimension 0 is 2");
  EXPECT_ERROR(x.transpose(0, 1).view({6}), "[view] cannot view a tensor of shape (3, 2)");
}

TEST(Elementwise, IeeeEdgeCasesLikeNumPy) {
  Tensor r = div(tensor({1.f, -1.f, 0.f}), zeros({3}));
  auto v = r.to_vector<float>();
  EXPECT_EQ(v[0], INFINITY);
  EXPECT_EQ(v[1], -INFINITY);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_TRUE(std::isnan(maximum(tensor({NAN}), tensor({1.f})).item<float>()));
  EXPECT_TRUE(std::isnan(relu(tensor({NAN})).item<float>()));
  // Integer overflow wraps like two's complement (no undefined behaviour).
  EXPECT_EQ(add(full({1}, 127, {DType::Int8}), full({1}, 1, {DType::Int8})).item<int>(), -128);
}

TEST(Elementwise, WeakLiteralsNeverWiden) {
  Tensor h = ones({2}, {DType::Float16});
  EXPECT_EQ((h * 3.0).dtype(), DType::Float16);
  EXPECT_EQ((h + 1).dtype(), DType::Float16);
  EXPECT_EQ((2 - h).dtype(), DType::Float16);
  Tensor i8 = ones({2}, {DType::Int8});
  EXPECT_EQ((i8 + 1).dtype(), DType::Int8);
  EXPECT_EQ((i8 * 1.5).dtype(), DType::Float32);
  EXPECT_EQ((i8 + scalar_tensor(1, DType::Int64)).dtype(), DType::Int8);  // 0-d tensor, same category
  EXPECT_EQ((i8 + scalar_tensor(1.5, DType::Float64)).dtype(), DType::Float64);
  // Weak float64 literals keep their precision when the tensor is float64.
  EXPECT_EQ((zeros({1}, {DType::Float64}) + 0.1).item<double>(), 0.1);
}

TEST(Views, WritesThroughStorageAreVisibleAndVersioned) {
  Tensor x = zeros({2, 3});
  Tensor t = x.transpose(0, 1);
  x.data<float>()[1] = 5.f;
  EXPECT_EQ(t.contiguous().to_vector<float>()[2], 5.f);
  const uint64_t v = x.version();
  x.storage()->bump_version();
  EXPECT_GT(t.version(), v);  // views share the counter
  EXPECT_EQ(t.version(), x.version());
}

}  // namespace
}  // namespace spore
