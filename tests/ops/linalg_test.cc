// SPDX-License-Identifier: Apache-2.0
// Linalg behaviour the oracle cannot see: error messages, kernel selection, oneDNN vs the
// reference kernel, the transpose flags of the matmul primitive.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <spore/spore.h>

#include "prims/matmul.h"
#include "runtime/dispatch.h"

namespace spore {
namespace {

Tensor randn(const Shape& s, DType dt = DType::Float32, double seed = 1) {
  // Deterministic values without depending on the random-op family.
  Tensor x = ops::arange(0, numel_of(s), 1, {DType::Float64}).reshape(s);
  return ops::sin(x * (0.37 + seed)).to(dt);
}


Buffer buf(const Tensor& t) {
  return {t.data_ptr(), t.dtype(), static_cast<int>(t.dim()), t.shape().data(), t.strides().data()};
}

TEST(Linalg, MatmulInnerDimError) {
  Tensor a = ops::zeros({32, 64}), b = ops::zeros({65, 10});
  EXPECT_EQ(error_of([&] { ops::matmul(a, b); }),
            "[matmul] inner dimensions differ: a is (32, 64), b is (65, 10); transpose b or fix its shape");
  EXPECT_NE(error_of([&] { ops::matmul(ops::zeros({3, 5}), ops::zeros({2, 4, 4})); }).find("inner dimensions"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ops::matmul(ops::zeros({2, 3, 4}), ops::zeros({3, 4, 5})); }).find("broadcast"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ops::matmul(ops::zeros({}), ops::zeros({3})); }).find("rank >= 1"), std::string::npos);
  EXPECT_NE(error_of([&] { ops::matmul(ops::zeros({2, 2}, {DType::Bool}), ops::zeros({2, 2}, {DType::Bool})); })
                .find("bool"),
            std::string::npos);
}

TEST(Linalg, AddmmErrors) {
  EXPECT_NE(error_of([&] { ops::addmm(ops::zeros({3, 5}), ops::zeros({3, 4, 1}), ops::zeros({4, 5})); })
                .find("[addmm] needs 2-D"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ops::addmm(ops::zeros({4, 5}), ops::zeros({3, 4}), ops::zeros({4, 5})); })
                .find("does not broadcast"),
            std::string::npos);
}

TEST(Linalg, EinsumErrors) {
  Tensor a = ops::zeros({3, 4}), b = ops::zeros({5, 6});
  EXPECT_EQ(error_of([&] { ops::einsum("ij,jk->ik", {a, b}); }),
            "[einsum] subscript 'j' has size 4 in operand 0 but 5 in operand 1 (shape (5, 6))");
  EXPECT_NE(error_of([&] { ops::einsum("ij->ik", {a}); }).find("'k'"), std::string::npos);
  EXPECT_NE(error_of([&] { ops::einsum("ijk->i", {a}); }).find("name 3 dims"), std::string::npos);
  EXPECT_NE(error_of([&] { ops::einsum("ij,jk->ik", {a}); }).find("names 2 operands but 1"), std::string::npos);
  EXPECT_NE(error_of([&] { ops::einsum("i1->i", {a}); }).find("invalid character '1'"), std::string::npos);
  EXPECT_NE(error_of([&] { ops::einsum("...ij->ij", {a}); }).find("ellipsis"), std::string::npos);
  EXPECT_NE(error_of([&] { ops::einsum("ij->ii", {a}); }).find("twice"), std::string::npos);
}

TEST(Linalg, OnednnKernelIsChosenForFloat32) {
  const auto& ks = prims::matmul_primitive().kernels[static_cast<int>(DeviceType::CPU)];
  ASSERT_GE(ks.size(), 2u);
  EXPECT_STREQ(ks.front().name, "onednn");
  EXPECT_STREQ(ks.back().name, "reference");
  TensorType f64{DType::Float64, false, {2, 2}}, f32{DType::Float32, false, {2, 2}};
  std::vector<TensorType> in64{f64, f64}, in32{f32, f32};
  prims::MatmulAttrs at;
  EXPECT_FALSE(ks.front().supports(&at, in64));
  EXPECT_TRUE(ks.front().supports(&at, in32));
}

// The oneDNN result must match the plain C++ kernel on float32, for plain, transposed,
// broadcast and biased calls.
TEST(Linalg, OnednnAgreesWithReference) {
  struct Case {
    Tensor a, b, bias;
    prims::MatmulAttrs at;
  };
  std::vector<Case> cases = {
      {randn({37, 129}), randn({129, 65}, DType::Float32, 2), {}, {}},
      {randn({129, 37}), randn({65, 129}, DType::Float32, 2), {}, {true, true, 1, 1}},
      {randn({2, 1, 8, 33}), randn({3, 33, 9}, DType::Float32, 3), {}, {}},
      {randn({16, 40}), randn({40, 24}, DType::Float32, 4), randn({24}, DType::Float32, 5), {}},
      {randn({16, 40}), randn({40, 24}, DType::Float32, 4), randn({16, 1}, DType::Float32, 5), {false, false, 0.5, -2}},
      {randn({9, 20}).transpose(0, 1), randn({9, 7}, DType::Float32, 6), {}, {}},
      {randn({1, 33}).expand({8, 33}), randn({33, 1}, DType::Float32, 7).expand({33, 6}), {}, {}},  // stride 0
      {randn({2, 1, 4, 6}).expand({2, 3, 4, 6}), randn({1, 3, 6, 5}).expand({2, 3, 6, 5}), {}, {}},
      // Batch dims folded into one 2-D product's rows (an unbatched right operand): a (seq, 1,
      // d) view of a batch-1 activation, contiguous batches with a bias, a transposed left
      // operand of one row per batch entry, and ones that cannot fold (a transposed left operand
      // of several rows, a (seq, batch, d) view, a per-row bias).
      {randn({1, 12, 10}).transpose(0, 1), randn({10, 7}, DType::Float32, 8), randn({7}, DType::Float32, 9), {}},
      {randn({3, 5, 10}), randn({10, 7}, DType::Float32, 8), randn({7}, DType::Float32, 9), {}},
      {randn({12, 10, 1}), randn({10, 7}, DType::Float32, 8), {}, {true, false, 1, 1}},
      {randn({2, 3, 10, 5}), randn({7, 10}, DType::Float32, 8), {}, {true, true, 1, 1}},
      {randn({4, 6, 10}).transpose(0, 1), randn({10, 7}, DType::Float32, 8), {}, {}},
      {randn({3, 5, 10}), randn({10, 7}, DType::Float32, 8), randn({5, 1}, DType::Float32, 9), {false, false, 1, 1}},
  };
  for (auto& c : cases) {
    std::vector<Tensor> ins;  // built by push_back: GCC 12 warns falsely on {a, b} + push_back
    for (const Tensor* t : {&c.a, &c.b, &c.bias})
      if (t->defined()) ins.push_back(*t);
    Tensor got = runtime::dispatch(prims::matmul_primitive(), &c.at, ins).t[0];
    Tensor want = ops::empty(got.shape());
    std::vector<Buffer> ib;
    for (auto& t : ins) ib.push_back(buf(t));
    Buffer ob = buf(want);
    prims::matmul_reference(c.at, ib, {&ob, 1});
    auto g = got.to_vector<float>(), w = want.to_vector<float>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-4 * (1 + std::abs(w[i]))) << i;
    // And the float64 path (reference kernel) gives the same within float32 rounding.
    std::vector<Tensor> ins64;
    for (auto& t : ins) ins64.push_back(t.to(DType::Float64));
    auto d = runtime::dispatch(prims::matmul_primitive(), &c.at, ins64).t[0].to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], d[i], 1e-4 * (1 + std::abs(d[i]))) << i;
  }
}

TEST(Linalg, TransposeFlagsMatchViews) {
  Tensor a = randn({5, 3}), b = randn({4, 5}, DType::Float64, 2);
  prims::MatmulAttrs at{true, true, 1, 1};
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor x = (a * 10).to(dt), y = (b * 10).to(dt);
    Tensor got = runtime::call(prims::matmul_primitive(), at, {x, y});
    Tensor want = ops::matmul(x.transpose(0, 1), y.transpose(0, 1));
    auto g = got.to_vector<double>(), w = want.to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-3 * (1 + std::abs(w[i])));
  }
}

TEST(Linalg, ZeroSizeInnerDimGivesZeros) {
  Tensor c = ops::matmul(ops::zeros({3, 0}), ops::zeros({0, 4}));
  EXPECT_EQ(c.shape(), Shape({3, 4}));
  for (float v : c.to_vector<float>()) EXPECT_EQ(v, 0.0f);
  Tensor d = ops::addmm(ops::ones({4}), ops::zeros({3, 0}), ops::zeros({0, 4}), 2.0);
  for (float v : d.to_vector<float>()) EXPECT_EQ(v, 2.0f);
}

}  // namespace
}  // namespace spore
