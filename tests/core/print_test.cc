// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <cmath>

#include <spore/spore.h>

namespace spore {
namespace {
using namespace ops;

TEST(Print, MatchesPyTorchStyle) {
  EXPECT_EQ(tensor({{1.f, 2.f}, {3.f, 4.f}}).str(), "tensor([[1., 2.],\n        [3., 4.]])");
  EXPECT_EQ(tensor({0.5f, 1.25f}).str(), "tensor([0.5000, 1.2500])");
  EXPECT_EQ(arange(3).str(), "tensor([0, 1, 2])");
  EXPECT_EQ(arange(3).to(DType::Int32).str(), "tensor([0, 1, 2], dtype=int32)");
  EXPECT_EQ(tensor({true, false}).str(), "tensor([ True, False])");
  EXPECT_EQ(full({}, 2.5).str(), "tensor(2.5000)");
  EXPECT_EQ(tensor({1.f, NAN, INFINITY}).str(), "tensor([1., nan, inf])");
  EXPECT_EQ(zeros({0}).str(), "tensor([])");
  EXPECT_EQ(empty({2, 3}, {DType::Float32, kMeta}).str(), "tensor(..., device='meta', size=(2, 3))");
}

TEST(Print, SummarizesLargeTensors) {
  std::string s = arange(2000).str();
  EXPECT_EQ(s, "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  EXPECT_EQ(arange(0, 40000, 1).reshape({200, 200}).str(),
            "tensor([[    0,     1,     2,  ...,   197,   198,   199],\n"
            "        [  200,   201,   202,  ...,   397,   398,   399],\n"
            "        [  400,   401,   402,  ...,   597,   598,   599],\n"
            "        ...,\n"
            "        [39400, 39401, 39402,  ..., 39597, 39598, 39599],\n"
            "        [39600, 39601, 39602,  ..., 39797, 39798, 39799],\n"
            "        [39800, 39801, 39802,  ..., 39997, 39998, 39999]])");
}

}  // namespace
}  // namespace spore
