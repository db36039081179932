// SPDX-License-Identifier: Apache-2.0
// The fast paths a training step takes, each against the plain reference computation:
//  - a conv whose kernel covers more positions than its output and fits inside its image
//    (autodiff's weight gradient) runs as oneDNN's backward-weights primitive
//    (src/backends/cpu/onednn_conv.cc); a small kernel over a tiny padded image does not;
//  - convs with few input channels keep a plain src;
//  - max pooling with indices (src/backends/cpu/pool_kernels.cc) picks exactly the reference's
//    element, ties, NaN and -inf windows included;
//  - scatter_add along the last axis of contiguous tensors (src/prims/gather.cc).
#include <gtest/gtest.h>

#include <spore/spore.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "error_matchers.h"
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

// Runs `p` through dispatch and `ref` on the same inputs; returns both results per output.
template <class Attrs, class Ref>
std::pair<std::vector<Tensor>, std::vector<Tensor>> both(const Primitive& p, const Attrs& a,
                                                         const std::vector<Tensor>& ins, Ref ref) {
  auto got = runtime::dispatch(p, &a, ins);
  std::vector<Buffer> ib, ob;
  for (auto& t : ins) ib.push_back(buf(t));
  std::vector<Tensor> g, w;
  for (int i = 0; i < got.n; ++i) {
    g.push_back(got.t[i]);
    w.push_back(ops::empty(got.t[i].shape(), {got.t[i].dtype()}));
  }
  for (auto& t : w) ob.push_back(buf(t));
  ref(a, ib, ob);
  return {g, w};
}

void expect_conv_agrees(const prims::ConvAttrs& a, const std::vector<Tensor>& ins) {
  auto [got, want] = both(prims::conv_primitive(), a, ins, [](const prims::ConvAttrs& at, auto i, auto o) {
    prims::conv_reference(at, i, o);
  });
  auto g = got[0].to_vector<double>(), w = want[0].to_vector<double>();
  ASSERT_EQ(g.size(), w.size());
  double scale = 0;
  for (double v : w) scale = std::max(scale, std::abs(v));
  for (size_t j = 0; j < g.size(); ++j) ASSERT_NEAR(g[j], w[j], 1e-5 * (1 + scale)) << "at " << j;
}

TEST(ConvFastPaths, KernelLargerThanOutputAgreesWithReference) {
  // LeNet's weight gradients in the shape autodiff builds them: batch and channels swapped.
  expect_conv_agrees({{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1}, {wave({1, 16, 20, 20}), wave({6, 16, 16, 16}, 0.13)});
  expect_conv_agrees({{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1}, {wave({6, 32, 14, 14}), wave({16, 32, 10, 10}, 0.21)});
  // Stride and dilation trade places in the backward-weights problem; padding stays.
  expect_conv_agrees({{2, 2}, {1, 1}, {1, 1}, {1, 1}, 1}, {wave({2, 3, 11, 11}), wave({4, 3, 9, 9}, 0.3)});
  expect_conv_agrees({{1, 1}, {0, 0}, {0, 0}, {2, 2}, 1}, {wave({1, 2, 9, 9}), wave({3, 2, 4, 4}, 0.3)});
  expect_conv_agrees({{2, 1}, {0, 1}, {1, 0}, {1, 2}, 1}, {wave({3, 5, 13, 12}), wave({2, 5, 9, 5}, 0.3)});
  // An input tail no window reads (no exact backward-weights problem): the forward primitive.
  expect_conv_agrees({{2, 2}, {0, 0}, {0, 0}, {1, 1}, 1}, {wave({2, 3, 12, 12}), wave({4, 3, 9, 9}, 0.3)});
  // Strided user memory on every operand, 1-D and 3-D.
  expect_conv_agrees({{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1},
                     {wave({10, 10, 4, 3}).permute({3, 2, 0, 1}), wave({9, 9, 4, 5}, 0.2).permute({3, 2, 0, 1})});
  expect_conv_agrees({{1}, {0}, {0}, {1}, 1}, {wave({2, 4, 30}), wave({3, 4, 27}, 0.2)});
  expect_conv_agrees({{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 1}, {wave({1, 3, 6, 6, 6}), wave({2, 3, 5, 5, 5}, 0.2)});
  // A small kernel over a tiny image (ResNet's last stage at 32x32): a forward conv.
  expect_conv_agrees({{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1}, {wave({3, 32, 1, 1}), wave({24, 32, 3, 3}, 0.2)});
  expect_conv_agrees({{2, 2}, {1, 1}, {1, 1}, {1, 1}, 1}, {wave({2, 16, 2, 2}), wave({8, 16, 3, 3}, 0.2)});
}

TEST(ConvFastPaths, WeightGradientShapeIsAKernelInsideItsImageLargerThanTheOutput) {
  using prims::conv_is_weight_gradient_shaped;
  // LeNet's first weight gradient as autodiff builds it (x^T, dy^T -> dW^T).
  EXPECT_TRUE(conv_is_weight_gradient_shaped({1, 16, 20, 20}, {6, 16, 16, 16}, {1, 6, 5, 5}));
  // A 1x1 conv's weight gradient over a 2x2 output: 4 kernel positions, 1 output position.
  EXPECT_TRUE(conv_is_weight_gradient_shaped({8, 4, 2, 2}, {16, 4, 2, 2}, {8, 16, 1, 1}));
  // A 3x3 kernel over a 1x1 image (padding 1): a forward conv of a tiny image.
  EXPECT_FALSE(conv_is_weight_gradient_shaped({3, 32, 1, 1}, {24, 32, 3, 3}, {3, 24, 1, 1}));
  EXPECT_FALSE(conv_is_weight_gradient_shaped({2, 16, 2, 2}, {8, 16, 3, 3}, {2, 8, 1, 1}));
  // An ordinary conv: fewer kernel positions than outputs.
  EXPECT_FALSE(conv_is_weight_gradient_shaped({2, 3, 32, 32}, {8, 3, 3, 3}, {2, 8, 32, 32}));
}

TEST(ConvFastPaths, FewInputChannelsAgreeWithReference) {
  expect_conv_agrees({{1, 1}, {2, 2}, {2, 2}, {1, 1}, 1}, {wave({4, 1, 28, 28}), wave({6, 1, 5, 5}, 0.2), wave({6}, 0.5)});
  expect_conv_agrees({{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1}, {wave({4, 6, 14, 14}), wave({16, 6, 5, 5}, 0.2), wave({16}, 0.5)});
  expect_conv_agrees({{2, 2}, {1, 1}, {1, 1}, {1, 1}, 3}, {wave({2, 6, 9, 9}), wave({9, 2, 3, 3}, 0.2)});
}

void expect_pool_identical(const prims::Pool2dAttrs& a, const Tensor& x) {
  auto [got, want] = both(prims::pool2d_primitive(), a, {x}, [](const prims::Pool2dAttrs& at, auto i, auto o) {
    prims::pool2d_reference(at, i, o);
  });
  ASSERT_EQ(got.size(), 2u);
  const Tensor gv = got[0].contiguous(), wv = want[0].contiguous();
  // Bitwise: the same element is picked, so even NaN payloads match.
  EXPECT_EQ(std::memcmp(gv.data_ptr(), wv.data_ptr(), static_cast<size_t>(gv.numel()) * sizeof(float)), 0);
  EXPECT_EQ(got[1].to_vector<int64_t>(), want[1].to_vector<int64_t>());
  // Without indices (a forward): the dispatched kernel (cpu_max for a plain float32 input)
  // picks the same elements.
  prims::Pool2dAttrs values = a;
  values.with_indices = false;
  auto [vgot, vwant] = both(prims::pool2d_primitive(), values, {x}, [](const prims::Pool2dAttrs& at, auto i, auto o) {
    prims::pool2d_reference(at, i, o);
  });
  ASSERT_EQ(vgot.size(), 1u);
  const Tensor g1 = vgot[0].contiguous(), w1 = vwant[0].contiguous();
  ASSERT_EQ(g1.shape(), wv.shape());
  EXPECT_EQ(std::memcmp(g1.data_ptr(), w1.data_ptr(), static_cast<size_t>(g1.numel()) * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(g1.data_ptr(), wv.data_ptr(), static_cast<size_t>(g1.numel()) * sizeof(float)), 0);
}

TEST(ConvFastPaths, MaxPoolIndicesMatchReferenceExactly) {
  // Ties (rounded values repeat), NaN and -inf windows.
  Tensor x = ops::round(wave({2, 3, 9, 10}) * 2.0);
  auto v = x.to_vector<float>();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 0; i < v.size(); i += 7) v[i] = nan;
  for (size_t i = 3; i < v.size(); i += 11) v[i] = -inf;
  for (size_t i = 0; i < 4; ++i) v[i] = -inf, v[10 + i] = -inf;  // an all -inf window
  Tensor xs = ops::from_vector(v, x.shape());
  for (bool ceil : {false, true}) {
    expect_pool_identical({prims::PoolKind::Max, {2, 2}, {2, 2}, {0, 0}, ceil, true, true}, xs);  // the 2x2 path
    expect_pool_identical({prims::PoolKind::Max, {3, 3}, {2, 2}, {1, 1}, ceil, true, true}, xs);
    expect_pool_identical({prims::PoolKind::Max, {2, 3}, {1, 2}, {1, 0}, ceil, true, true}, xs);
    expect_pool_identical({prims::PoolKind::Max, {2, 2}, {2, 2}, {0, 0}, ceil, true, true}, xs.transpose(2, 3));
  }
  expect_pool_identical({prims::PoolKind::Max, {2, 2}, {2, 2}, {0, 0}, false, true, true}, wave({3, 4, 28, 28}));
  expect_pool_identical({prims::PoolKind::Max, {2, 2}, {2, 2}, {1, 1}, false, true, true}, wave({3, 4, 7, 7}));
  // The unclipped columns run as vectors across up to 256 windows (strides 1 and 2): rows wider
  // than one chunk, windows taller than the plane's edge, kernels over 16 columns (not that path).
  const Tensor wide = ops::round(wave({2, 2, 7, 611}) * 3.0);
  for (bool ceil : {false, true}) {
    expect_pool_identical({prims::PoolKind::Max, {3, 3}, {2, 2}, {1, 1}, ceil, true, true}, wide);
    expect_pool_identical({prims::PoolKind::Max, {3, 3}, {1, 1}, {1, 1}, ceil, true, true}, wide);
    expect_pool_identical({prims::PoolKind::Max, {5, 4}, {2, 1}, {2, 2}, ceil, true, true}, wide);
    expect_pool_identical({prims::PoolKind::Max, {2, 17}, {1, 2}, {0, 8}, ceil, true, true}, wide);
    expect_pool_identical({prims::PoolKind::Max, {2, 16}, {1, 2}, {0, 7}, ceil, true, true}, wide);  // widest coded
    expect_pool_identical({prims::PoolKind::Max, {3, 3}, {2, 3}, {1, 1}, ceil, true, true}, wide);
    expect_pool_identical({prims::PoolKind::Max, {3, 3}, {2, 2}, {1, 1}, ceil, true, true}, xs);
  }
}

TEST(ConvFastPaths, ScatterAddAlongLastAxisMatchesLoop) {
  const Tensor x = wave({2, 3, 8}), src = wave({2, 3, 5}, 0.9);
  const std::vector<int64_t> iv = {0, 7, 7, 3, 0, 1, 1, 1, 1, 1, 2, 4, 6, 4, 2, 5, 5, 0, 7, 3, 6, 6, 6, 0, 1, 2, 3, 4, 5, 6};
  const Tensor idx = ops::from_vector(iv, {2, 3, 5});
  auto want = x.to_vector<float>();
  const auto s = src.to_vector<float>();
  for (size_t r = 0; r < 6; ++r)
    for (size_t j = 0; j < 5; ++j) want[r * 8 + static_cast<size_t>(iv[r * 5 + j])] += s[r * 5 + j];
  EXPECT_EQ(ops::scatter_add(x, 2, idx, src).to_vector<float>(), want);
  EXPECT_EQ(ops::scatter_add(x, -1, idx, src).to_vector<float>(), want);
  auto bad = iv;
  bad[12] = 8;
  EXPECT_THROW(ops::scatter_add(x, 2, ops::from_vector(bad, {2, 3, 5}), src), Error);
  // Large enough for the rows to run on several threads (max pooling's backward): the same
  // values as a serial loop, duplicates summed in index order, and of two bad indices the
  // first in row-major order is the one reported.
  const int64_t rows = 1024, inner = 96, size = 128;
  const Tensor bx = wave({rows, size}), bsrc = wave({rows, inner}, 0.7);
  std::vector<int64_t> bi(static_cast<size_t>(rows * inner));
  for (size_t i = 0; i < bi.size(); ++i) bi[i] = static_cast<int64_t>((i * 37) % 101);
  auto bwant = bx.to_vector<float>();
  const auto bs = bsrc.to_vector<float>();
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r)
    for (size_t j = 0; j < static_cast<size_t>(inner); ++j)
      bwant[r * size + static_cast<size_t>(bi[r * inner + j])] += bs[r * inner + j];
  EXPECT_EQ(ops::scatter_add(bx, 1, ops::from_vector(bi, {rows, inner}), bsrc).to_vector<float>(), bwant);
  bi[900 * inner + 3] = 500;
  bi[100 * inner + 7] = 300;
  try {
    ops::scatter(bx, 1, ops::from_vector(bi, {rows, inner}), bsrc);
    ADD_FAILURE() << "a bad index passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[scatter] index 300 is out of range for axis 1 of size 128"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace spore
