// SPDX-License-Identifier: Apache-2.0
// Reduction behaviour the oracle cannot see: thread-count independence, error messages,
// accumulation dtype and a few exact values.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include <spore/spore.h>

#include "prims/reduce.h"

namespace spore {
namespace {

using namespace ops;

Tensor random_f32(const Shape& shape, uint64_t seed, double offset = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd;
  std::vector<float> v(static_cast<size_t>(numel_of(shape)));
  for (auto& x : v) x = static_cast<float>(nd(rng) + offset);
  return from_vector(v, shape);
}


bool bitwise_equal(const Tensor& a, const Tensor& b) {
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return ca.shape() == cb.shape() && ca.dtype() == cb.dtype() &&
         std::memcmp(ca.data_ptr(), cb.data_ptr(), static_cast<size_t>(ca.numel()) * ca.itemsize()) == 0;
}

TEST(Reduction, ResultsDoNotDependOnThreadCount) {
  const int saved = num_threads();
  Tensor x = random_f32({1000000}, 1, 0.5);
  Tensor m = random_f32({4000, 250}, 2);  // axis 0: the outer (row-accumulating) path
  auto run = [&] {
    return std::vector<Tensor>{sum(x), mean(x), var(x), ops::std(x), sum(m, {0}), var(m, {0}), sum(m, {1}),
                               mean(m.transpose(0, 1)), logsumexp(x, {0}), norm(x)};
  };
  set_num_threads(1);
  auto one = run();
  set_num_threads(2);
  auto two = run();
  set_num_threads(std::max(saved, 4));
  auto many = run();
  set_num_threads(saved);
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_TRUE(bitwise_equal(one[i], two[i])) << "result " << i;
    EXPECT_TRUE(bitwise_equal(one[i], many[i])) << "result " << i;
  }
  EXPECT_EQ(num_threads(), saved);
}

TEST(Reduction, ErrorsNameTheProblem) {
  Tensor x = zeros({2, 3});
  expect_error([&] { sum(x, {3}); }, "[sum] axis 3 is out of range for a tensor of rank 2");
  expect_error([&] { mean(x, {-3}); }, "[mean] axis -3 is out of range");
  expect_error([&] { sum(x, {0, -2}); }, "[sum] axis 0 appears more than once in axes [0, -2]");
  expect_error([&] { mean(zeros({3}, {DType::Int32})); }, "[mean] needs a floating-point tensor, got int32");
  expect_error([&] { var(zeros({3}, {DType::Int64})); }, "[var] needs a floating-point tensor, got int64");
  expect_error([&] { amax(zeros({0})); }, "[amax] cannot reduce over a zero-size extent: input shape (0,)");
  expect_error([&] { amin(zeros({0, 3}), {0}); }, "[amin] cannot reduce over a zero-size extent");
  expect_error([&] { argmax(zeros({0})); }, "[argmax] cannot take the argmax of an empty tensor");
  expect_error([&] { argmin(zeros({2, 0}), 1); }, "[argmin] cannot take the argmin of axis 1");
  expect_error([&] { argmax(zeros({2}, {DType::Bool})); }, "[argmax] is not defined for bool tensors");
  expect_error([&] { norm(x, 3.0); }, "[norm] p = 3 is not supported");
  expect_error([&] { norm(zeros({0}), INFINITY); }, "[norm] cannot reduce over a zero-size extent");
  expect_error([&] { cumsum(x, 2); }, "[cumsum] axis 2 is out of range");
  expect_error([&] { var(x, {}, -1); }, "[var] correction must be >= 0");
}

TEST(Reduction, EmptyAndScalarValues) {
  Tensor e = zeros({2, 0});
  EXPECT_EQ(sum(e).item<float>(), 0.0f);
  EXPECT_EQ(prod(e).item<float>(), 1.0f);
  EXPECT_TRUE(std::isnan(mean(e).item<float>()));
  EXPECT_EQ(sum(e, {1}).shape(), (Shape{2}));
  EXPECT_EQ(amax(e, {0}).shape(), (Shape{0}));  // empty result: no error, as PyTorch
  EXPECT_TRUE(all(e).item<bool>());
  EXPECT_FALSE(any(e).item<bool>());
  EXPECT_EQ(logsumexp(e, {1}).to_vector<float>()[0], -INFINITY);
  Tensor s = full({}, 2.5);
  EXPECT_EQ(sum(s).shape(), Shape{});
  EXPECT_EQ(sum(s, {0}, true).shape(), Shape{});
  EXPECT_EQ(argmax(s).item<int64_t>(), 0);
  EXPECT_EQ(cumsum(s, 0).item<float>(), 2.5f);
}

TEST(Reduction, DtypesAndAccumulation) {
  EXPECT_EQ(sum(tensor({true, true, false})).dtype(), DType::Int64);
  EXPECT_EQ(sum(tensor({true, true, false})).item<int64_t>(), 2);
  EXPECT_EQ(prod(tensor({3, 4})).dtype(), DType::Int64);
  EXPECT_EQ(amax(tensor({3, 4}).to(DType::Int32)).dtype(), DType::Int32);
  EXPECT_EQ(all(tensor({1.f, 2.f})).dtype(), DType::Bool);
  EXPECT_EQ(cumsum(tensor({1, 2, 3}), 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 6}));
  EXPECT_EQ(logsumexp(tensor({1, 2}), {0}).dtype(), DType::Float32);
  // 16-bit floats accumulate in float32: a float16 running sum would stall at 2048.
  Tensor h = ones({4096}, {DType::Float16});
  EXPECT_EQ(sum(h).item<float>(), 4096.0f);
  EXPECT_EQ(sum(ones({4096}, {DType::BFloat16})).item<float>(), 4096.0f);
  EXPECT_EQ(mean(h).item<float>(), 1.0f);
}

TEST(Reduction, NaNAndIndices) {
  Tensor x = tensor({1.f, NAN, 3.f, NAN});
  EXPECT_TRUE(std::isnan(amax(x).item<float>()));
  EXPECT_TRUE(std::isnan(amin(x).item<float>()));
  EXPECT_EQ(argmax(x).item<int64_t>(), 1);
  EXPECT_EQ(argmin(x).item<int64_t>(), 1);
  Tensor t = tensor({{1, 5, 5}, {7, 0, 7}});
  EXPECT_EQ(argmax(t, 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));  // first maximum
  EXPECT_EQ(argmin(t, 0, true).shape(), (Shape{1, 3}));
  EXPECT_EQ(argmax(t).item<int64_t>(), 3);
}

TEST(Reduction, VarianceIsTwoPassAccurate) {
  // Values far from zero: a one-pass E[x^2] - E[x]^2 in float32 loses every digit here.
  Tensor x = random_f32({100000}, 3, 1e4);
  std::vector<float> v = x.to_vector<float>();
  double m = 0, ss = 0;
  for (float f : v) m += f;
  m /= static_cast<double>(v.size());
  for (float f : v) ss += (f - m) * (f - m);
  const double want = ss / static_cast<double>(v.size() - 1);
  EXPECT_NEAR(var(x).item<float>(), want, 1e-3 * want);
}

TEST(Reduction, PrimitiveAttributesPrint) {
  const Primitive& p = prims::reduce_primitive(prims::ReduceOp::Sum);
  EXPECT_EQ(p.name, "reduce_sum");
  prims::ReduceAttrs a;
  a.axes = {0, 2};
  a.keepdims = true;
  EXPECT_EQ(p.attrs.str(&a), "axes=[0, 2], keepdims=true, correction=0");
}

}  // namespace
}  // namespace spore
