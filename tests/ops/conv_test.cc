// SPDX-License-Identifier: Apache-2.0
// Conv and pool behaviour the oracle cannot see: error messages, kernel selection and the
// oneDNN kernels agreeing with the reference kernels on float32.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <spore/spore.h>

#include "prims/conv.h"
#include "prims/pool.h"
#include "runtime/dispatch.h"

namespace spore {
namespace {

Tensor wave(const Shape& s, double f = 0.37) {
  Tensor x = ops::arange(0, numel_of(s), 1, {DType::Float64}).reshape(s);
  return ops::sin(x * f).to(DType::Float32);
}


Buffer buf(const Tensor& t) {
  return {t.data_ptr(), t.dtype(), static_cast<int>(t.dim()), t.shape().data(), t.strides().data()};
}

// Runs `p` through dispatch (oneDNN for float32) and through `ref` directly; compares.
template <class Attrs, class Ref>
void expect_agree(const Primitive& p, const Attrs& a, const std::vector<Tensor>& ins, Ref ref, double tol = 1e-4) {
  auto got = runtime::dispatch(p, &a, ins);
  std::vector<Buffer> ib;
  for (auto& t : ins) ib.push_back(buf(t));
  std::vector<Tensor> want;
  std::vector<Buffer> ob;
  for (int i = 0; i < got.n; ++i) want.push_back(ops::empty(got.t[i].shape(), {got.t[i].dtype()}));
  for (auto& t : want) ob.push_back(buf(t));
  ref(a, ib, ob);
  for (int i = 0; i < got.n; ++i) {
    Tensor gt = got.t[i];
    auto g = gt.to_vector<double>(), w = want[i].to_vector<double>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t j = 0; j < g.size(); ++j) ASSERT_NEAR(g[j], w[j], tol * (1 + std::abs(w[j]))) << p.name << " at " << j;
  }
}

TEST(Conv, ChannelMismatchNamesShapesAndGroups) {
  Tensor x = ops::zeros({2, 3, 8, 8}), w = ops::zeros({4, 2, 3, 3});
  EXPECT_EQ(error_of([&] { ops::conv2d(x, w); }),
            "[conv2d] input (2, 3, 8, 8) has 3 channels but weight (4, 2, 3, 3) with groups=1 expects 2 (weight is "
            "(out, in/groups, *kernel)); out channels 4 must also divide by groups");
  ops::ConvOptions g3;
  g3.groups = 3;
  EXPECT_NE(error_of([&] { ops::conv2d(ops::zeros({2, 6, 8, 8}), ops::zeros({4, 2, 3, 3}), {}, g3); })
                .find("with groups=3"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ops::conv1d(x, w); }).find("[conv1d] weight must have rank 3"), std::string::npos);
  EXPECT_NE(error_of([&] { ops::conv2d(x.to(DType::Int64), ops::zeros({4, 3, 3, 3}, {DType::Int64})); })
                .find("needs floating tensors"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ops::conv2d(ops::zeros({1, 3, 2, 2}), ops::zeros({4, 3, 3, 3})); }).find("smaller than the kernel"),
            std::string::npos);
  ops::ConvOptions same;
  same.same = true;
  same.stride = {2};
  EXPECT_NE(error_of([&] { ops::conv2d(x, ops::zeros({4, 3, 3, 3}), {}, same); }).find("needs stride 1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ops::conv2d(x, ops::zeros({4, 3, 3, 3}), ops::zeros({5})); }).find("bias must have shape (4)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ops::conv_transpose2d(x, ops::zeros({4, 2, 3, 3})); }).find("has 3 channels"),
            std::string::npos);
}

ops::PoolOptions pool_opt(std::vector<int64_t> k, std::vector<int64_t> pad = {0}) {
  ops::PoolOptions o;
  o.kernel = std::move(k);
  o.padding = std::move(pad);
  return o;
}

TEST(Conv, PoolErrors) {
  Tensor x = ops::zeros({1, 2, 6, 6});
  EXPECT_NE(error_of([&] { ops::max_pool2d(x, pool_opt({2}, {2})); }).find("at most half the kernel size"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ops::avg_pool2d(ops::zeros({6, 6}), pool_opt({2})); }).find("(N, C, H, W) or (C, H, W)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ops::max_pool2d(x, pool_opt({7})); }).find("too small"), std::string::npos);
}

TEST(Conv, PoolOfEmptyInput) {
  // As in PyTorch only the batch may be empty; with padding an empty plane used to give a
  // window over nothing (-inf for max).
  EXPECT_ERROR(ops::max_pool2d(ops::zeros({1, 1, 0, 4}), pool_opt({2}, {1})),
               "[max_pool2d] input (1, 1, 0, 4) is empty on dim 2; only the batch dim of a (N, C, H, W) input may be 0");
  EXPECT_ERROR(ops::avg_pool2d(ops::zeros({1, 1, 4, 0}), pool_opt({1})), "[avg_pool2d] input (1, 1, 4, 0) is empty on dim 3");
  EXPECT_ERROR(ops::max_pool2d_with_indices(ops::zeros({1, 0, 4, 4}), pool_opt({2})),
               "[max_pool2d_with_indices] input (1, 0, 4, 4) is empty on dim 1");
  EXPECT_ERROR(ops::avg_pool2d(ops::zeros({0, 4, 4}), pool_opt({2})), "[avg_pool2d] input (0, 4, 4) is empty on dim 0");
  EXPECT_EQ(ops::max_pool2d(ops::zeros({0, 1, 4, 4}), pool_opt({2})).shape(), (Shape{0, 1, 2, 2}));
  EXPECT_EQ(ops::avg_pool2d(ops::zeros({0, 1, 4, 4}), pool_opt({2})).shape(), (Shape{0, 1, 2, 2}));
  EXPECT_EQ(ops::max_pool2d_with_indices(ops::zeros({0, 1, 4, 4}), pool_opt({2})).second.shape(), (Shape{0, 1, 2, 2}));
}

TEST(Conv, OnednnKernelsAreRegistered) {
  for (const Primitive* p : {&prims::conv_primitive(), &prims::conv_transpose_primitive()}) {
    const auto& ks = p->kernels[static_cast<int>(DeviceType::CPU)];
    ASSERT_GE(ks.size(), 2u) << p->name;
    EXPECT_STREQ(ks.front().name, "onednn");
    EXPECT_STREQ(ks.back().name, "reference");
  }
}

TEST(Conv, OnednnAgreesWithReference) {
  auto ref = [](const prims::ConvAttrs& a, std::span<const Buffer> i, std::span<const Buffer> o) {
    prims::conv_reference(a, i, o);
  };
  prims::ConvAttrs plain{{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1};
  expect_agree(prims::conv_primitive(), plain, {wave({2, 16, 12, 12}), wave({32, 16, 3, 3}, 0.11), wave({32}, 0.5)}, ref);
  prims::ConvAttrs grouped{{2, 1}, {0, 1}, {1, 2}, {1, 2}, 4};
  expect_agree(prims::conv_primitive(), grouped, {wave({2, 8, 11, 9}), wave({12, 2, 3, 3}, 0.11)}, ref);
  // Transposed (non-contiguous) input and weight: strided user memory reordered by oneDNN.
  Tensor xt = wave({2, 4, 10, 9}).transpose(2, 3), wt = wave({6, 4, 3, 3}, 0.2).transpose(2, 3);
  expect_agree(prims::conv_primitive(), plain, {xt, wt}, ref);
  prims::ConvAttrs c3{{1, 2, 1}, {1, 0, 1}, {1, 0, 1}, {1, 1, 1}, 1};
  expect_agree(prims::conv_primitive(), c3, {wave({1, 3, 5, 6, 7}), wave({4, 3, 3, 3, 3}, 0.3)}, ref);
  auto tref = [](const prims::ConvTransposeAttrs& a, std::span<const Buffer> i, std::span<const Buffer> o) {
    prims::conv_transpose_reference(a, i, o);
  };
  prims::ConvTransposeAttrs t{{2, 2}, {1, 1}, {1, 1}, {1, 1}, 2};
  expect_agree(prims::conv_transpose_primitive(), t, {wave({2, 4, 5, 6}), wave({4, 3, 3, 3}, 0.2), wave({6}, 0.9)}, tref);
}

TEST(Conv, PoolKernelsAgreeWithReference) {
  auto ref = [](const prims::Pool2dAttrs& a, std::span<const Buffer> i, std::span<const Buffer> o) {
    prims::pool2d_reference(a, i, o);
  };
  for (auto kind : {prims::PoolKind::Max, prims::PoolKind::Avg})
    for (bool ceil : {false, true})
      for (bool cip : {false, true}) {
        prims::Pool2dAttrs a{kind, {3, 3}, {2, 2}, {1, 1}, ceil, cip, false};
        expect_agree(prims::pool2d_primitive(), a, {wave({2, 5, 10, 10})}, ref, 1e-6);
        expect_agree(prims::pool2d_primitive(), a, {wave({2, 5, 10, 11}).transpose(2, 3)}, ref, 1e-6);
      }
}

TEST(Conv, MaxPoolIndicesAreFlatPerPlane) {
  Tensor x = ops::tensor({{1.f, 5.f, 2.f, 0.f}, {3.f, 4.f, 9.f, 8.f}}).reshape({1, 2, 4});
  auto [v, i] = ops::max_pool2d_with_indices(x, pool_opt({2}));
  EXPECT_EQ(v.shape(), Shape({1, 1, 2}));
  EXPECT_EQ(i.dtype(), DType::Int64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{5.f, 9.f}));
}

}  // namespace
}  // namespace spore
