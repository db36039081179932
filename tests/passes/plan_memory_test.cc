// SPDX-License-Identifier: Apache-2.0
// Memory planning (passes/plan_memory.h): buffers live at the same step never share a byte, and
// on an MLP's gradient graph the planned arena is far below the sum of the intermediates.
#include "passes/plan_memory.h"

#include <gtest/gtest.h>

#include <random>

#include "passes/lower_plan.h"
#include "passes/pipeline.h"
#include "spore/spore.h"
#include "trace_program.h"
#include "runtime/plan.h"
#include "transforms/interpreter.h"

#include <cmath>
#include <set>

namespace spore::passes {
namespace {

using namespace ops;

bool overlap(size_t a0, size_t a1, size_t b0, size_t b1) { return a0 < b1 && b0 < a1; }

void expect_disjoint_when_live(std::span<const BufferLife> b, const MemoryLayout& l) {
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(l.offsets[i] % 64, 0u) << i;
    EXPECT_LE(l.offsets[i] + b[i].bytes, l.peak) << i;
    for (size_t j = i + 1; j < b.size(); ++j) {
      if (b[i].bytes == 0 || b[j].bytes == 0 || !(b[i].first <= b[j].last && b[j].first <= b[i].last)) continue;
      EXPECT_FALSE(overlap(l.offsets[i], l.offsets[i] + b[i].bytes, l.offsets[j], l.offsets[j] + b[j].bytes))
          << "buffers " << i << " and " << j << " are live together and share bytes";
    }
  }
}

TEST(PlanMemory, AChainReusesTheBufferTwoStepsBack) {
  // a -> b -> c -> d: a dies when b is made, so c takes a's bytes.
  const std::vector<BufferLife> b = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 3}};
  const MemoryLayout l = plan_memory(b);
  expect_disjoint_when_live(b, l);
  EXPECT_EQ(l.total, 4 * 1024u);
  EXPECT_EQ(l.peak, 2 * 1024u);
  EXPECT_EQ(l.offsets[0], l.offsets[2]);
}

// Largest first puts the two 256-byte buffers at 0 and leaves a 192-byte one above a gap it
// cannot use (768 bytes); placing the fullest step's buffers first reaches the floor, the most
// bytes live at one step (640).
TEST(PlanMemory, TheOrderByBreadthWinsWhereLargestFirstLeavesAGap) {
  const std::vector<BufferLife> b = {{256, 0, 1}, {256, 4, 4}, {128, 1, 3}, {192, 3, 4}, {192, 3, 5}};
  const MemoryLayout l = plan_memory(b);
  expect_disjoint_when_live(b, l);
  EXPECT_EQ(l.peak, 640u);
}

TEST(PlanMemory, RandomLifetimesNeverShareLiveBytes) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferLife> b(40);
    for (auto& x : b) {
      x.first = static_cast<int64_t>(rng() % 30);
      x.last = x.first + static_cast<int64_t>(rng() % 8);
      x.bytes = rng() % 5000;
    }
    const MemoryLayout l = plan_memory(b);
    expect_disjoint_when_live(b, l);
    EXPECT_LE(l.peak, l.total);
  }
}

// The lifetimes a plan's arena slots have, read back from the plan: made by their step, last
// read directly or through a view.
std::vector<BufferLife> arena_lives(const runtime::Plan& p, std::vector<size_t>& offsets) {
  std::vector<int64_t> first(p.slots.size(), -1), last(p.slots.size(), -1);
  auto root = [&](int32_t s) { return p.slots[size_t(s)].kind == runtime::SlotKind::View ? p.slots[size_t(s)].base : s; };
  for (size_t k = 0; k < p.steps.size(); ++k) {
    for (int32_t s : p.steps[k].in) last[size_t(root(s))] = std::max(last[size_t(root(s))], int64_t(k));
    for (int32_t s : p.steps[k].out) first[size_t(s)] = int64_t(k);
  }
  std::vector<BufferLife> lives;
  for (size_t s = 0; s < p.slots.size(); ++s) {
    const runtime::Slot& sl = p.slots[s];
    if (sl.kind != runtime::SlotKind::Arena) continue;
    lives.push_back({size_t(numel_of(sl.shape)) * dtype_size(sl.dtype), first[s], std::max(first[s], last[s])});
    offsets.push_back(sl.offset);
  }
  return lives;
}

TEST(PlanMemory, MlpGradientArenaIsFarBelowTheSumOfIntermediates) {
  manual_seed(3);
  const auto traced = spore::testing::trace_program(
      [](const std::vector<Tensor>& x) {
        auto loss = [&](const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& w3) {
          return cross_entropy(matmul(relu(matmul(relu(addmm(b1, x[0], w1)), w2)), w3), x[1]);
        };
        auto [v, g] = value_and_grad(loss, {0, 1, 2, 3})(x[2], x[3], x[4], x[5]);
        return std::vector<Tensor>{v, g[0], g[1], g[2], g[3]};
      },
      {normal({64, 100}), randint(0, 10, {64}), normal({100, 128}), normal({128}), normal({128, 64}), normal({64, 10})});
  const auto plan = lower_plan(*optimize(traced.graph, 1), traced.inputs);
  const auto& m = plan->memory;
  std::printf("mlp gradient: arena %zu bytes, intermediates %zu bytes (%.0f%%)\n", m.arena_bytes, m.intermediate_bytes,
              100.0 * double(m.arena_bytes) / double(m.intermediate_bytes));
  EXPECT_LT(double(m.arena_bytes), 0.6 * double(m.intermediate_bytes)) << runtime::plan_str(*plan);
  std::vector<size_t> offsets;
  const auto lives = arena_lives(*plan, offsets);
  ASSERT_GT(lives.size(), 10u);
  MemoryLayout l{offsets, m.arena_bytes, m.intermediate_bytes};
  expect_disjoint_when_live(lives, l);
}

}  // namespace
}  // namespace spore::passes

namespace spore::passes {
namespace {

// A conv + batch norm training step's gradient plan: every step's kernel scratch (oneDNN's
// reorders) lies inside the arena and overlaps no value live at that step, and batch_norm's
// backward is one batch_norm_grad step, conv's weight gradient one conv_weight_grad step.
TEST(PlanMemory, KernelScratchSharesTheArenaWithoutOverlappingLiveValues) {
  const auto traced = spore::testing::trace_program(
      [](const std::vector<Tensor>& x) {
        auto loss = [&](const Tensor& w, const Tensor& g, const Tensor& b) {
          ConvOptions o;
          o.padding = {1};
          o.stride = {2};
          const Tensor y = relu(batch_norm(conv2d(x[0], w, {}, o), g, b, {}, {}, true));
          return sum(y * y);
        };
        auto [v, gr] = value_and_grad(loss, {0, 1, 2})(x[1], x[2], x[3]);
        return std::vector<Tensor>{v, gr[0], gr[1], gr[2]};
      },
      {normal({4, 16, 12, 12}), normal({32, 16, 3, 3}) * 0.1, normal({32}) + 1.0, normal({32})});
  const auto plan = lower_plan(*optimize(traced.graph, 1), traced.inputs);
  std::set<std::string> prims;
  for (const auto& st : plan->steps) prims.insert(st.prim->name);
  EXPECT_TRUE(prims.count("batch_norm_grad")) << runtime::plan_str(*plan);
  EXPECT_TRUE(prims.count("conv_weight_grad")) << runtime::plan_str(*plan);
  // Live range of each arena slot: its producing step to its last reader (through views).
  const size_t n = plan->slots.size();
  std::vector<int64_t> first(n, -1), last(n, -1);
  auto root = [&](int32_t s) {
    const auto& sl = plan->slots[static_cast<size_t>(s)];
    return sl.kind == runtime::SlotKind::View ? static_cast<size_t>(sl.base) : static_cast<size_t>(s);
  };
  for (size_t k = 0; k < plan->steps.size(); ++k) {
    for (int32_t s : plan->steps[k].out) first[root(s)] = first[root(s)] < 0 ? static_cast<int64_t>(k) : first[root(s)];
    for (int32_t s : plan->steps[k].in) last[root(s)] = static_cast<int64_t>(k);
  }
  int scratch_steps = 0;
  for (size_t k = 0; k < plan->steps.size(); ++k) {
    const auto& st = plan->steps[k];
    if (st.scratch_bytes == 0) continue;
    ++scratch_steps;
    const size_t b = st.scratch_offset, e = b + st.scratch_bytes;
    EXPECT_LE(e, plan->memory.arena_bytes) << st.prim->name;
    for (size_t s = 0; s < n; ++s) {
      const auto& sl = plan->slots[s];
      if (sl.kind != runtime::SlotKind::Arena || first[s] < 0) continue;
      const int64_t end = sl.invariant ? static_cast<int64_t>(plan->steps.size()) : std::max(first[s], last[s]);
      if (first[s] > static_cast<int64_t>(k) || end < static_cast<int64_t>(k)) continue;
      const size_t vb = sl.offset, ve = vb + static_cast<size_t>(numel_of(sl.shape)) * dtype_size(sl.dtype);
      EXPECT_TRUE(e <= vb || ve <= b) << "step " << k << " (" << st.prim->name << ") scratch [" << b << ", " << e
                                      << ") overlaps live slot $" << s << " [" << vb << ", " << ve << ")";
    }
  }
  EXPECT_GT(scratch_steps, 0) << runtime::plan_str(*plan);
  // And the plan computes what the interpreter does.
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  const auto got = runtime::run(*plan, traced.inputs);
  for (size_t i = 0; i < want.size(); ++i) {
    const auto a = got[i].to(DType::Float64).to_vector<double>(), w = want[i].to(DType::Float64).to_vector<double>();
    for (size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], w[j], 1e-4 * (1 + std::abs(w[j]))) << "output " << i;
  }
}

}  // namespace
}  // namespace spore::passes
