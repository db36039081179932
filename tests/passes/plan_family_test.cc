// SPDX-License-Identifier: Apache-2.0
// Plans of one graph over a symbolic dimension at several sizes (passes/plan_family.h): from the
// second size on they share one memory layout, arena pool and invariant results (here a weight
// scaled by a literal), and each size still computes what the interpreter computes; a plan of
// another structure keeps its own layout, and the first two sizes that agree make the layout.
#include "passes/plan_family.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "ir/parser.h"
#include "passes/lower_plan.h"
#include "spore/spore.h"
#include "transforms/interpreter.h"
#include "transforms/ir_bridge.h"

namespace spore::passes {
namespace {

using runtime::PlanFamily;

ir::GraphPtr parse(const std::string& text) {
  transforms::register_ir_ops();
  return ir::parse_graph(text);
}

// relu(x @ (w * 2) + b): `w * 2` reads a parameter and a literal only (an invariant step).
const char* kDense = R"(graph @f(%0: data float32[n, 8], %1: parameter float32[8, 8], %2: parameter float32[8]) {
  %3 = constant{dtype=float32, weak=true, f=2, i=0}() : ~float32[]
  %4 = mul{}(%1, %3) : float32[8, 8]
  %5 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %4) : float32[n, 8]
  %6 = add{}(%5, %2) : float32[n, 8]
  %7 = relu{a=0, b=0}(%6) : float32[n, 8]
  return %7
})";

// Another structure over the same inputs: no relu.
const char* kAffine = R"(graph @f(%0: data float32[n, 8], %1: parameter float32[8, 8], %2: parameter float32[8]) {
  %3 = matmul{trans_a=false, trans_b=false, alpha=1, beta=1}(%0, %1) : float32[n, 8]
  %4 = add{}(%3, %2) : float32[n, 8]
  return %4
})";

struct Sized {
  std::shared_ptr<runtime::Plan> plan;
  std::vector<Tensor> inputs;
};

Sized lower_at(const ir::Graph& g, int64_t n, const Tensor& w, const Tensor& b, std::shared_ptr<PlanFamily>* family) {
  Sized s;
  s.inputs = {ops::normal({n, 8}), w, b};
  s.plan = lower_plan(g, s.inputs, family);
  return s;
}

void expect_interpreter(const ir::Graph& g, const Sized& s) {
  const auto got = runtime::run(*s.plan, s.inputs)[0].to_vector<float>();
  const auto want = transforms::interpret(g, s.inputs)[0].to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << i;
}

TEST(PlanFamily, SizesShareOneLayoutArenaAndInvariantResults) {
  const ir::GraphPtr g = parse(kDense);
  manual_seed(2);
  Tensor w = ops::normal({8, 8});
  const Tensor b = ops::normal({8});
  std::shared_ptr<PlanFamily> family;
  const Sized a = lower_at(*g, 4, w, b, &family);
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(a.plan->invariant_key, 0u) << "the first size has no layout to join yet";
  const Sized c = lower_at(*g, 6, w, b, &family), d = lower_at(*g, 3, w, b, &family), e = lower_at(*g, 64, w, b, &family);
  EXPECT_EQ(family->adopted(), 3);
  for (const Sized* s : {&d, &e}) {
    EXPECT_EQ(s->plan->pool, c.plan->pool);
    EXPECT_EQ(s->plan->invariant_key, c.plan->invariant_key);
    EXPECT_EQ(s->plan->kept_bytes, c.plan->kept_bytes);
  }
  EXPECT_NE(c.plan->invariant_key, 0u);
  EXPECT_GE(c.plan->kept_bytes, 8u * 8u * 4u);
  EXPECT_LT(d.plan->memory.arena_bytes, e.plan->memory.arena_bytes);
  // The invariant result (w * 2) sits at one offset in every size's plan.
  for (size_t s = 0; s < c.plan->slots.size(); ++s)
    if (c.plan->slots[s].invariant) {
      EXPECT_EQ(d.plan->slots[s].offset, c.plan->slots[s].offset);
      EXPECT_EQ(e.plan->slots[s].offset, c.plan->slots[s].offset);
    }
  expect_interpreter(*g, a);
  expect_interpreter(*g, c);
  const int64_t folds = runtime::invariant_step_runs();
  expect_interpreter(*g, d);  // a smaller size in the same arena: w * 2 is still there
  expect_interpreter(*g, e);  // a larger arena: the kept bytes move with it
  expect_interpreter(*g, c);
  EXPECT_EQ(runtime::invariant_step_runs(), folds);
  // A parameter written in place is seen at every size.
  ops::copy_(w, w * 3.0);
  expect_interpreter(*g, d);
  expect_interpreter(*g, e);
  EXPECT_GT(runtime::invariant_step_runs(), folds);
}

// Calls at mixed sizes from two threads: each takes an arena of the shared pool (the second one
// with kernels of its own, prepared per plan and kept when it switches sizes).
TEST(PlanFamily, ConcurrentCallsAtMixedSizesGetTheirOwnResults) {
  const ir::GraphPtr g = parse(kDense);
  manual_seed(5);
  const Tensor w = ops::normal({8, 8}), b = ops::normal({8});
  std::shared_ptr<PlanFamily> family;
  std::vector<Sized> sizes;
  for (int64_t n : {2, 3, 5, 9}) sizes.push_back(lower_at(*g, n, w, b, &family));
  std::vector<std::vector<float>> want;
  for (const Sized& s : sizes) want.push_back(transforms::interpret(*g, s.inputs)[0].to_vector<float>());
  std::atomic<int> wrong{0};
  auto work = [&](size_t first) {
    for (size_t k = 0; k < 200; ++k) {
      const size_t i = (first + k * 7) % sizes.size();
      const auto got = runtime::run(*sizes[i].plan, sizes[i].inputs)[0].to_vector<float>();
      for (size_t j = 0; j < got.size(); ++j)
        if (std::abs(got[j] - want[i][j]) > 1e-5f * (1 + std::abs(want[i][j]))) ++wrong;
    }
  };
  std::thread t1(work, 0), t2(work, 1);
  t1.join();
  t2.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(PlanFamily, AnotherStructureKeepsItsOwnLayoutAndTheFirstTwoThatAgreeMakeIt) {
  const ir::GraphPtr dense = parse(kDense), affine = parse(kAffine);
  manual_seed(3);
  const Tensor w = ops::normal({8, 8}), b = ops::normal({8});
  std::shared_ptr<PlanFamily> family;
  const Sized a = lower_at(*dense, 4, w, b, &family);
  const Sized c = lower_at(*affine, 5, w, b, &family);  // differs from the first: the next try starts here
  EXPECT_EQ(c.plan->invariant_key, 0u);
  const Sized d = lower_at(*affine, 7, w, b, &family);  // agrees with size 5: the layout is made
  EXPECT_NE(d.plan->invariant_key, 0u);
  const Sized e = lower_at(*dense, 6, w, b, &family);  // the other structure: its own layout
  EXPECT_EQ(e.plan->invariant_key, 0u);
  EXPECT_NE(e.plan->pool, d.plan->pool);
  EXPECT_EQ(family->adopted(), 1);
  expect_interpreter(*affine, d);
  expect_interpreter(*dense, e);
  expect_interpreter(*dense, a);
}

}  // namespace
}  // namespace spore::passes
