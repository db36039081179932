// SPDX-License-Identifier: Apache-2.0
// The fused optimizer update at O2 (issue 4): an SGD-momentum step of an MLP whose weights are
// kept [out, in] (as nn::Dense keeps them, so their gradients come out of the backward
// transposed) becomes one fused node per parameter writing the momentum buffer and the
// parameter in place: both of its outputs are donated, no state is copied, the buffers keep
// their addresses, and the results agree with O1 within the O2 tolerance (jit_compare.h). The
// fused kernels are checked interpreted (the test binary's default, SPORE_CXX=none) and
// compiled; the profile labels say which ran.
#include <gtest/gtest.h>

#include <cstring>

#include "codegen/compiler.h"
#include "codegen/fused.h"
#include "codegen/kernel_test_env.h"
#include "passes/lower_plan.h"
#include "passes/pipeline.h"
#include "runtime/plan.h"
#include "runtime/profile.h"
#include "spore/spore.h"
#include "trace_program.h"
#include "transforms/jit_compare.h"

namespace spore {
namespace {

using namespace ops;

Tensor r(const Shape& s, uint64_t seed) {
  manual_seed(seed);
  return normal(s, 0, 0.5);
}

// Parameters then momentum buffers, as the plan's state inputs 2.. (after x and y).
struct DenseMlp {
  std::vector<Tensor> state = {r({32, 20}, 1), zeros({32}), r({5, 32}, 2), zeros({5}),
                               zeros({32, 20}),  zeros({32}), zeros({5, 32}), zeros({5})};
  Tensor step(const Tensor& x, const Tensor& y) {
    auto loss = [&](const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2) {
      return cross_entropy(addmm(b2, relu(addmm(b1, x, transpose(w1, 0, 1))), transpose(w2, 0, 1)), y);
    };
    auto [v, g] = value_and_grad(loss, {0, 1, 2, 3})(state[0].clone(), state[1].clone(), state[2].clone(), state[3].clone());
    for (size_t i = 0; i < 4; ++i) {
      copy_(state[4 + i], state[4 + i] * 0.9 + g[i]);
      copy_(state[i], state[i] - state[4 + i] * 0.05);
    }
    return v;
  }
};

const Tensor kX = r({16, 20}, 3);
const Tensor kY = tensor(std::initializer_list<int64_t>{0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0});

std::shared_ptr<runtime::Plan> lowered(int level, std::vector<Tensor>* inputs) {
  DenseMlp m;
  const auto traced = spore::testing::trace_program(
      [&](const std::vector<Tensor>& a) { return std::vector<Tensor>{m.step(a[0], a[1])}; }, {kX, kY});
  *inputs = traced.inputs;
  return passes::lower_plan(*passes::optimize(traced.graph, level), traced.inputs);
}

std::vector<Tensor> clones(const std::vector<Tensor>& xs) {
  std::vector<Tensor> c;
  for (const Tensor& x : xs) c.push_back(x.clone());
  return c;
}

// Runs `steps` calls of `plan` on `in` (state written back into `in`); returns the losses.
std::vector<float> run_steps(const runtime::Plan& plan, std::vector<Tensor>& in, int steps) {
  std::vector<float> losses;
  for (int s = 0; s < steps; ++s) {
    const auto out = runtime::run(plan, in);
    losses.push_back(out[0].item<float>());
    for (size_t o = 0; o < plan.outputs.size(); ++o)
      if (plan.outputs[o].updates && out[o].data_ptr() != in[static_cast<size_t>(*plan.outputs[o].updates)].data_ptr())
        in[static_cast<size_t>(*plan.outputs[o].updates)] = out[o];  // not donated: the caller's copy
  }
  return losses;
}

TEST(FusedUpdate, BothOutputsOfEachParametersUpdateAreDonated) {
  std::vector<Tensor> in;
  const auto plan = lowered(2, &in);
  int fused_updates = 0;
  for (const runtime::Step& st : plan->steps) {
    if (st.prim->name != codegen::kFusedOp) continue;
    // An update reads the momentum buffer, the gradient and the parameter and writes the first
    // and the last; the forward's relu group (relu and its mask) has two outputs too, unshared.
    bool updates_state = false;
    for (int32_t s : st.in) updates_state = updates_state || plan->slots[static_cast<size_t>(s)].kind == runtime::SlotKind::Input;
    if (!updates_state || st.out.size() != 2) continue;
    ++fused_updates;
    for (int32_t s : st.out)
      EXPECT_EQ(plan->slots[static_cast<size_t>(s)].kind, runtime::SlotKind::Donated) << runtime::plan_str(*plan);
  }
  EXPECT_EQ(fused_updates, 4) << runtime::plan_str(*plan);
  int donated = 0, outputs = 0;
  for (const runtime::Slot& s : plan->slots) {
    donated += s.kind == runtime::SlotKind::Donated;
    outputs += s.kind == runtime::SlotKind::Output;
  }
  EXPECT_EQ(donated, 8);  // every parameter and momentum buffer
  EXPECT_EQ(outputs, 1);  // only the loss is a fresh tensor: no state is copied out
  // The weight gradients are made in the layout the update reads (transpose_matmul): no fused
  // node reads a transposed operand.
  for (const runtime::Step& st : plan->steps)
    if (st.prim->name == codegen::kFusedOp)
      for (int32_t s : st.in) {
        const runtime::Slot& sl = plan->slots[static_cast<size_t>(s)];
        EXPECT_TRUE(sl.kind != runtime::SlotKind::View || sl.strides == contiguous_strides(sl.shape)) << runtime::plan_str(*plan);
      }
}

TEST(FusedUpdate, InPlaceStepsKeepAddressesAndAgreeWithO1) {
  std::vector<Tensor> in1, in2;
  const auto p1 = lowered(1, &in1);
  const auto p2 = lowered(2, &in2);
  in1 = clones(in1);
  in2 = clones(in2);
  std::vector<const void*> at;
  for (const Tensor& t : in2) at.push_back(t.data_ptr());
  const auto l1 = run_steps(*p1, in1, 4);
  auto l2 = run_steps(*p2, in2, 1);  // the first call makes the plan's arena
  const uint64_t allocs = memory_stats().system_allocations;
  for (float l : run_steps(*p2, in2, 3)) l2.push_back(l);
  EXPECT_EQ(memory_stats().system_allocations, allocs);
  for (size_t i = 0; i < in2.size(); ++i) EXPECT_EQ(in2[i].data_ptr(), at[i]) << "input " << i << " was not updated in place";
  for (size_t s = 0; s < l1.size(); ++s)
    EXPECT_LE(spore::testing::diff_eps(tensor({l2[s]}), tensor({l1[s]})), spore::testing::kFusedEps) << "step " << s;
  for (size_t i = 2; i < in2.size(); ++i)
    EXPECT_LE(spore::testing::diff_eps(in2[i], in1[i]), spore::testing::kFusedEps) << "state " << i;
}

TEST(FusedUpdate, CompiledKernelsUpdateInPlaceLikeTheInterpreter) {
  codegen::testing::use_test_kernel_cache();
  codegen::testing::UseHostCompiler compiler;
  if (!codegen::host_compiler()) GTEST_SKIP() << "no C++ compiler: the compiled kernels cannot be checked";
  std::vector<Tensor> in;
  const auto plan = lowered(2, &in);
  // Interpreted, then compiled (the first call requests the compiles), on the same start state;
  // the profile label (the variant the last fused step noted) says which ran.
  auto interpreted_in = clones(in);
  runtime::profile::note_variant(nullptr);
  run_steps(*plan, interpreted_in, 1);
  ASSERT_NE(runtime::profile::noted_variant(), nullptr);
  EXPECT_STREQ(runtime::profile::noted_variant(), codegen::kInterpretedVariant);
  codegen::wait_for_compiles();
  ASSERT_EQ(codegen::compile_failures(), 0);
  auto compiled_in = clones(in);
  std::vector<const void*> at;
  for (const Tensor& t : compiled_in) at.push_back(t.data_ptr());
  runtime::profile::note_variant(nullptr);
  run_steps(*plan, compiled_in, 1);
  ASSERT_NE(runtime::profile::noted_variant(), nullptr);
  EXPECT_STREQ(runtime::profile::noted_variant(), codegen::kCompiledVariant);
  for (size_t i = 2; i < in.size(); ++i) {
    EXPECT_EQ(compiled_in[i].data_ptr(), at[i]) << i;
    // The update's ops are IEEE-exact: the compiled kernel matches the interpreter bit for bit.
    const Tensor a = compiled_in[i], b = interpreted_in[i];
    EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<size_t>(a.numel()) * a.itemsize()), 0) << "state " << i;
  }
}

}  // namespace
}  // namespace spore
