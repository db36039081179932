// SPDX-License-Identifier: Apache-2.0
// The conv_epilogue pass (text IR in -> text IR out), the conv_fused kernels against the unfused
// ops they replace, and the plan layout pass (channels-last activations between convs) against
// the interpreter of the unoptimized graph.
#include "passes/conv_epilogue.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "pass_text.h"
#include "passes/lower_plan.h"
#include "passes/pipeline.h"
#include "prims/conv_fused.h"
#include "runtime/plan.h"
#include "spore/spore.h"
#include "trace_program.h"
#include "transforms/interpreter.h"

namespace spore::passes {
namespace {

using namespace ops;
using testing::canonical;
using testing::parse;
using testing::run_pass;

constexpr const char* kConv = "conv{stride=[1, 1], pad_l=[1, 1], pad_r=[1, 1], dilation=[1, 1], groups=1}";
constexpr const char* kFusedConv =
    "stride=[1, 1], pad_l=[1, 1], pad_r=[1, 1], dilation=[1, 1], groups=1";

std::string text(const std::string& s) {
  std::string r = s;
  for (size_t p; (p = r.find("FCONV")) != std::string::npos;) r.replace(p, 5, kFusedConv);
  for (size_t p; (p = r.find("CONV")) != std::string::npos;) r.replace(p, 4, kConv);
  return r;
}

TEST(PassConvEpilogue, BiasAndReluBecomePostOps) {
  EXPECT_EQ(run_pass(conv_epilogue, text(R"(
graph @main(%0: data float32[2, 16, 8, 8], %1: data float32[32, 16, 3, 3], %2: data float32[32, 1, 1]) {
  %3 = CONV(%0, %1) : float32[2, 32, 8, 8]
  %4 = add{}(%2, %3) : float32[2, 32, 8, 8]
  %5 = relu{a=0, b=0}(%4) : float32[2, 32, 8, 8]
  return %5
})")),
            canonical(R"(
graph @main(%0: data float32[2, 16, 8, 8], %1: data float32[32, 16, 3, 3], %2: data float32[32, 1, 1]) {
  %3 = conv_fused{stride=[1, 1], pad_l=[1, 1], pad_r=[1, 1], dilation=[1, 1], groups=1, has_bias=false, post_kind=[1, 0], post_ops="add,relu", post_a=[1, 0], post_b=[0, 0]}(%0, %1, %2) : float32[2, 32, 8, 8]
  return %3
})"));
}

TEST(PassConvEpilogue, ResidualAndLiteralClampFold) {
  EXPECT_EQ(run_pass(conv_epilogue, text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3], %2: data float32[1, 16, 4, 4]) {
  %3 = CONV(%0, %1) : float32[1, 16, 4, 4]
  %4 = add{}(%3, %2) : float32[1, 16, 4, 4]
  %5 = constant{dtype=float32, weak=false, f=0, i=0}() : float32[]
  %6 = maximum{}(%4, %5) : float32[1, 16, 4, 4]
  %7 = constant{dtype=float32, weak=false, f=6, i=0}() : float32[]
  %8 = minimum{}(%6, %7) : float32[1, 16, 4, 4]
  return %8
})")),
            canonical(text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3], %2: data float32[1, 16, 4, 4]) {
  %3 = conv_fused{FCONV, has_bias=false, post_kind=[1, 2, 2], post_ops="add,maximum,minimum", post_a=[0, 0, 6], post_b=[0, 0, 0]}(%0, %1, %2) : float32[1, 16, 4, 4]
  return %3
})")));
}

TEST(PassConvEpilogue, ChainStopsAtAValueUsedTwiceOrReturned) {
  // The conv result is read twice: nothing folds.
  auto twice = parse(text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3]) {
  %2 = CONV(%0, %1) : float32[1, 16, 4, 4]
  %3 = relu{a=0, b=0}(%2) : float32[1, 16, 4, 4]
  %4 = add{}(%2, %3) : float32[1, 16, 4, 4]
  return %4
})"));
  EXPECT_EQ(conv_epilogue(twice), twice);
  // The relu is returned and read again: the chain ends at the relu.
  const std::string out = run_pass(conv_epilogue, text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3]) {
  %2 = CONV(%0, %1) : float32[1, 16, 4, 4]
  %3 = relu{a=0, b=0}(%2) : float32[1, 16, 4, 4]
  %4 = sigmoid{a=0, b=0}(%3) : float32[1, 16, 4, 4]
  return %3, %4
})"));
  EXPECT_NE(out.find("post_ops=\"relu\""), std::string::npos) << out;
  EXPECT_NE(out.find("sigmoid"), std::string::npos) << out;
  // An operand that would grow the result (a batch of 2 over a batch of 1) does not fold.
  auto grows = parse(text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3], %2: data float32[2, 16, 4, 4]) {
  %3 = CONV(%0, %1) : float32[1, 16, 4, 4]
  %4 = add{}(%3, %2) : float32[2, 16, 4, 4]
  return %4
})"));
  EXPECT_EQ(conv_epilogue(grows), grows);
}

TEST(PassConvEpilogue, AnAddOfTwoConvResultsFoldsIntoOne) {
  // ResNet's downsampling block: relu(conv2(y) + conv_d(x)); the add joins the first chain.
  EXPECT_EQ(run_pass(conv_epilogue, text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3], %2: data float32[16, 16, 3, 3]) {
  %3 = CONV(%0, %1) : float32[1, 16, 4, 4]
  %4 = CONV(%0, %2) : float32[1, 16, 4, 4]
  %5 = add{}(%3, %4) : float32[1, 16, 4, 4]
  %6 = relu{a=0, b=0}(%5) : float32[1, 16, 4, 4]
  return %6
})")),
            canonical(text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3], %2: data float32[16, 16, 3, 3]) {
  %3 = CONV(%0, %2) : float32[1, 16, 4, 4]
  %4 = conv_fused{FCONV, has_bias=false, post_kind=[1, 0], post_ops="add,relu", post_a=[0, 0], post_b=[0, 0]}(%0, %1, %3) : float32[1, 16, 4, 4]
  return %4
})")));
}

TEST(PassConvEpilogue, WeightGradientShapedConvStaysPlain) {
  // The kernel (8x8) covers more positions than the output (3x3): a weight gradient, which the
  // oneDNN kernel runs as backward-weights.
  auto g = parse(R"(
graph @main(%0: data float32[16, 4, 10, 10], %1: data float32[8, 4, 8, 8]) {
  %2 = conv{stride=[1, 1], pad_l=[0, 0], pad_r=[0, 0], dilation=[1, 1], groups=1}(%0, %1) : float32[16, 8, 3, 3]
  %3 = relu{a=0, b=0}(%2) : float32[16, 8, 3, 3]
  return %3
})");
  EXPECT_EQ(conv_epilogue(g), g);
}

TEST(PassConvEpilogue, TinyImageConvTakesItsEpilogue) {
  // A 3x3 kernel over a 1x1 image and output (ResNet's last stage at 32x32 inputs) covers more
  // positions than it outputs, but it is wider than its image: a forward conv, not a weight
  // gradient.
  const std::string out = run_pass(conv_epilogue, R"(
graph @main(%0: data float32[2, 8, 1, 1], %1: data float32[8, 8, 3, 3]) {
  %2 = conv{stride=[1, 1], pad_l=[1, 1], pad_r=[1, 1], dilation=[1, 1], groups=1}(%0, %1) : float32[2, 8, 1, 1]
  %3 = relu{a=0, b=0}(%2) : float32[2, 8, 1, 1]
  return %3
})");
  EXPECT_NE(out.find("conv_fused"), std::string::npos) << out;
  EXPECT_NE(out.find("post_ops=\"relu\""), std::string::npos) << out;
}

TEST(PassConvEpilogue, InferenceBatchNormBecomesScaleAndShift) {
  const std::string out = run_pass(conv_epilogue, text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3], %2: data float32[16], %3: data float32[16], %4: data float32[16], %5: data float32[16]) {
  %6 = CONV(%0, %1) : float32[1, 16, 4, 4]
  %7, %8, %9 = batch_norm{training=false, eps=1e-05, has_weight=true, has_bias=true, has_running=true}(%6, %2, %3, %4, %5) : float32[1, 16, 4, 4], float32[16], float32[16]
  %10 = relu{a=0, b=0}(%7) : float32[1, 16, 4, 4]
  return %10
})"));
  EXPECT_EQ(out.find("batch_norm"), std::string::npos) << out;
  for (const char* op : {"sqrt", "reciprocal", "reshape", "post_ops=\"mul,add,relu\""})
    EXPECT_NE(out.find(op), std::string::npos) << op << " in\n" << out;
  // Training batch norm reads batch statistics: it stays.
  auto training = parse(text(R"(
graph @main(%0: data float32[2, 16, 4, 4], %1: data float32[16, 16, 3, 3]) {
  %2 = CONV(%0, %1) : float32[2, 16, 4, 4]
  %3, %4, %5 = batch_norm{training=true, eps=1e-05, has_weight=false, has_bias=false, has_running=false}(%2) : float32[2, 16, 4, 4], float32[16], float32[16]
  return %3
})"));
  EXPECT_EQ(conv_epilogue(training), training);
}

// With the weights and statistics parameters the graph never writes, the BatchNorm folds into
// the conv's weights and bias (a plan computes them once while they stay unchanged); the ReLU
// stays a post-op.
TEST(PassConvEpilogue, BatchNormOfUnchangingParametersFoldsIntoTheWeights) {
  const std::string out = run_pass(conv_epilogue, text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: constant float32[16, 16, 3, 3], %2: parameter float32[16], %3: constant float32[16], %4: constant float32[16], %5: constant float32[16]) {
  %6 = CONV(%0, %1) : float32[1, 16, 4, 4]
  %7, %8, %9 = batch_norm{training=false, eps=1e-05, has_weight=true, has_bias=true, has_running=true}(%6, %2, %3, %4, %5) : float32[1, 16, 4, 4], float32[16], float32[16]
  %10 = relu{a=0, b=0}(%7) : float32[1, 16, 4, 4]
  return %10
})"));
  EXPECT_NE(out.find("has_bias=true, post_kind=[0], post_ops=\"relu\""), std::string::npos) << out;
  EXPECT_NE(out.find("reshape{shape=[16, 1, 1, 1]}"), std::string::npos) << out;
  // A statistic the graph writes (a buffer) keeps the per-channel post-ops.
  const std::string written = run_pass(conv_epilogue, text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: constant float32[16, 16, 3, 3], %2: buffer float32[16], %3: constant float32[16], %4: constant float32[16], %5: constant float32[16]) {
  %6 = CONV(%0, %1) : float32[1, 16, 4, 4]
  %7, %8, %9 = batch_norm{training=false, eps=1e-05, has_weight=true, has_bias=true, has_running=true}(%6, %2, %3, %4, %5) : float32[1, 16, 4, 4], float32[16], float32[16]
  %10 = mul{}(%2, %2) : float32[16]
  return %7, %10 updates %2
})"));
  EXPECT_NE(written.find("post_ops=\"mul,add\""), std::string::npos) << written;
}

TEST(PassConvEpilogue, BadAttributesFailClearly) {
  auto expect_error = [](const std::string& attrs, const std::string& inputs, const std::string& want) {
    const std::string g = text("graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3], "
                               "%2: data float32[16, 1, 1]) {\n  %3 = conv_fused{FCONV, " + attrs + "}(" + inputs +
                               ") : float32[1, 16, 4, 4]\n  return %3\n}");
    try {
      parse(g);
      ADD_FAILURE() << "parsed: " << attrs;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  expect_error(R"(has_bias=false, post_kind=[3], post_ops="relu", post_a=[0], post_b=[0])", "%0, %1",
               "has kind 3; kinds are 0 (unary)");
  expect_error(R"(has_bias=false, post_kind=[0, 0], post_ops="relu", post_a=[0], post_b=[0])", "%0, %1",
               "need one entry per post-op, got 2, 1, 1, 1");
  expect_error(R"(has_bias=false, post_kind=[1], post_ops="add", post_a=[0], post_b=[0])", "%0, %1",
               "takes x, w and 1 post-op operands, got 2 inputs");
  expect_error(R"(has_bias=false, post_kind=[1], post_ops="add", post_a=[0.5], post_b=[0])", "%0, %1, %2",
               "operand-order flag 0.5");
  expect_error(R"(has_bias=false, post_kind=[1], post_ops="relu", post_a=[0], post_b=[0])", "%0, %1, %2",
               "'relu', not a binary float op");
}

TEST(PassConvEpilogue, NodeRoundTripsAndBadAttributesFailClearly) {
  const std::string g = text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3]) {
  %2 = conv_fused{FCONV, has_bias=false, post_kind=[0], post_ops="relu", post_a=[0], post_b=[0]}(%0, %1) : float32[1, 16, 4, 4]
  return %2
})");
  EXPECT_EQ(canonical(g), canonical(canonical(g)));
  const std::string bad = text(R"(
graph @main(%0: data float32[1, 16, 4, 4], %1: data float32[16, 16, 3, 3]) {
  %2 = conv_fused{FCONV, has_bias=false, post_kind=[0], post_ops="frobnicate", post_a=[0], post_b=[0]}(%0, %1) : float32[1, 16, 4, 4]
  return %2
})");
  try {
    parse(bad);
    ADD_FAILURE() << "an unknown post-op parsed";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("'frobnicate', not a unary float op"), std::string::npos) << e.what();
  }
}

// ---- numerics: the conv_fused kernels and channels-last plans against the unfused graph ----

Tensor r(const Shape& s, uint64_t seed, double scale = 0.5) {
  manual_seed(seed);
  return normal(s, 0, scale);
}

void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const auto a = got.to(DType::Float64).to_vector<double>(), b = want.to(DType::Float64).to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) continue;
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) {
      ADD_FAILURE() << what << ": element " << i << " is " << a[i] << ", want " << b[i];
      return;
    }
    worst = std::max(worst, std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i])));
  }
  EXPECT_LE(worst, tol) << what;
}

// Eager conv then each op vs the conv_fused kernel (oneDNN post-ops where they map): every
// post-op kind, per-channel and full-shape operands, literals on either side, and a post-op
// oneDNN has no form of (exp), which runs after the conv through the unfused kernel.
TEST(ConvFusedKernel, MatchesTheUnfusedOps) {
  const Tensor x = r({2, 16, 6, 6}, 1), w = r({24, 16, 3, 3}, 2, 0.1), b = r({24}, 3);
  const Tensor ch = r({24, 1, 1}, 4), full = r({2, 24, 6, 6}, 5);
  ConvOptions o;
  o.padding = {1};
  const Tensor y = conv2d(x, w, b, o);
  prims::ConvFusedAttrs a;
  a.stride = {1, 1}, a.pad_l = {1, 1}, a.pad_r = {1, 1}, a.dilation = {1, 1}, a.has_bias = true;
  struct Case {
    std::string ops;
    std::vector<int64_t> kinds;
    std::vector<double> pa, pb;
    std::vector<Tensor> operands;
    Tensor want;
  };
  const std::vector<Case> cases = {
      {"mul,add,relu", {1, 1, 0}, {0, 1, 0}, {0, 0, 0}, {ch, full}, relu(full + y * ch)},
      {"add,relu6", {1, 0}, {0, 0}, {0, 0}, {full}, relu6(y + full)},
      {"leaky_relu,sub", {0, 2}, {0.1, 0.5}, {0, 1}, {}, 0.5 - leaky_relu(y, 0.1)},
      {"maximum", {2}, {-0.25}, {0}, {}, clamp(y, -0.25, 1e30)},
      {"minimum", {2}, {0.25}, {0}, {}, clamp(y, -1e30, 0.25)},
      {"maximum,add", {2, 1}, {-0.25, 0}, {0, 0}, {full}, clamp(y, -0.25, 1e30) + full},
      {"mul", {2}, {3}, {0}, {}, y * 3.0},
      {"maximum,minimum", {2, 2}, {-0.25, 0.25}, {0, 0}, {}, clamp(y, -0.25, 0.25)},
      {"minimum,mul", {2, 2}, {0.25, 3}, {0, 0}, {}, clamp(y, -1e30, 0.25) * 3.0},
      {"maximum,minimum,mul", {2, 2, 2}, {-0.25, 0.25, 3}, {0, 0, 0}, {}, clamp(y, -0.25, 0.25) * 3.0},
      {"exp,add", {0, 1}, {0, 0}, {0, 0}, {ch}, exp(y) + ch},
      {"sigmoid,silu", {0, 0}, {0, 0}, {0, 0}, {}, silu(sigmoid(y))},
  };
  for (const Case& c : cases) {
    a.post_kind = prims::IntList(c.kinds.begin(), c.kinds.end());
    a.post_ops = c.ops;
    a.post_a = SmallVec<double, 6>(c.pa.begin(), c.pa.end());
    a.post_b = SmallVec<double, 6>(c.pb.begin(), c.pb.end());
    std::vector<Tensor> in = {x, w, b};
    in.insert(in.end(), c.operands.begin(), c.operands.end());
    const Tensor got = std::move(runtime::dispatch(prims::conv_fused_primitive(), &a, in).t[0]);
    // Exact post-ops (bias, relu, clip, literals) round as the unfused ops do; sigmoid and silu
    // use oneDNN's own approximations.
    expect_close(got, c.want, c.ops.find("sig") == std::string::npos ? 1e-6 : 1e-5, c.ops);
  }
}

// A model file saved after `spore convert --optimize` holds conv_fused nodes; differentiating
// one is a clear error, not a missing-rule message.
TEST(ConvFusedKernel, DifferentiatingACompilerMadeNodeIsAClearError) {
  prims::ConvFusedAttrs a;
  a.stride = {1, 1}, a.pad_l = {0, 0}, a.pad_r = {0, 0}, a.dilation = {1, 1};
  a.post_kind = {0}, a.post_ops = "relu", a.post_a = {0}, a.post_b = {0};
  const Tensor w = r({4, 2, 1, 1}, 3);
  auto f = [&](const Tensor& x) {
    const std::vector<Tensor> in = {x, w};
    return sum(std::move(runtime::dispatch(prims::conv_fused_primitive(), &a, in).t[0]));
  };
  try {
    grad(f)(r({1, 2, 3, 3}, 4));
    ADD_FAILURE() << "grad through conv_fused ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("differentiate the model saved without --optimize"), std::string::npos)
        << e.what();
  }
}

// A ResNet-style basic block and a MobileNetV2-style inverted residual in inference mode,
// traced and run at O2 as a plan: conv_fused nodes with channels-last activations between them,
// against the interpreter of the unoptimized graph; the same plan with every value row-major
// gives the same numbers. The exp (no oneDNN post-op) runs after the conv, over a
// channels-last result and a channels-last residual.
// Infinities pass through literal min/max post-ops (they map to clips with infinite bounds);
// NaN does not pass oneDNN's ReLU (a max instruction): at O2 it becomes 0, the documented
// deviation (conv_epilogue.h), where the unfused ops propagate it.
TEST(ConvFusedKernel, InfinitiesPassAndNaNFollowsTheDocumentedO2Rule) {
  std::vector<float> xs(2 * 16 * 6 * 6, 0.5f);
  xs[1 * 6 + 1] = INFINITY;
  xs[4 * 6 + 4] = -INFINITY;
  Tensor x = from_vector(xs, {2, 16, 6, 6});
  const Tensor w = abs(r({16, 16, 3, 3}, 2, 0.1));
  ConvOptions o;
  o.padding = {1};
  const Tensor y = conv2d(x, w, {}, o);
  prims::ConvFusedAttrs a;
  a.stride = {1, 1}, a.pad_l = {1, 1}, a.pad_r = {1, 1}, a.dilation = {1, 1};
  a.post_kind = {2, 2}, a.post_ops = "maximum,minimum", a.post_a = {-0.25, 0.25}, a.post_b = {0, 0};
  const std::vector<Tensor> in = {x, w};
  expect_close(std::move(runtime::dispatch(prims::conv_fused_primitive(), &a, in).t[0]), clamp(y, -0.25, 0.25), 0,
               "clip of +-inf");
  a.post_kind = {2}, a.post_ops = "maximum", a.post_a = {-0.25}, a.post_b = {0};
  const Tensor kept = std::move(runtime::dispatch(prims::conv_fused_primitive(), &a, in).t[0]);
  EXPECT_EQ(kept.to_vector<float>()[1 * 6 + 1], INFINITY);
  expect_close(kept, maximum(y, zeros(y.shape()) - 0.25), 0, "max keeps +inf");
  xs[2 * 6 + 3] = NAN;
  x = from_vector(xs, {2, 16, 6, 6});
  a.post_kind = {0}, a.post_ops = "relu", a.post_a = {0}, a.post_b = {0};
  const std::vector<Tensor> nan_in = {x, w};
  const auto fused = std::move(runtime::dispatch(prims::conv_fused_primitive(), &a, nan_in).t[0]).to_vector<float>();
  const auto unfused = relu(conv2d(x, w, {}, o)).to_vector<float>();
  int nans = 0;
  for (size_t i = 0; i < fused.size(); ++i) {
    if (std::isnan(unfused[i])) {
      ++nans;
      EXPECT_EQ(fused[i], 0.f) << i;
    } else {
      EXPECT_EQ(fused[i], unfused[i]) << i;
    }
  }
  EXPECT_GT(nans, 0);
}

TEST(ConvFusedPlan, BlockedConvChainsMatchTheUnfusedGraph) {
  const int64_t C = 32;
  auto bn = [](const Tensor& v, uint64_t seed) {
    const int64_t c = v.shape()[1];
    return batch_norm(v, r({c}, seed) + 1.0, r({c}, seed + 1), r({c}, seed + 2), abs(r({c}, seed + 3)) + 0.5, false);
  };
  ConvOptions p1;
  p1.padding = {1};
  ConvOptions dw = p1;
  dw.groups = 2 * C;
  const Tensor w1 = r({C, C, 3, 3}, 10, 0.1), w2 = r({C, C, 3, 3}, 11, 0.1), we = r({2 * C, C, 1, 1}, 12, 0.2);
  const Tensor wd = r({2 * C, 1, 3, 3}, 13, 0.3), wp = r({C, 2 * C, 1, 1}, 14, 0.1), bp = r({C}, 15);
  auto block = [&](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    Tensor y = relu(bn(conv2d(x, w1, {}, p1), 20));
    Tensor z = relu(bn(conv2d(y, w2, {}, p1), 30) + x);                  // basic block
    Tensor e = clamp(bn(conv2d(z, we), 40), 0.0, 6.0);                    // expand, ReLU6
    Tensor d = relu6(bn(conv2d(e, wd, {}, dw), 50));                      // depthwise
    Tensor q = exp(conv2d(d, wp, bp) * 0.1) + z;                          // project; exp has no post-op
    return std::vector<Tensor>{relu(conv2d(q, w1, {}, p1))};
  };
  const Tensor x = r({2, C, 8, 8}, 1);
  const auto traced = spore::testing::trace_program(block, {x});
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  const ir::GraphPtr g = optimize(traced.graph, 2);
  int fused = 0;
  for (const auto& n : g->nodes()) {
    fused += n->op() == prims::kConvFusedOp;
    EXPECT_NE(n->op(), "batch_norm");
  }
  EXPECT_EQ(fused, 6) << ir::print_graph(*g);
  const auto plan = lower_plan(*g, traced.inputs);
  int nhwc = 0;
  for (const auto& s : plan->slots) nhwc += s.channels_last;
  EXPECT_GE(nhwc, 5) << runtime::plan_str(*plan);
  for (int call = 0; call < 2; ++call) {
    const auto got = runtime::run(*plan, traced.inputs);
    expect_close(got[0], want[0], 2e-5, "channels-last plan, call " + std::to_string(call));
  }
  ::setenv("SPORE_PLAN_LAYOUT", "plain", 1);
  const auto plain = lower_plan(*g, traced.inputs);
  ::unsetenv("SPORE_PLAN_LAYOUT");
  for (const auto& s : plain->slots) EXPECT_FALSE(s.channels_last);
  expect_close(runtime::run(*plain, traced.inputs)[0], runtime::run(*plan, traced.inputs)[0], 1e-6,
               "row-major vs channels-last");
}

// BatchNorm of captured parameters folds into the weights (a conv with a bias, a depthwise conv):
// the plan matches the unoptimized graph, computes the fold once (later calls skip it), and
// recomputes it after a parameter changes.
TEST(ConvFusedPlan, BatchNormFoldedIntoWeightsMatchesTheUnfusedGraph) {
  const int64_t C = 32;
  struct Bn {
    Tensor w, b, m, v;
  };
  auto make_bn = [](uint64_t seed) {
    return Bn{r({C}, seed) + 1.0, r({C}, seed + 1), r({C}, seed + 2), abs(r({C}, seed + 3)) + 0.5};
  };
  Bn bn1 = make_bn(60), bn2 = make_bn(70);
  Tensor w1 = r({C, 16, 3, 3}, 80, 0.2), b1 = r({C}, 81), wd = r({C, 1, 3, 3}, 82, 0.3);
  ConvOptions p1;
  p1.padding = {1};
  ConvOptions dw = p1;
  dw.groups = C;
  auto net = [&](const std::vector<Tensor>& in) {
    Tensor y = relu(batch_norm(conv2d(in[0], w1, b1, p1), bn1.w, bn1.b, bn1.m, bn1.v, false));
    return std::vector<Tensor>{relu6(batch_norm(conv2d(y, wd, {}, dw), bn2.w, bn2.b, bn2.m, bn2.v, false))};
  };
  const Tensor x = r({2, 16, 8, 8}, 1);
  const auto traced = spore::testing::trace_program(net, {x});
  const ir::GraphPtr g = optimize(traced.graph, 2);
  const std::string text = ir::print_graph(*g);
  EXPECT_EQ(text.find("post_ops=\"mul,add"), std::string::npos) << "BatchNorm stayed post-ops:\n" << text;
  const auto plan = lower_plan(*g, traced.inputs);
  int invariant = 0;
  for (const auto& st : plan->steps) invariant += st.invariant;
  EXPECT_GT(invariant, 0) << runtime::plan_str(*plan);
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  for (int call = 0; call < 3; ++call)
    expect_close(runtime::run(*plan, traced.inputs)[0], want[0], 2e-5, "call " + std::to_string(call));
  copy_(bn2.v, bn2.v * 2.0);  // a captured parameter changes in place: the fold is recomputed
  const auto want2 = transforms::interpret(*traced.graph, traced.inputs);
  expect_close(runtime::run(*plan, traced.inputs)[0], want2[0], 2e-5, "after the change");
}

// At O1 (no epilogues) a conv -> max pool -> conv chain is channels-last too; a NaN in the input
// sends the pool to its reference kernel, which reads and writes the channels-last strides. A
// conv whose reader computes in row-major memory (sigmoid) keeps its result row-major.
TEST(ConvFusedPlan, ChannelsLastThroughPoolFallbacksAndOnlyWhereReadersTakeIt) {
  const Tensor w1 = r({32, 16, 3, 3}, 40, 0.2), w2 = r({32, 32, 3, 3}, 41, 0.1), w3 = r({32, 32, 1, 1}, 42, 0.1);
  ConvOptions p1;
  p1.padding = {1};
  PoolOptions po;
  po.kernel = {2};
  auto net = [&](const std::vector<Tensor>& in) {
    Tensor a = max_pool2d(conv2d(in[0], w1, {}, p1), po);
    Tensor b = conv2d(a, w2, {}, p1);
    return std::vector<Tensor>{sigmoid(conv2d(b, w3))};
  };
  std::vector<float> xs(static_cast<size_t>(2 * 16 * 8 * 8));
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  xs[5] = NAN;
  const Tensor x = from_vector(xs, {2, 16, 8, 8});
  const auto traced = spore::testing::trace_program(net, {x});
  const ir::GraphPtr g = optimize(traced.graph, 1);
  const auto plan = lower_plan(*g, traced.inputs);
  std::vector<bool> made_nhwc;  // per conv or pool step, in order
  for (const auto& st : plan->steps)
    if (st.prim->name == "conv" || st.prim->name == "pool2d")
      made_nhwc.push_back(plan->slots[static_cast<size_t>(st.out[0])].channels_last);
  // conv1, the pool and conv2 make channels-last values; conv3's result is the sigmoid's.
  EXPECT_EQ(made_nhwc, (std::vector<bool>{true, true, true, false})) << runtime::plan_str(*plan);
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  expect_close(runtime::run(*plan, traced.inputs)[0], want[0], 1e-5, "O1 channels-last plan with a NaN");
}

}  // namespace
}  // namespace spore::passes
