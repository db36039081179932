// SPDX-License-Identifier: Apache-2.0
// The plan layout pass (passes/plan_layout.h) beyond conv chains: elementwise kernels pass a
// channels-last layout on (they iterate in their output's memory order), inference batch norm
// computes on channels-last rows, a pool between a channels-last input and a row-major result
// makes it in the input's layout; values away from any conv stay row-major. Each plan against the
// interpreter of the unoptimized graph.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>

#include "passes/lower_plan.h"
#include "passes/pipeline.h"
#include "runtime/plan.h"
#include "spore/spore.h"
#include "trace_program.h"
#include "transforms/interpreter.h"

namespace spore::passes {
namespace {

using namespace ops;

Tensor r(const Shape& s, uint64_t seed, double scale = 0.5) {
  int64_t n = 1;
  for (Dim d : s) n *= d;
  return (sin(arange(0, n, 1).to(DType::Float32) * (0.37 + 0.01 * static_cast<double>(seed))) * scale).reshape(s);
}

double worst_rel(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  const auto a = got.to(DType::Float64).to_vector<double>(), b = want.to(DType::Float64).to_vector<double>();
  double w = 0;
  for (size_t i = 0; i < a.size(); ++i) w = std::max(w, std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i])));
  return w;
}

// Which step kinds write channels-last values.
std::multiset<std::string> channels_last_makers(const runtime::Plan& plan) {
  std::multiset<std::string> m;
  for (const auto& st : plan.steps)
    for (int32_t s : st.out)
      if (plan.slots[static_cast<size_t>(s)].channels_last) m.insert(st.prim->name);
  return m;
}

// At O1 (nothing fused, no epilogue): conv -> batch norm (inference) -> relu -> + residual ->
// conv. Every value between the convs is channels-last, made by the unfused batch_norm, relu and
// add kernels; the results match the row-major plan and the interpreter.
TEST(PlanLayout, ElementwiseAndInferenceBatchNormKeepAConvChainChannelsLast) {
  const int64_t C = 32;
  const Tensor w1 = r({C, C, 3, 3}, 1, 0.1), w2 = r({C, C, 3, 3}, 2, 0.1);
  const Tensor bw = r({C}, 3) + 1.0, bb = r({C}, 4), bm = r({C}, 5), bv = abs(r({C}, 6)) + 0.5;
  ConvOptions p;
  p.padding = {1};
  auto net = [&](const std::vector<Tensor>& in) {
    const Tensor a = conv2d(in[0], w1, {}, p);
    const Tensor y = relu(batch_norm(a, bw, bb, bm, bv, false)) + a;
    return std::vector<Tensor>{conv2d(y, w2, {}, p)};
  };
  const Tensor x = r({2, C, 9, 7}, 7);
  const auto traced = spore::testing::trace_program(net, {x});
  const ir::GraphPtr g = optimize(traced.graph, 1);
  const auto plan = lower_plan(*g, traced.inputs);
  const auto made = channels_last_makers(*plan);
  for (const char* k : {"conv", "batch_norm", "relu", "add"})
    EXPECT_EQ(made.count(k), 1u) << k << " should write a channels-last value\n" << runtime::plan_str(*plan);
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  EXPECT_LE(worst_rel(runtime::run(*plan, traced.inputs)[0], want[0]), 1e-5);
  ::setenv("SPORE_PLAN_LAYOUT", "plain", 1);
  const auto plain = lower_plan(*g, traced.inputs);
  ::unsetenv("SPORE_PLAN_LAYOUT");
  EXPECT_TRUE(channels_last_makers(*plain).empty());
  EXPECT_LE(worst_rel(runtime::run(*plain, traced.inputs)[0], runtime::run(*plan, traced.inputs)[0]), 1e-6);
}

// A max pool whose input is channels-last (a conv's) and whose result is the plan's own output
// (row-major): made in the input's layout, then reordered; and elementwise ops with no conv
// before them stay row-major even though their kernels could compute channels-last.
TEST(PlanLayout, MixedLayoutPoolAndElementwiseChainsWithoutAConv) {
  const Tensor w = r({32, 16, 3, 3}, 11, 0.2);
  PoolOptions po;
  po.kernel = {3};
  po.stride = {2};
  po.padding = {1};
  auto net = [&](const std::vector<Tensor>& in) {
    const Tensor c = conv2d(in[0], w);
    const Tensor e = exp(in[1] * 0.5) + in[1];
    return std::vector<Tensor>{max_pool2d(c, po), e * 2.0};
  };
  const Tensor x = r({2, 16, 12, 10}, 12), z = r({2, 3, 4, 5}, 13);
  const auto traced = spore::testing::trace_program(net, {x, z});
  const ir::GraphPtr g = optimize(traced.graph, 1);
  const auto plan = lower_plan(*g, traced.inputs);
  EXPECT_EQ(channels_last_makers(*plan), (std::multiset<std::string>{"conv"})) << runtime::plan_str(*plan);
  // The pool makes its result in the conv's layout in scratch, then reorders it (oneDNN has only
  // its reference kernel for a mix).
  for (const auto& st : plan->steps) {
    if (st.prim->name == "pool2d") {
      EXPECT_GT(st.scratch_bytes, 0u) << "no scratch: the mixed-layout pool fell back";
    }
  }
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  for (int call = 0; call < 2; ++call) {
    const auto got = runtime::run(*plan, traced.inputs);
    EXPECT_EQ(worst_rel(got[0], want[0]), 0) << "max pool of the channels-last conv, call " << call;
    EXPECT_LE(worst_rel(got[1], want[1]), 1e-6);
  }
}

// An elementwise op after a conv whose result cannot follow (its reader, adaptive average
// pooling, computes row-major): the conv writes row-major itself, and no kernel reads across the
// channels or copies between layouts.
TEST(PlanLayout, AFollowerWhoseResultCannotFollowKeepsItsConvRowMajor) {
  const Tensor w = r({32, 16, 3, 3}, 31, 0.2), w2 = r({32, 32, 3, 3}, 32, 0.1);
  auto net = [&](const std::vector<Tensor>& in) {
    const Tensor c = conv2d(in[0], w);
    const Tensor y = relu(c);
    return std::vector<Tensor>{adaptive_avg_pool2d(y * 2.0, {1, 1}), conv2d(relu(conv2d(in[0], w * 0.5)), w2)};
  };
  const Tensor x = r({2, 16, 9, 8}, 33);
  const auto traced = spore::testing::trace_program(net, {x});
  const ir::GraphPtr g = optimize(traced.graph, 1);
  const auto plan = lower_plan(*g, traced.inputs);
  // Only the second chain (conv -> relu -> conv) is channels-last.
  EXPECT_EQ(channels_last_makers(*plan), (std::multiset<std::string>{"conv", "relu"})) << runtime::plan_str(*plan);
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  const auto got = runtime::run(*plan, traced.inputs);
  EXPECT_LE(worst_rel(got[0], want[0]), 1e-5);
  EXPECT_LE(worst_rel(got[1], want[1]), 1e-5);
}

// At O2 a fused group between two convs (here a sigmoid gate, which no conv epilogue takes) reads
// and writes channels-last, both of its results together.
TEST(PlanLayout, AFusedGroupBetweenConvsWritesAllItsResultsChannelsLast) {
  const Tensor w1 = r({32, 16, 3, 3}, 21, 0.2), w2 = r({32, 32, 1, 1}, 22, 0.2), w3 = r({32, 32, 1, 1}, 23, 0.2);
  ConvOptions p;
  p.padding = {1};
  auto net = [&](const std::vector<Tensor>& in) {
    // a and b each have two readers, so no conv epilogue takes them: one group makes s and t.
    const Tensor a = conv2d(in[0], w1, {}, p), b = conv2d(in[0], w1 * 0.5, {}, p);
    const Tensor s = sigmoid(a) * b, t = s * s - a * b;
    return std::vector<Tensor>{conv2d(s, w2) + conv2d(t, w3)};
  };
  const Tensor x = r({2, 16, 6, 5}, 24);
  const auto traced = spore::testing::trace_program(net, {x});
  const ir::GraphPtr g = optimize(traced.graph, 2);
  const auto plan = lower_plan(*g, traced.inputs);
  bool fused_two = false;
  for (const auto& st : plan->steps)
    if (st.prim->name == "fused" && st.out.size() == 2)
      fused_two = plan->slots[static_cast<size_t>(st.out[0])].channels_last &&
                  plan->slots[static_cast<size_t>(st.out[1])].channels_last;
  EXPECT_TRUE(fused_two) << runtime::plan_str(*plan);
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  EXPECT_LE(worst_rel(runtime::run(*plan, traced.inputs)[0], want[0]), 1e-5);
}

}  // namespace
}  // namespace spore::passes
