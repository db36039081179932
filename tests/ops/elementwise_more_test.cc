// SPDX-License-Identifier: Apache-2.0
// floor_divide, remainder, predicates, erfinv, where, clamp, lerp: errors and the behaviour the
// PyTorch oracle (tests/oracle/cases_elementwise_more.cc) does not see.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <cmath>
#include <limits>

#include <spore/spore.h>

#include "prims/erfinv.h"

namespace spore {
namespace {

using namespace ops;


TEST(ElementwiseMore, IntegerDivisionByZeroIsAnError) {
  expect_error([] { floor_divide(tensor({1, 2}), tensor({1, 0})); },
               "[floor_divide] ZeroDivisionError: integer division by zero");
  expect_error([] { remainder(tensor({1, 2}), tensor({0, 1})); }, "[remainder] ZeroDivisionError");
  // Large enough to run on several threads: the error still comes back as spore::Error.
  expect_error([] { floor_divide(ones({200000}, {DType::Int32}), zeros({200000}, {DType::Int32})); },
               "ZeroDivisionError");
  // Floats follow IEEE instead.
  auto f = floor_divide(tensor({1.f, -1.f, 0.f}), tensor({0.f, 0.f, 0.f})).to_vector<float>();
  EXPECT_EQ(f[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f[2]));
}

TEST(ElementwiseMore, IntegerEdges) {
  const int64_t mn = std::numeric_limits<int64_t>::min();
  Tensor a = from_vector(std::vector<int64_t>{mn, -7, 7, -7, 7});
  Tensor b = from_vector(std::vector<int64_t>{-1, 2, -2, -2, 2});
  EXPECT_EQ(floor_divide(a, b).to_vector<int64_t>(), (std::vector<int64_t>{mn, -4, -4, 3, 3}));
  EXPECT_EQ(remainder(a, b).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, -1, -1, 1}));
  EXPECT_EQ(floor_divide(tensor({7}), tensor({2.5f})).dtype(), DType::Float32);
}

TEST(ElementwiseMore, Errors) {
  expect_error([] { floor_divide(tensor({true}), tensor({true})); }, "[floor_divide] is not defined for bool tensors");
  expect_error([] { remainder(tensor({true}), tensor({false})); }, "[remainder] is not defined for bool tensors");
  expect_error([] { where(tensor({1, 0}), tensor({1.f, 2.f}), tensor({3.f, 4.f})); },
               "[where] condition must be a bool tensor, got int64");
  expect_error([] { where(tensor({true, false, true}), tensor({1.f, 2.f}), tensor({3.f, 4.f})); }, "cannot broadcast");
  expect_error([] { clamp(tensor({true}), tensor({false}), tensor({true})); }, "[clamp] is not defined for bool tensors");
  expect_error([] { clamp(tensor({1.f}), Tensor(), Tensor()); }, "[clamp] at least one of lo and hi must be given");
  expect_error([] { lerp(tensor({1.f}), Tensor(), tensor({1.f})); }, "[lerp] an input is an undefined tensor");
}

TEST(ElementwiseMore, ClampOneSided) {
  Tensor x = tensor({-3.f, 0.5f, 4.f, NAN});
  auto lo = clamp(x, tensor({0.f}), Tensor()).to_vector<float>();
  EXPECT_EQ(lo[0], 0.f);
  EXPECT_EQ(lo[2], 4.f);
  EXPECT_TRUE(std::isnan(lo[3]));
  auto hi = clamp(tensor({-300, 5, 300}).to(DType::Int16), Tensor(), tensor({7})).to_vector<int64_t>();
  EXPECT_EQ(hi, (std::vector<int64_t>{-300, 5, 7}));
  EXPECT_EQ(clamp(tensor({1, 5, 9}), 2, 6).dtype(), DType::Int64);
  EXPECT_EQ(clamp(tensor({1, 5, 9}), 2, 6).to_vector<int64_t>(), (std::vector<int64_t>{2, 5, 6}));
  EXPECT_EQ(clamp(tensor({1, 5, 9}), 2.5, 6).dtype(), DType::Float32);
}

TEST(ElementwiseMore, ErfinvIsFloat64Accurate) {
  EXPECT_DOUBLE_EQ(prims::erfinv_f64(0.5), 0.47693627620446987338);
  EXPECT_DOUBLE_EQ(prims::erfinv_f64(-0.9), -1.16308715367667416284);
  EXPECT_DOUBLE_EQ(prims::erfinv_f64(0.999999), 3.45891073727549877753);
  // Reference values from mpmath at 40 digits.
  EXPECT_DOUBLE_EQ(prims::erfinv_f64(-0.9999999999), -4.57282495854492493785);
  EXPECT_DOUBLE_EQ(prims::erfinv_f64(0.999999999999999), 5.67591573974471317882);
  EXPECT_DOUBLE_EQ(prims::erfinv_f64(1e-300), 1e-300 * std::sqrt(M_PI) / 2);
  EXPECT_EQ(prims::erfinv_f64(1.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::signbit(prims::erfinv_f64(-0.0)));
  EXPECT_TRUE(std::isnan(prims::erfinv_f64(1.5)));
  // Round trip: erf(erfinv(x)) == x to a few ulp over the whole range.
  for (double x = -0.999; x < 1; x += 0.00137) EXPECT_NEAR(std::erf(prims::erfinv_f64(x)), x, 4e-16) << x;
  // Near +-1 the answer is ill-conditioned in x, so check the residual erfc(y) - (1 - x) instead.
  for (double y = 0.5; y < 5.8; y += 0.25) {
    const double x = 1 - std::erfc(y), c = 1 - x;  // c is exact
    EXPECT_NEAR(std::erfc(prims::erfinv_f64(x)) / c, 1.0, 1e-14) << y;
  }
  EXPECT_DOUBLE_EQ(prims::ndtri(0.975), 1.95996398454005385560);
  EXPECT_DOUBLE_EQ(prims::ndtri(1e-20), -9.26234008979840757957);
  Tensor t = erfinv(tensor({0, 1}));
  EXPECT_EQ(t.dtype(), DType::Float32);
}

TEST(ElementwiseMore, WhereOfLiterals) {
  // As torch.where(c, 1.0, 2.0): float32, and not weak (it has c's shape).
  Tensor r = where(tensor({true, false}), weak_scalar(1.0), weak_scalar(2.0));
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_FALSE(r.weak());
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ((r + ones({2}, {DType::Float16})).dtype(), DType::Float32);
}

TEST(ElementwiseMore, PredicatesOnIntegers) {
  Tensor i = tensor({0, 3, -2});
  EXPECT_EQ(isnan(i).to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(isinf(i).to_vector<bool>(), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(isfinite(i).to_vector<bool>(), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(logical_not(i).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(logical_not(tensor({NAN, 0.f})).to_vector<bool>(), (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace spore
