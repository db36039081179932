// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>

#include <spore/spore.h>

namespace spore {
namespace {

using namespace ops;

TEST(Tensor, FactoriesAndItem) {
  Tensor z = zeros({2, 3});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.dtype(), DType::Float32);
  EXPECT_EQ(z.numel(), 6);
  EXPECT_EQ(ones({2}, {DType::Int32}).to_vector<int>(), (std::vector<int>{1, 1}));
  EXPECT_EQ(full({}, 3.5).item<double>(), 3.5);
  EXPECT_EQ(arange(5).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(5).dtype(), DType::Int64);
  EXPECT_EQ(arange(0.0, 1.0, 0.25).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(linspace(0, 1, 5).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1.0f}));
  EXPECT_EQ(eye(2, 3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(tensor({{1, 2}, {3, 4}}).shape(), (Shape{2, 2}));
}

TEST(Tensor, ViewsShareStorage) {
  Tensor x = arange(0, 24, 1).reshape({2, 3, 4});
  Tensor t = x.transpose(0, 2);
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.storage(), x.storage());
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.contiguous().to_vector<int64_t>()[1], 12);
  Tensor s = x.slice(2, 1, 4, 2);  // columns 1 and 3
  EXPECT_EQ(s.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(s.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}));
  EXPECT_EQ(x[1].shape(), (Shape{3, 4}));
  EXPECT_EQ(x[1].to_vector<int64_t>()[0], 12);
  Tensor e = arange(3).reshape({3, 1}).expand({3, 4});
  EXPECT_EQ(e.strides()[1], 0);
  EXPECT_EQ(e.to_vector<int64_t>()[5], 1);
  EXPECT_EQ(diagonal(arange(9).reshape({3, 3})).to_vector<int64_t>(), (std::vector<int64_t>{0, 4, 8}));
  // A transposed tensor cannot be viewed flat; reshape copies, view refuses with a clear error.
  EXPECT_EQ(t.reshape({24}).to_vector<int64_t>()[1], 12);
  EXPECT_THROW(t.view({24}), Error);
}

TEST(Tensor, ElementwiseBroadcastAndPromotion) {
  Tensor a = tensor({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Tensor b = tensor({10.f, 20.f, 30.f});
  EXPECT_EQ((a + b).to_vector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ((a * 2).dtype(), DType::Float32);  // weak literal keeps float32
  EXPECT_EQ((a.to(DType::Float16) * 2.5).dtype(), DType::Float16);
  EXPECT_EQ((arange(3) * 2.5).dtype(), DType::Float32);  // category change -> default float
  EXPECT_EQ((arange(3) + ones({3}, {DType::Float64})).dtype(), DType::Float64);
  EXPECT_EQ(div(arange(3), arange(1, 4, 1)).dtype(), DType::Float32);
  EXPECT_EQ(exp(arange(2)).dtype(), DType::Float32);
  EXPECT_FLOAT_EQ(exp(tensor({1.f})).item<float>(), std::exp(1.f));
}

TEST(Tensor, ErrorsNameTheOpAndShapes) {
  try {
    (void)(zeros({2, 3}) + zeros({4}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[add] shapes (2, 3) and (4,) cannot broadcast"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace spore
