// SPDX-License-Identifier: Apache-2.0
// floor_divide, remainder, predicates, erfinv, where, clamp, lerp: errors and the behaviour the
// PyTorch oracle (tests/oracle/cases_elementwise_more.cc) does not see.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <cmath>
#include <limits>

#include <spore/spore.h>

#include "ops/promote.h"
#include "prims/erfinv.h"

namespace spore {
namespace {

using namespace ops;


// pow(x, 2) is x * x bitwise, in the vector body and the scalar tail, for float32 and float64
// (the graph passes rewrite x^2 as x * x at level 1, which must not change a result).
TEST(ElementwiseMore, SquareByPowIsTheProduct) {
  for (DType t : {DType::Float32, DType::Float64}) {
    manual_seed(3);
    Tensor x = normal({37}, 0, 3, {t});
    x = concat({x, from_vector<double>({0.0, -0.0, 1e30, -1e-30, std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::quiet_NaN()}).to(t)}, 0);
    const auto p = pow(x, 2.0).to(DType::Float64).to_vector<double>(), q = (x * x).to(DType::Float64).to_vector<double>();
    const auto pt = pow(x, full({}, 2.0, {t})).to(DType::Float64).to_vector<double>();
    ASSERT_EQ(p.size(), q.size());
    for (size_t i = 0; i < q.size(); ++i) {
      if (std::isnan(q[i])) {
        EXPECT_TRUE(std::isnan(p[i]) && std::isnan(pt[i])) << i;
        continue;
      }
      EXPECT_EQ(p[i], q[i]) << dtype_name(t) << " " << i;
      EXPECT_EQ(pt[i], q[i]) << dtype_name(t) << " " << i;
      EXPECT_EQ(std::signbit(p[i]), std::signbit(q[i])) << i;
    }
  }
}

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

TEST(ElementwiseMore, ClampScalarBoundsMustFitTheDtype) {
  // PyTorch: "value cannot be converted to type int8_t without overflow"; these used to wrap.
  Tensor i8 = arange(0, 3, 1, {DType::Int8});
  expect_error([&] { clamp(i8, 0, 1000); },
               "[clamp] value 1000 cannot be converted to int8 without overflow; use a value in [-128, 127]");
  expect_error([&] { clamp(i8, -1000, 1); }, "[clamp] value -1000 cannot be converted to int8 without overflow");
  expect_error([&] { clamp(i8.to(DType::Int32), 0, int64_t{3000000000}); },
               "[clamp] value 3000000000 cannot be converted to int32");
  expect_error([&] { clamp(i8, weak_scalar(1000), Tensor()); }, "[clamp] value 1000 cannot be converted to int8");
  expect_error([&] { clamp(arange(0, 3, 1, {DType::UInt8}), -300, 3); }, "value -300 cannot be converted to uint8");
  // At the limits, or a float bound (the result is float32): fine, as in PyTorch.
  EXPECT_EQ(clamp(i8, -128, 127).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(clamp(i8, 0, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(clamp(i8, 0, 1000.0).dtype(), DType::Float32);
  EXPECT_EQ(clamp(i8, 0, 1000.0).to_vector<float>(), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(clamp(i8, -1000.0, 1e30).to_vector<float>(), (std::vector<float>{0, 1, 2}));
}

TEST(ElementwiseMore, CheckScalarFits) {
  auto fits = [](Scalar s, DType t) { return error_of([&] { check_scalar_fits(s, t, "op"); }) == "(no error)"; };
  EXPECT_TRUE(fits(127, DType::Int8));
  EXPECT_TRUE(fits(-128, DType::Int8));
  EXPECT_FALSE(fits(128, DType::Int8));
  EXPECT_TRUE(fits(127.0, DType::Int8));
  EXPECT_TRUE(fits(-2.5, DType::Int8));  // truncated, like PyTorch
  EXPECT_FALSE(fits(127.5, DType::Int8));
  EXPECT_FALSE(fits(-128.5, DType::Int8));
  EXPECT_FALSE(fits(NAN, DType::Int32));
  EXPECT_FALSE(fits(INFINITY, DType::Int64));
  EXPECT_TRUE(fits(std::numeric_limits<int64_t>::max(), DType::Int64));
  EXPECT_TRUE(fits(-9223372036854775808.0, DType::Int64));
  EXPECT_FALSE(fits(9223372036854775808.0, DType::Int64));  // 2^63: one past int64's max
  // PyTorch lets a negative integer (not a float) wrap into uint8: x - 1 is x + 255.
  EXPECT_TRUE(fits(-1, DType::UInt8));
  EXPECT_TRUE(fits(-255, DType::UInt8));
  EXPECT_FALSE(fits(-256, DType::UInt8));
  EXPECT_FALSE(fits(256, DType::UInt8));
  EXPECT_FALSE(fits(-1.0, DType::UInt8));
  EXPECT_TRUE(fits(true, DType::Int8));
  EXPECT_TRUE(fits(1e300, DType::Bool));
  EXPECT_TRUE(fits(NAN, DType::Bool));
  // As PyTorch: finite values beyond a float dtype's range are refused, inf and NaN are not.
  EXPECT_FALSE(fits(1e6, DType::Float16));
  EXPECT_FALSE(fits(1e300, DType::BFloat16));
  EXPECT_FALSE(fits(1e300, DType::Float32));
  EXPECT_FALSE(fits(int64_t{1} << 62, DType::Float16));
  EXPECT_TRUE(fits(65504.0, DType::Float16));
  EXPECT_TRUE(fits(INFINITY, DType::Float16));
  EXPECT_TRUE(fits(NAN, DType::BFloat16));
  EXPECT_TRUE(fits(1e300, DType::Float64));
  EXPECT_ERROR(ops::full({2}, 70000.0, {DType::Float16}), "[full] value 70000 cannot be converted to float16 without overflow");
  EXPECT_ERROR(ops::full({2}, 1000, {DType::Int8}), "[full] value 1000 cannot be converted to int8 without overflow");
  EXPECT_EQ(error_of([] { check_scalar_fits(1e30, DType::Int64, "masked_fill"); }),
            "[masked_fill] value 1e+30 cannot be converted to int64 without overflow; use a value in "
            "[-9223372036854775808, 9223372036854775807] or cast the tensor to a wider dtype first");
  EXPECT_ERROR(check_scalar_fits(NAN, DType::Int16, "pad"), "[pad] value nan cannot be converted to int16");
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
