// SPDX-License-Identifier: Apache-2.0
// oneDNN's Winograd kernel for 3x3 stride-1 float32 convs (src/backends/cpu/onednn_conv.cc,
// winograd_shape): it runs where the shape has the work it pays off on, forward, data gradient
// (conv_transpose) and weight gradient alike, agrees with the exact (float64) sums within the
// documented tolerance (max abs error <= 2e-5 of the largest output, 1e-4 for the weight
// gradient; measured 7.3e-6, 3.2e-6 and 4.3e-5 here, where the direct kernel gives 1.3e-6,
// 1.8e-6 and 1.6e-5), and the direct kernel runs on small shapes. With SPORE_CONV_ALGO=direct,
// or where oneDNN may not use AVX-512, the Winograd checks expect the direct kernel instead.
#include <gtest/gtest.h>

#include <spore/spore.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "backends/cpu/onednn_conv.h"
#include "prims/conv.h"
#include "prims/conv_fused.h"
#include "prims/conv_weight_grad.h"
#include "runtime/dispatch.h"
#include "runtime/profile.h"

namespace spore {
namespace {

Tensor wave(const Shape& s, double f) {
  Tensor x = ops::arange(0, numel_of(s), 1, {DType::Float64}).reshape(s);
  return ops::sin(x * f).to(DType::Float32);
}

Buffer buf(const Tensor& t) {
  return {t.data_ptr(), t.dtype(), static_cast<int>(t.dim()), t.shape().data(), t.strides().data()};
}

// Not turned off, and oneDNN may use AVX-512 here: otherwise the direct kernel runs (the
// fallback, checked by `make test`'s run under ONEDNN_MAX_CPU_ISA=AVX2).
bool winograd_allowed() { return cpu::onednn::winograd_available(); }

// Dispatches `p` (noting which kernel ran), runs `ref` on the same inputs in float64 (the exact
// sums, near enough), and returns the float32 result's largest error relative to the largest
// exact value.
template <class Attrs, class Ref>
double relative_error(const Primitive& p, const Attrs& a, const std::vector<Tensor>& ins, const Shape& out_shape, Ref ref,
                      std::string& variant) {
  runtime::profile::note_variant(nullptr);
  const Tensor got = std::move(runtime::dispatch(p, &a, ins).t[0]);
  const char* v = runtime::profile::noted_variant();
  variant = v ? v : "direct";
  Tensor want = ops::empty(out_shape, {DType::Float64});
  std::vector<Tensor> wide;
  for (const Tensor& t : ins) wide.push_back(t.to(DType::Float64).contiguous());
  std::vector<Buffer> ib, ob = {buf(want)};
  for (const Tensor& t : wide) ib.push_back(buf(t));
  ref(a, ib, ob);
  EXPECT_EQ(got.shape(), out_shape);
  const auto g = got.to_vector<double>(), w = want.to_vector<double>();
  double scale = 0, worst = 0;
  for (double x : w) scale = std::max(scale, std::abs(x));
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - w[i]));
  EXPECT_GT(scale, 0.01);
  return worst / scale;
}

const std::string kWino = "onednn winograd";

TEST(ConvWinograd, ForwardDataAndWeightGradientsOnAResNetShape) {
  // (8, 64, 14, 14): a batch of 8, 64 channels in and out.
  const Tensor x = wave({8, 64, 14, 14}, 0.37), w = wave({64, 64, 3, 3}, 0.11) * 0.05, dy = wave({8, 64, 14, 14}, 0.23);
  const std::string want_variant = winograd_allowed() ? kWino : "direct";
  std::string variant;
  prims::ConvAttrs c;
  c.stride = {1, 1}, c.pad_l = {1, 1}, c.pad_r = {1, 1}, c.dilation = {1, 1};
  double e = relative_error(prims::conv_primitive(), c, {x, w}, {8, 64, 14, 14},
                            [](const prims::ConvAttrs& a, auto i, auto o) { prims::conv_reference(a, i, o); }, variant);
  EXPECT_EQ(variant, want_variant);
  EXPECT_LE(e, 2e-5);
  RecordProperty("relative_error", std::to_string(e));
  std::printf("[ConvWinograd] max error / max |y|: %.3g\n", e);
  EXPECT_GT(e, 0.0) << "bitwise equal to the reference: the check could not tell the kernels apart";

  prims::ConvTransposeAttrs t;
  t.stride = {1, 1}, t.padding = {1, 1}, t.output_padding = {0, 0}, t.dilation = {1, 1};
  e = relative_error(prims::conv_transpose_primitive(), t, {dy, w}, {8, 64, 14, 14},
                     [](const prims::ConvTransposeAttrs& a, auto i, auto o) { prims::conv_transpose_reference(a, i, o); },
                     variant);
  EXPECT_EQ(variant, want_variant);
  EXPECT_LE(e, 2e-5);
  RecordProperty("relative_error", std::to_string(e));
  std::printf("[ConvWinograd] max error / max |y|: %.3g\n", e);

  prims::ConvWeightGradAttrs g;
  g.stride = {1, 1}, g.pad_l = {1, 1}, g.pad_r = {1, 1}, g.dilation = {1, 1}, g.kernel = {3, 3};
  e = relative_error(prims::conv_weight_grad_primitive(), g, {x, dy}, {64, 64, 3, 3},
                     [](const prims::ConvWeightGradAttrs& a, auto i, auto o) { prims::conv_weight_grad_reference(a, i, o); },
                     variant);
  EXPECT_EQ(variant, want_variant);
  EXPECT_LE(e, 1e-4);  // sums over 8 x 14 x 14 positions: the direct kernel is at 1.6e-5
  RecordProperty("relative_error", std::to_string(e));
  std::printf("[ConvWinograd] max error / max |y|: %.3g\n", e);
}

// A conv_fused node (level 2's bias + residual + ReLU, oneDNN's sum and eltwise post-ops) runs
// Winograd with its post-ops, and agrees with the unfused ops, whose conv is Winograd too.
TEST(ConvWinograd, FusedBiasResidualReluRunsWinogradWithItsPostOps) {
  // Without Winograd the direct kernels' post-ops hold the O2 tolerance (tests/passes/conv_epilogue_test.cc).
  if (!winograd_allowed()) GTEST_SKIP() << "the direct kernel runs here";
  const Tensor x = wave({8, 64, 14, 14}, 0.37), w = wave({64, 64, 3, 3}, 0.11) * 0.05, b = wave({64}, 0.7);
  const Tensor residual = wave({8, 64, 14, 14}, 0.19);
  prims::ConvFusedAttrs a;
  a.stride = {1, 1}, a.pad_l = {1, 1}, a.pad_r = {1, 1}, a.dilation = {1, 1}, a.has_bias = true;
  a.post_kind = {1, 0}, a.post_ops = "add,relu", a.post_a = {0, 0}, a.post_b = {0, 0};
  const std::vector<Tensor> in = {x, w, b, residual};
  runtime::profile::note_variant(nullptr);
  const Tensor got = std::move(runtime::dispatch(prims::conv_fused_primitive(), &a, in).t[0]);
  const char* v = runtime::profile::noted_variant();
  EXPECT_EQ(std::string(v ? v : "direct"), kWino);
  ops::ConvOptions o;
  o.padding = {1};
  const Tensor want = ops::relu(ops::conv2d(x, w, b, o) + residual);
  const auto g = got.to_vector<float>(), e = want.to_vector<float>();
  ASSERT_EQ(g.size(), e.size());
  double worst = 0, scale = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::abs(g[i] - e[i])));
    scale = std::max(scale, static_cast<double>(std::abs(e[i])));
  }
  EXPECT_LE(worst, 1e-6 * scale);
}

// A post-op list Winograd refuses (SiLU is not among its post-ops) keeps the Winograd conv and
// runs the rest after it: the kernel follows from the shape, so level 2's fused conv and
// PyNative's conv compute the same sums.
TEST(ConvWinograd, RefusedPostOpsRunAfterTheWinogradConv) {
  // Without Winograd the direct kernels' post-ops hold the O2 tolerance (tests/passes/conv_epilogue_test.cc).
  if (!winograd_allowed()) GTEST_SKIP() << "the direct kernel runs here";
  const Tensor x = wave({8, 64, 14, 14}, 0.37), w = wave({64, 64, 3, 3}, 0.11) * 0.05, b = wave({64}, 0.7);
  prims::ConvFusedAttrs a;
  a.stride = {1, 1}, a.pad_l = {1, 1}, a.pad_r = {1, 1}, a.dilation = {1, 1}, a.has_bias = true;
  a.post_kind = {0}, a.post_ops = "silu", a.post_a = {0}, a.post_b = {0};
  runtime::profile::note_variant(nullptr);
  const std::vector<Tensor> in = {x, w, b};
  const Tensor got = std::move(runtime::dispatch(prims::conv_fused_primitive(), &a, in).t[0]);
  const char* v = runtime::profile::noted_variant();
  EXPECT_EQ(std::string(v ? v : "direct"), kWino);
  ops::ConvOptions o;
  o.padding = {1};
  const Tensor want = ops::silu(ops::conv2d(x, w, b, o));
  EXPECT_EQ(ops::amax(ops::abs(got - want), {0, 1, 2, 3}).item<float>(), 0.f);
}

// The documented deviation: an infinite input meets a subtraction in the input transform and
// its tiles' outputs become NaN, where the direct kernel's sums stay infinite.
TEST(ConvWinograd, AnInfiniteInputTurnsItsTilesNaN) {
  if (!winograd_allowed()) GTEST_SKIP() << "the direct kernel runs here";
  std::vector<float> xs(8 * 64 * 14 * 14, 0.5f);
  xs[5 * 14 + 5] = INFINITY;
  const Tensor x = ops::from_vector(xs, {8, 64, 14, 14}), w = ops::abs(wave({64, 64, 3, 3}, 0.11)) * 0.05;
  ops::ConvOptions o;
  o.padding = {1};
  const auto y = ops::conv2d(x, w, {}, o).to_vector<float>();
  int nans = 0, infs = 0;
  for (size_t i = 0; i < 14 * 14; ++i) nans += std::isnan(y[i]), infs += std::isinf(y[i]);
  EXPECT_GT(nans, 0);
  EXPECT_EQ(infs + nans, 16);  // the 4x4 tile around (5, 5) in channel 0's first image
  EXPECT_EQ(y[0], y[0]);       // tiles the infinity does not reach stay finite
}

// Where the transforms cost more than they save the direct kernel runs: 16 channels, batches
// under 8, strides and dilations, groups, other kernel sizes.
TEST(ConvWinograd, SmallOrOtherConvsRunDirect) {
  struct Case {
    Shape x, w;
    int64_t stride, dilation, groups;
  };
  for (const Case& k : {Case{{2, 16, 28, 28}, {16, 16, 3, 3}, 1, 1, 1}, Case{{1, 64, 14, 14}, {64, 64, 3, 3}, 1, 1, 1},
                        Case{{1, 256, 7, 7}, {256, 256, 3, 3}, 1, 1, 1}, Case{{4, 128, 28, 28}, {128, 128, 3, 3}, 1, 1, 1},
                        Case{{8, 64, 28, 28}, {64, 64, 3, 3}, 2, 1, 1},
                        Case{{8, 64, 28, 28}, {64, 64, 3, 3}, 1, 2, 1}, Case{{8, 64, 28, 28}, {64, 32, 3, 3}, 1, 1, 2},
                        Case{{8, 64, 28, 28}, {64, 64, 1, 1}, 1, 1, 1}}) {
    prims::ConvAttrs c;
    const int64_t pad = k.w[2] / 2 * k.dilation;
    c.stride = {k.stride, k.stride}, c.pad_l = {pad, pad}, c.pad_r = {pad, pad}, c.dilation = {k.dilation, k.dilation};
    c.groups = k.groups;
    const int64_t h = (k.x[2] + 2 * pad - k.dilation * (k.w[2] - 1) - 1) / k.stride + 1;
    std::string variant;
    const double e = relative_error(prims::conv_primitive(), c, {wave(k.x, 0.37), wave(k.w, 0.11) * 0.05},
                                    {k.x[0], k.w[0], h, h},
                                    [](const prims::ConvAttrs& a, auto i, auto o) { prims::conv_reference(a, i, o); }, variant);
    EXPECT_EQ(variant, "direct") << shape_str(k.x) << " " << shape_str(k.w);
    EXPECT_LE(e, 2e-5) << shape_str(k.x);
  }
}

}  // namespace
}  // namespace spore
