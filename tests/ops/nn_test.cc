// SPDX-License-Identifier: Apache-2.0
// nn ops: error messages, in-place running statistics, thread-count independence and the
// large-tensor paths the oracle does not reach (numerics are checked by tests/oracle).
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <cmath>
#include <limits>

#include <spore/spore.h>

#include "prims/batch_norm.h"
#include "prims/batch_norm_grad.h"
#include "prims/group_norm.h"
#include "prims/layer_norm.h"
#include "prims/rms_norm.h"
#include "prims/softmax.h"
#include "runtime/dispatch.h"
#include "trace_program.h"

namespace spore {
namespace {

using namespace ops;

// Expects `f` to throw spore::Error whose message contains `text`.

Tensor ramp(const Shape& s, double scale = 0.01) {
  int64_t n = 1;
  for (Dim d : s) n *= d;
  return (ops::sin(arange(0, n, 1).to(DType::Float32) * 0.37) * (scale * 100)).reshape(s);
}

TEST(NnErrors, LayerNormShapeMismatchNamesShapes) {
  expect_error([] { layer_norm(zeros({2, 4}), {5}); },
               "[layer_norm] normalized_shape (5,) does not match the trailing dims of input shape (2, 4)");
  expect_error([] { layer_norm(zeros({2, 4}), {4}, ones({3})); }, "[layer_norm] weight has shape (3,)");
  expect_error([] { rms_norm(zeros({2, 4}), {2, 5}); }, "[rms_norm] normalized_shape (2, 5) does not match");
}

TEST(NnErrors, EmbeddingIndexOutOfRange) {
  expect_error([] { embedding(zeros({10, 3}), tensor({1, 10})); },
               "[embedding] index 10 at flat position 1 is out of range for a table of 10 rows");
  expect_error([] { embedding(zeros({10, 3}), tensor({-1})); }, "[embedding] index -1");
  expect_error([] { embedding(zeros({10}), tensor({1})); }, "[embedding] weight must be 2-D");
  expect_error([] { embedding(zeros({10, 3}), tensor({1.f})); }, "[embedding] indices must be an integer tensor");
}

TEST(NnErrors, LossTargets) {
  expect_error([] { nll_loss(zeros({4, 5}), zeros({3}, {DType::Int64})); },
               "[nll_loss] target shape (3,) does not match input shape (4, 5): expected (4,)");
  expect_error([] { nll_loss(zeros({2, 5}), tensor({1, 7})); },
               "[nll_loss] target 7 at flat position 1 is out of range for 5 classes");
  // The shared nll kernel reports a bad target under the name of the op that was called.
  expect_error([] { cross_entropy(zeros({2, 5}), tensor({1, 7})); },
               "[cross_entropy] target 7 at flat position 1 is out of range for 5 classes");
  expect_error([] { cross_entropy(zeros({2, 5}), tensor({-2, 1}), {}, -100, Reduction::None, 0.1); },
               "[cross_entropy] target -2 at flat position 0");
  expect_error([] { cross_entropy(zeros({2, 5}), tensor({1, 2}), ones({4})); },
               "[cross_entropy] weight has shape (4,) but input shape (2, 5) has 5 classes");
  expect_error([] { cross_entropy(zeros({2, 5}), zeros({2, 4})); },
               "[cross_entropy] class-probability target shape (2, 4) does not match logits shape (2, 5)");
  expect_error([] { cross_entropy(zeros({2, 5}), zeros({2, 5}), {}, 3); }, "ignore_index (3) is not supported");
  expect_error([] { cross_entropy(zeros({2, 5}), tensor({1, 2}), {}, -100, Reduction::Mean, 1.5); },
               "label_smoothing must be in [0, 1]");
}

TEST(NnErrors, NormsAndOthers) {
  expect_error([] { softmax(arange(4)); }, "[softmax] needs a floating input, got int64");
  expect_error([] { softmax(zeros({2, 3}), 2); }, "softmax");
  expect_error([] { group_norm(zeros({2, 6, 3}), 4); }, "[group_norm] 6 channels (input shape (2, 6, 3)) cannot be split into 4 groups");
  expect_error([] { batch_norm(zeros({2, 3}), {}, {}, {}, {}, false); }, "[batch_norm] inference (training=false) needs running_mean");
  expect_error([] { batch_norm(zeros({1, 3}), {}, {}, {}, {}, true); }, "training needs more than 1 value per channel");
  expect_error([] { batch_norm(zeros({2, 3}), {}, {}, zeros({4}), ones({4}), true); },
               "[batch_norm] running statistics have shape (4,) but input shape (2, 3) needs (3,)");
  expect_error([] { interpolate(zeros({1, 1, 2, 2}), {4, 4}, InterpolateMode::Nearest, true); },
               "align_corners applies only to bilinear");
  expect_error([] { interpolate(zeros({1, 2, 2}), {4, 4}); }, "[interpolate] needs an input (N, C, H, W), got shape (1, 2, 2)");
  expect_error([] { scaled_dot_product_attention(zeros({2, 4}), zeros({3, 5}), zeros({3, 2})); },
               "differ in the last (embedding) dim");
}

TEST(NnErrors, AttentionMaskShape) {
  Tensor q = zeros({2, 3, 5, 8}), k = zeros({2, 3, 7, 8}), v = zeros({2, 3, 7, 4});
  // Checked up front: it used to surface as an [add] (float mask) or [where] (bool) error.
  expect_error([&] { scaled_dot_product_attention(q, k, v, zeros({5, 6})); },
               "[scaled_dot_product_attention] mask shape (5, 6) does not broadcast to the attention scores shape "
               "(2, 3, 5, 7)");
  expect_error([&] { scaled_dot_product_attention(q, k, v, ones({4, 7}, {DType::Bool})); },
               "[scaled_dot_product_attention] mask shape (4, 7) does not broadcast");
  // A mask may not enlarge the scores (PyTorch adds it in place).
  expect_error([&] { scaled_dot_product_attention(q, k, v, zeros({4, 2, 3, 5, 7})); },
               "mask shape (4, 2, 3, 5, 7) does not broadcast to the attention scores shape (2, 3, 5, 7)");
  expect_error([&] { scaled_dot_product_attention(q, k, v, zeros({5, 7}, {DType::Int64})); },
               "[scaled_dot_product_attention] mask must be bool (true = attend) or an additive float mask, got int64");
  expect_error([&] { scaled_dot_product_attention(q, zeros({4, 7, 8}), zeros({4, 7, 4})); },
               "[scaled_dot_product_attention] shapes (2, 3) and (4,) cannot broadcast");
  EXPECT_EQ(scaled_dot_product_attention(q, k, v, zeros({3, 1, 7})).shape(), (Shape{2, 3, 5, 4}));
  EXPECT_EQ(scaled_dot_product_attention(q, k, v, ones({1, 5, 1}, {DType::Bool})).shape(), (Shape{2, 3, 5, 4}));
}

TEST(NnErrors, AdaptivePoolOfEmptyPlane) {
  // PyTorch refuses an empty H or W (the average would be 0/0 = NaN); empty N or C are fine.
  expect_error([] { adaptive_avg_pool2d(zeros({1, 1, 0, 4}), {2, 2}); },
               "[adaptive_avg_pool2d] input (1, 1, 0, 4) is empty on dim 2; H and W must be non-zero");
  expect_error([] { adaptive_avg_pool2d(zeros({1, 4, 0}), {2, 2}); }, "[adaptive_avg_pool2d] input (1, 4, 0) is empty on dim 2");
  expect_error([] { adaptive_avg_pool2d(zeros({1, 0, 4}), {2, 2}); }, "[adaptive_avg_pool2d] input (1, 0, 4) is empty on dim 1");
  EXPECT_EQ(adaptive_avg_pool2d(zeros({0, 1, 4, 4}), {2, 2}).shape(), (Shape{0, 1, 2, 2}));
  EXPECT_EQ(adaptive_avg_pool2d(zeros({1, 0, 4, 4}), {2, 2}).shape(), (Shape{1, 0, 2, 2}));
  EXPECT_EQ(adaptive_avg_pool2d(zeros({0, 4, 4}), {2, 2}).shape(), (Shape{0, 2, 2}));
}

TEST(NnBatchNorm, UpdatesRunningStatsInPlace) {
  Tensor x = ramp({4, 3, 5});
  // A strided running mean (every other element of a buffer) must be written through its view.
  Tensor buf = zeros({6});
  Tensor rm = buf.slice(0, 0, 6, 2), rv = ones({3});
  const uint64_t vm = rm.version(), vv = rv.version();
  Tensor y = batch_norm(x, {}, {}, rm, rv, true, 0.25);
  EXPECT_GT(rm.version(), vm);
  EXPECT_GT(rv.version(), vv);
  // Channel 0 statistics by hand.
  std::vector<float> xv = x.to_vector<float>();
  double s = 0, ss = 0;
  for (int n = 0; n < 4; ++n)
    for (int i = 0; i < 5; ++i) s += xv[n * 15 + i];
  const double mean = s / 20;
  for (int n = 0; n < 4; ++n)
    for (int i = 0; i < 5; ++i) ss += (xv[n * 15 + i] - mean) * (xv[n * 15 + i] - mean);
  EXPECT_NEAR(buf.to_vector<float>()[0], 0.25 * mean, 1e-6);
  EXPECT_EQ(buf.to_vector<float>()[1], 0.0f);  // the gap between strided elements is untouched
  EXPECT_NEAR(rv.to_vector<float>()[0], 0.75 + 0.25 * ss / 19, 1e-5);
  EXPECT_NEAR(y.to_vector<float>()[0], (xv[0] - mean) / std::sqrt(ss / 20 + 1e-5), 1e-5);
  // Inference leaves the running statistics alone.
  const uint64_t v2 = rm.version();
  batch_norm(x, {}, {}, rm, rv, false);
  EXPECT_EQ(rm.version(), v2);
}

TEST(NnNumerics, ResultsDoNotDependOnThreads) {
  const int saved = num_threads();
  Tensor x = ramp({300, 257});
  Tensor logits = ramp({4000, 7});
  Tensor target = (arange(0, 4000, 1) * 3).to(DType::Int64);
  target = target - (target.to(DType::Float64) / 7).to(DType::Int64) * 7;
  std::vector<std::vector<float>> r;
  for (int t : {1, 2}) {
    set_num_threads(t);
    std::vector<float> v = softmax(x, 0).to_vector<float>();
    for (float f : layer_norm(x, {257}).to_vector<float>()) v.push_back(f);
    for (float f : group_norm(x.reshape({20, 15, 257}), 5).to_vector<float>()) v.push_back(f);
    for (float f : batch_norm(x.reshape({20, 15, 257}), {}, {}, {}, {}, true).to_vector<float>()) v.push_back(f);
    v.push_back(cross_entropy(logits, target).item<float>());
    r.push_back(v);
  }
  set_num_threads(saved);
  EXPECT_EQ(r[0], r[1]);
}

TEST(NnNumerics, LargeSoftmaxStreamingPath) {
  // 4096 x 1000 float32 is above the non-temporal store threshold; rows have odd alignment.
  Tensor x = ramp({4096, 1001}).slice(1, 1, 1001);
  Tensor y = softmax(x.contiguous(), -1);
  Tensor ref = softmax(x.to(DType::Float64), -1);
  std::vector<float> yv = y.to_vector<float>();
  std::vector<double> rv = ref.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < yv.size(); ++i) worst = std::max(worst, std::abs(yv[i] - rv[i]) / (rv[i] + 1e-30));
  EXPECT_LT(worst, 1e-5);
  Tensor ly = log_softmax(x.contiguous(), -1);
  EXPECT_NEAR(ly.to_vector<float>()[5], std::log(rv[5]), 1e-5);
}

TEST(NnNumerics, RmsNormDefaultEpsIsMachineEpsilon) {
  Tensor x = ramp({3, 8}, 1e-5);  // tiny values make eps visible
  EXPECT_EQ(rms_norm(x, {8}).to_vector<float>(),
            rms_norm(x, {8}, {}, std::numeric_limits<float>::epsilon()).to_vector<float>());
  EXPECT_NE(rms_norm(x, {8}).to_vector<float>(), rms_norm(x, {8}, {}, 1e-6).to_vector<float>());
}

TEST(NnAttention, CausalFirstQueryAttendsOnlyToFirstKey) {
  Tensor q = ramp({1, 4, 8}), k = ramp({1, 6, 8}, 0.02), v = ramp({1, 6, 3}, 0.05);
  Tensor y = scaled_dot_product_attention(q, k, v, {}, true);
  EXPECT_EQ(y.shape(), (Shape{1, 4, 3}));
  std::vector<float> yv = y.to_vector<float>(), vv = v.to_vector<float>();
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(yv[j], vv[j], 1e-6);
}

// The decompositions (public-op forms of the fused primitives) agree with the kernels.

template <class A>
void check_decomposition(const Primitive& p, const A& a, const std::vector<Tensor>& in) {
  SCOPED_TRACE(p.name);
  ASSERT_NE(p.decomposition, nullptr);
  auto o = runtime::dispatch(p, &a, in);
  std::vector<Tensor> d;
  p.decomposition(&a, in, d);
  ASSERT_EQ(static_cast<int>(d.size()), o.n);
  for (int i = 0; i < o.n; ++i) {
    EXPECT_EQ(d[i].shape(), o.t[i].shape()) << "output " << i;
    EXPECT_EQ(d[i].dtype(), o.t[i].dtype()) << "output " << i;
    std::vector<double> got = o.t[i].template to_vector<double>(), want = d[i].template to_vector<double>();
    for (size_t j = 0; j < got.size(); ++j) EXPECT_NEAR(got[j], want[j], 1e-4 * (1 + std::abs(want[j]))) << i << "," << j;
  }
}

TEST(NnDecomposition, MatchesKernels) {
  Tensor x = ramp({3, 4, 5});
  check_decomposition(prims::softmax_primitive(), prims::SoftmaxAttrs{1}, {x});
  check_decomposition(prims::log_softmax_primitive(), prims::SoftmaxAttrs{2}, {x});
  check_decomposition(prims::layer_norm_primitive(), prims::LayerNormAttrs{1, 1e-5, true, true},
                      {x, ramp({4, 5}, 0.02), ramp({4, 5}, 0.03)});
  check_decomposition(prims::rms_norm_primitive(), prims::RmsNormAttrs{2, 1e-6, true}, {x, ramp({5}, 0.02)});
  check_decomposition(prims::group_norm_primitive(), prims::GroupNormAttrs{2, 1e-5, true, false}, {x, ramp({4}, 0.02)});
  check_decomposition(prims::batch_norm_primitive(), prims::BatchNormAttrs{true, 1e-5, false, true, false},
                      {x, ramp({4}, 0.02)});
  check_decomposition(prims::batch_norm_primitive(), prims::BatchNormAttrs{false, 1e-5, false, false, true},
                      {x, ramp({4}, 0.02), ones({4}) * 1.5});
  check_decomposition(prims::layer_norm_primitive(), prims::LayerNormAttrs{2, 1e-5, false, false},
                      {x.to(DType::BFloat16)});
}

// batch_norm's kernel beside the usual case. An empty batch in inference still returns the
// running statistics; a channels-last result of a row-major x (what a plan could hand it) is
// computed in a block and copied into its strides.
TEST(NnKernels, BatchNormEmptyBatchAndAStridedResult) {
  const Primitive& p = prims::batch_norm_primitive();
  const Tensor rm = ramp({3}, 0.01), rv = abs(ramp({3}, 0.02)) + 0.5;
  prims::BatchNormAttrs eval{false, 1e-5, false, false, true};
  auto o = runtime::call_multi(p, eval, {zeros({0, 3, 2, 2}), rm, rv});
  EXPECT_EQ(o.t[0].numel(), 0);
  EXPECT_EQ(o.t[1].to_vector<float>(), rm.to_vector<float>());
  EXPECT_EQ(o.t[2].to_vector<float>(), rv.to_vector<float>());

  const Tensor x = ramp({2, 3, 4, 5});
  const Tensor want = runtime::call(p, eval, {x, rm, rv});
  const Tensor y = empty({2, 4, 5, 3}).permute({0, 3, 1, 2});  // channels-last memory, (N, C, H, W) view
  const Tensor m = empty({3}), v = empty({3});
  auto buf = [](const Tensor& t) {
    return Buffer{const_cast<void*>(t.data_ptr()), t.dtype(), static_cast<int>(t.dim()), t.shape().data(), t.strides().data()};
  };
  const Buffer in[] = {buf(x), buf(rm), buf(rv)};
  const Buffer out[] = {buf(y), buf(m), buf(v)};
  p.kernels[static_cast<int>(DeviceType::CPU)][0].run(&eval, std::span<const Buffer>(in), std::span<const Buffer>(out), KernelContext{});
  EXPECT_EQ(y.contiguous().to_vector<float>(), want.to_vector<float>());
}

// Only the statistics outputs get a cotangent (ct of y undefined, batch_norm takes sparse
// cotangents): d sum(mean)/dx = 1/n and d sum(var)/dx = 2 (x - mean) / n per channel.
TEST(NnGrad, BatchNormStatisticsAloneDifferentiate) {
  const Tensor x = ramp({2, 3, 2, 2}, 0.03) + 0.1;
  prims::BatchNormAttrs train{true, 1e-5, false, false, false};
  auto f = [&](const Tensor& t) {
    auto o = runtime::call_multi(prims::batch_norm_primitive(), train, {t});
    return sum(o.t[1]) + sum(o.t[2]);
  };
  const Tensor g = grad(f)(x);
  const Tensor mu = mean(x, {0, 2, 3}, true);
  const Tensor want = (x - mu) * (2.0 / 8.0) + 1.0 / 8.0;
  const auto a = g.to_vector<float>(), b = want.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << i;
}

// batch_norm's vjp in training is one batch_norm_grad node in the traced gradient graph.
TEST(NnGrad, TrainingBatchNormBackwardIsOneBatchNormGradNode) {
  const Tensor x = ramp({4, 3, 5, 5}), w = ramp({3}, 0.02) + 1.0, b = ramp({3}, 0.03);
  const auto traced = spore::testing::trace_program(
      [&](const std::vector<Tensor>& in) {
        auto [v, g] = value_and_grad([&](const Tensor& t) { return sum(batch_norm(t, w, b, {}, {}, true) * in[0]); })(in[0]);
        return std::vector<Tensor>{v, g};
      },
      {x});
  int grads = 0, others = 0;
  for (const auto& n : traced.graph->nodes()) {
    grads += n->op() == "batch_norm_grad";
    others += n->op() == "rsqrt";  // the unfused formula's first step
  }
  EXPECT_EQ(grads, 1);
  EXPECT_EQ(others, 0);
}

// batch_norm_grad's kernel (vector loops with four accumulators over rows of 323, and their
// tails) against its formula; a strided dy (a transposed view) is packed first; bf16 computes
// in float32 and rounds dx.
TEST(NnDecomposition, BatchNormGradMatchesItsFormula) {
  const Tensor x = ramp({4, 3, 17, 19}) + 0.3, dy = ramp({4, 3, 19, 17}, 0.013).transpose(2, 3);
  const Tensor mean = ramp({3}, 0.002) + 0.3, var = abs(ramp({3}, 0.003)) + 0.5;
  check_decomposition(prims::batch_norm_grad_primitive(), prims::BatchNormGradAttrs{1e-5, true},
                      {dy, x, mean, var, ramp({3}, 0.02)});
  check_decomposition(prims::batch_norm_grad_primitive(), prims::BatchNormGradAttrs{1e-3, false},
                      {dy.to(DType::Float64), x.to(DType::Float64), mean.to(DType::Float64), var.to(DType::Float64)});
  check_decomposition(prims::batch_norm_grad_primitive(), prims::BatchNormGradAttrs{1e-5, false},
                      {dy.to(DType::BFloat16), x.to(DType::BFloat16), mean, var});
}

}  // namespace
}  // namespace spore
