// SPDX-License-Identifier: Apache-2.0
// The matmul_epilogue pass (text IR in -> text IR out) and the matmul_fused kernels (oneDNN
// post-ops, the reference path) against the unfused ops they replace, alone and in a jitted
// transformer feed-forward block.
#include "passes/matmul_epilogue.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <thread>

#include "backends/cpu/isa.h"
#include "pass_text.h"
#include "passes/epilogue_chain.h"
#include "passes/pipeline.h"
#include "prims/matmul_fused.h"
#include "runtime/dispatch.h"
#include "spore/spore.h"
#include "trace_program.h"
#include "transforms/interpreter.h"

namespace spore::passes {
namespace {

using namespace ops;
using testing::canonical;
using testing::run_pass;

constexpr const char* kMm = "matmul{trans_a=false, trans_b=false, alpha=1, beta=1}";

std::string text(const std::string& s) {
  std::string r = s;
  for (size_t p; (p = r.find("MM")) != std::string::npos;) r.replace(p, 2, kMm);
  return r;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~ScopedEnv() { ::unsetenv(name); }
};

// The pass forms a chain only as far as the kernel applies it inside the product (oneDNN's
// brgemm post-ops); the tests of what it folds force the post-ops on, as on an AVX-512 CPU.
ScopedEnv forced_post_ops() { return {"SPORE_MATMUL_POST_OPS", "always"}; }

// A linear layer's bias and ReLU, and a residual add of the block's input after the second
// product, become the GEMMs' post-ops; a literal scale and a clamp too.
TEST(PassMatmulEpilogue, FoldsActivationsResidualsAndLiterals) {
  const ScopedEnv env = forced_post_ops();
  EXPECT_EQ(run_pass(matmul_epilogue, text(R"(
graph @main(%0: data float32[6, 8], %1: data float32[8, 16], %2: data float32[16], %3: data float32[16, 8]) {
  %4 = MM(%0, %1, %2) : float32[6, 16]
  %5 = relu{a=0, b=0}(%4) : float32[6, 16]
  %6 = MM(%5, %3) : float32[6, 8]
  %7 = add{}(%0, %6) : float32[6, 8]
  %8 = constant{dtype=float32, weak=false, f=0.5, i=0}() : float32[]
  %9 = mul{}(%7, %8) : float32[6, 8]
  %10 = constant{dtype=float32, weak=false, f=-1, i=0}() : float32[]
  %11 = constant{dtype=float32, weak=false, f=1, i=0}() : float32[]
  %12 = clamp{}(%9, %10, %11) : float32[6, 8]
  return %12
})")),
            canonical(R"(
graph @main(%0: data float32[6, 8], %1: data float32[8, 16], %2: data float32[16], %3: data float32[16, 8]) {
  %4 = matmul_fused{trans_a=false, trans_b=false, has_bias=true, post_kind=[0], post_ops="relu", post_a=[0], post_b=[0]}(%0, %1, %2) : float32[6, 16]
  %5 = matmul_fused{trans_a=false, trans_b=false, has_bias=false, post_kind=[1, 2, 2, 2], post_ops="add,mul,maximum,minimum", post_a=[1, 0.5, -1, 1], post_b=[0, 0, 0, 0]}(%4, %3, %0) : float32[6, 8]
  return %5
})"));
}

// Left to fusion and the executor: an add whose other operand an elementwise op computes (the
// momentum term; fusion makes the whole update one kernel), a state update (written in place
// by an elementwise kernel), a product read twice, a scaled product, a float64 product.
TEST(PassMatmulEpilogue, StopsWhereFusionOrTheExecutorDoesBetter) {
  const std::string g = text(R"(
graph @main(%0: data float32[6, 8], %1: parameter float32[8, 8], %2: buffer float32[8, 8], %3: data float64[6, 8], %4: data float64[8, 8]) {
  %5 = matmul{trans_a=true, trans_b=false, alpha=1, beta=1}(%0, %0) : float32[8, 8]
  %6 = constant{dtype=float32, weak=false, f=0.9, i=0}() : float32[]
  %7 = mul{}(%2, %6) : float32[8, 8]
  %8 = add{}(%7, %5) : float32[8, 8]
  %9 = matmul{trans_a=true, trans_b=false, alpha=1, beta=1}(%0, %0) : float32[8, 8]
  %10 = sub{}(%1, %9) : float32[8, 8]
  %11 = MM(%0, %1) : float32[6, 8]
  %12 = relu{a=0, b=0}(%11) : float32[6, 8]
  %13 = matmul{trans_a=false, trans_b=false, alpha=2, beta=1}(%0, %1) : float32[6, 8]
  %14 = relu{a=0, b=0}(%13) : float32[6, 8]
  %15 = MM(%3, %4) : float64[6, 8]
  %16 = relu{a=0, b=0}(%15) : float64[6, 8]
  return %8 updates %2, %10 updates %1, %11, %12, %14, %16
})");
  const ScopedEnv env = forced_post_ops();
  EXPECT_EQ(run_pass(matmul_epilogue, g), canonical(g));
  // A clamp (two post-ops of one node) whose result is a state update stays whole.
  const std::string clamp = text(R"(
graph @main(%0: data float32[8, 8], %1: buffer float32[8, 8]) {
  %2 = MM(%0, %1) : float32[8, 8]
  %3 = constant{dtype=float32, weak=false, f=-1, i=0}() : float32[]
  %4 = constant{dtype=float32, weak=false, f=1, i=0}() : float32[]
  %5 = clamp{}(%2, %3, %4) : float32[8, 8]
  return %5 updates %1
})");
  EXPECT_EQ(run_pass(matmul_epilogue, clamp), canonical(clamp));
  // A result of rank 9: more than an epilogue runs over (kMaxEpilogueRank); left as it is.
  const std::string rank9 = text(R"(
graph @main(%0: data float32[1, 1, 1, 1, 1, 1, 1, 2, 8], %1: data float32[8, 8]) {
  %2 = MM(%0, %1) : float32[1, 1, 1, 1, 1, 1, 1, 2, 8]
  %3 = relu{a=0, b=0}(%2) : float32[1, 1, 1, 1, 1, 1, 1, 2, 8]
  return %3
})");
  EXPECT_EQ(run_pass(matmul_epilogue, rank9), canonical(rank9));
}

// A chain whose end only ops the fusion pass takes read is left to it: the fusion group that
// reads the value takes the links at no cost, where post-ops cost the GEMM time. A library op
// (softmax, here) or a graph output reading the end keeps the chain.
TEST(PassMatmulEpilogue, LeavesChainsThatOnlyFusedOpsRead) {
  const std::string g = text(R"(
graph @main(%0: data float32[6, 8], %1: data float32[8, 6]) {
  %2 = MM(%0, %1) : float32[6, 6]
  %3 = constant{dtype=float32, weak=false, f=0.5, i=0}() : float32[]
  %4 = mul{}(%2, %3) : float32[6, 6]
  %5 = exp{a=0, b=0}(%4) : float32[6, 6]
  %6 = neg{a=0, b=0}(%4) : float32[6, 6]
  %7 = add{}(%5, %6) : float32[6, 6]
  return %7
})");
  const ScopedEnv env = forced_post_ops();
  EXPECT_EQ(run_pass(matmul_epilogue, g), canonical(g));
  EXPECT_EQ(run_pass(matmul_epilogue, text(R"(
graph @main(%0: data float32[6, 8], %1: data float32[8, 6]) {
  %2 = MM(%0, %1) : float32[6, 6]
  %3 = constant{dtype=float32, weak=false, f=0.5, i=0}() : float32[]
  %4 = mul{}(%2, %3) : float32[6, 6]
  %5 = softmax{axis=1}(%4) : float32[6, 6]
  %6 = exp{a=0, b=0}(%4) : float32[6, 6]
  return %5, %6
})")),
            canonical(R"(
graph @main(%0: data float32[6, 8], %1: data float32[8, 6]) {
  %2 = matmul_fused{trans_a=false, trans_b=false, has_bias=false, post_kind=[2], post_ops="mul", post_a=[0.5], post_b=[0]}(%0, %1) : float32[6, 6]
  %3 = softmax{axis=1}(%2) : float32[6, 6]
  %4 = exp{a=0, b=0}(%2) : float32[6, 6]
  return %3, %4
})"));
}

// Where the kernel would run the chain after the product (oneDNN's gemm-based matmul: CPUs
// without AVX-512, such as the bench machine), the pass leaves it to the fusion pass, which
// makes the chain one kernel instead of one pass per op after the GEMM.
TEST(PassMatmulEpilogue, LeavesChainsTheKernelWouldRunAfterTheProduct) {
  const std::string g = text(R"(
graph @main(%0: data float32[6, 8], %1: data float32[8, 16], %2: data float32[16]) {
  %3 = MM(%0, %1, %2) : float32[6, 16]
  %4 = constant{dtype=float32, weak=false, f=3, i=0}() : float32[]
  %5 = mul{}(%3, %4) : float32[6, 16]
  %6 = sigmoid{a=0, b=0}(%5) : float32[6, 16]
  return %6
})");
  const KernelDef& k = prims::matmul_fused_primitive().kernels[static_cast<int>(DeviceType::CPU)].front();
  ASSERT_NE(k.fused_post_ops, nullptr) << k.name;
  prims::MatmulFusedAttrs a;
  a.has_bias = true;
  push_post_op(a, prims::PostKind::BinaryScalar, "mul", 3, 0);
  push_post_op(a, prims::PostKind::Unary, "sigmoid", 0, 0);
  auto f32 = [](Shape s) { return TensorType{.dtype = DType::Float32, .shape = std::move(s)}; };
  const std::vector<TensorType> in = {f32({6, 8}), f32({8, 16}), f32({16})};
  const size_t fused = k.fused_post_ops(&a, in);
  if (cpu::cpu_isa() != cpu::Isa::Avx512) {
    EXPECT_EQ(fused, 0u) << "gemm-based matmul keeps no post-ops";
  }
  const std::string out = run_pass(matmul_epilogue, g);
  EXPECT_EQ(out.find("matmul_fused") != std::string::npos, fused > 0) << out;
  if (fused == 0) {
    EXPECT_EQ(out, canonical(g));
  }
  const ScopedEnv env = forced_post_ops();
  EXPECT_EQ(k.fused_post_ops(&a, in), 2u);
}

// Sub-graphs are rewritten too.
TEST(PassMatmulEpilogue, RewritesSubGraphs) {
  const ScopedEnv env = forced_post_ops();
  EXPECT_EQ(run_pass(matmul_epilogue, text(R"(
graph @main(%0: data bool[], %1: data float32[6, 8], %2: data float32[8, 8]) {
  %3 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1, %2) : float32[6, 8] {
    graph @t(%0: data float32[6, 8], %1: data float32[8, 8]) {
      %2 = MM(%0, %1) : float32[6, 8]
      %3 = tanh{a=0, b=0}(%2) : float32[6, 8]
      return %3
    }
    graph @f(%0: data float32[6, 8], %1: data float32[8, 8]) {
      return %0
    }
  }
  return %3
})")),
            canonical(R"(
graph @main(%0: data bool[], %1: data float32[6, 8], %2: data float32[8, 8]) {
  %3 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1, %2) : float32[6, 8] {
    graph @t(%0: data float32[6, 8], %1: data float32[8, 8]) {
      %2 = matmul_fused{trans_a=false, trans_b=false, has_bias=false, post_kind=[0], post_ops="tanh", post_a=[0], post_b=[0]}(%0, %1) : float32[6, 8]
      return %2
    }
    graph @f(%0: data float32[6, 8], %1: data float32[8, 8]) {
      return %0
    }
  }
  return %3
})"));
}

// ---- numerics: the matmul_fused kernels against the unfused ops ----

Tensor r(const Shape& s, uint64_t seed, double scale = 0.5) {
  manual_seed(seed);
  return normal(s, 0, scale);
}

void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const auto a = got.to(DType::Float64).to_vector<double>(), b = want.to(DType::Float64).to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    ASSERT_TRUE(std::isfinite(a[i]) && std::isfinite(b[i])) << what << ": element " << i << " is " << a[i] << ", want " << b[i];
    worst = std::max(worst, std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i])));
  }
  EXPECT_LE(worst, tol) << what;
}

prims::MatmulFusedAttrs attrs(bool has_bias, std::vector<int64_t> kinds, const std::string& ops, std::vector<double> pa,
                              std::vector<double> pb) {
  prims::MatmulFusedAttrs a;
  a.has_bias = has_bias;
  a.post_kind = prims::IntList(kinds.begin(), kinds.end());
  a.post_ops = ops;
  a.post_a = SmallVec<double, 6>(pa.begin(), pa.end());
  a.post_b = SmallVec<double, 6>(pb.begin(), pb.end());
  return a;
}

Tensor run_fused(const prims::MatmulFusedAttrs& a, const std::vector<Tensor>& in) {
  return std::move(runtime::dispatch(prims::matmul_fused_primitive(), &a, in).t[0]);
}

// Every post-op kind on a batched product with a bias: activations, a full-shape residual and a
// per-column operand (binary post-ops; the batch folds into the GEMM's rows), one broadcast per
// batch entry (it does not fold), literals
// on either side, a clamp, and post-ops oneDNN has no form of (exp; a swapped sub), which run
// after the GEMM through the unfused kernels.
TEST(MatmulFusedKernel, MatchesTheUnfusedOps) {
  const Tensor x = r({3, 5, 32}, 1), w = r({32, 24}, 2, 0.2), b = r({24}, 3);
  const Tensor col = r({24}, 4), full = r({3, 5, 24}, 5), per_batch = r({3, 1, 24}, 7), per_row = r({5, 24}, 8);
  // A full-shape operand that is a transposed view: not laid out as the post-op describes it,
  // so the kernel stops before its post-op.
  const Tensor strided = r({3, 24, 5}, 9).transpose(1, 2);
  const Tensor y = matmul(x, w) + b;
  struct Case {
    std::string ops;
    std::vector<int64_t> kinds;
    std::vector<double> pa, pb;
    std::vector<Tensor> operands;
    Tensor want;
    double tol;
  };
  const std::vector<Case> cases = {
      {"relu", {0}, {0}, {0}, {}, relu(y), 0},
      {"add,relu", {1, 0}, {1, 0}, {0, 0}, {full}, relu(full + y), 1e-6},
      {"mul,add", {1, 1}, {0, 0}, {0, 0}, {col, full}, y * col + full, 1e-6},
      {"leaky_relu,sub", {0, 2}, {0.1, 0.5}, {0, 1}, {}, 0.5 - leaky_relu(y, 0.1), 1e-6},
      {"maximum,minimum", {2, 2}, {-0.25, 0.25}, {0, 0}, {}, clamp(y, -0.25, 0.25), 0},
      {"gelu", {0}, {0}, {0}, {}, gelu(y), 1e-5},
      {"exp,add", {0, 1}, {0, 0}, {0, 0}, {full}, exp(y) + full, 1e-6},
      {"relu,sub", {0, 1}, {0, 1}, {0, 0}, {full}, full - relu(y), 1e-6},
      // One row per batch entry: the batch is not folded into the GEMM's rows then.
      {"add,relu", {1, 0}, {0, 0}, {0, 0}, {per_batch}, relu(y + per_batch), 1e-6},
      // One (M, N) operand repeated per batch entry: not foldable either.
      {"relu,add", {0, 1}, {0, 0}, {0, 0}, {per_row}, relu(y) + per_row, 1e-6},
      {"relu,add,tanh", {0, 1, 0}, {0, 0, 0}, {0, 0, 0}, {strided}, tanh(relu(y) + strided), 1e-6},
  };
  // Each case twice: as the kernel chooses (oneDNN's gemm-based matmul, on CPUs without
  // AVX-512, runs the epilogue after the product) and with oneDNN's post-ops forced. Each mode
  // on a thread of its own: prepared kernels are cached per thread, and the second mode must
  // prepare its own.
  for (const char* mode : {"auto", "always"}) {
    ::setenv("SPORE_MATMUL_POST_OPS", mode, 1);
    std::thread t([&] {
      for (const Case& c : cases) {
        std::vector<Tensor> in = {x, w, b};
        in.insert(in.end(), c.operands.begin(), c.operands.end());
        expect_close(run_fused(attrs(true, c.kinds, c.ops, c.pa, c.pb), in), c.want, c.tol, c.ops + " " + mode);
      }
    });
    t.join();
  }
  ::unsetenv("SPORE_MATMUL_POST_OPS");
  // No bias, a 2-D product (the batch folding path), and a float64 one (the reference kernel,
  // which runs the unfused kernels: bit for bit).
  const Tensor x2 = r({7, 32}, 6);
  expect_close(run_fused(attrs(false, {0}, "relu", {0}, {0}), {x2, w}), relu(matmul(x2, w)), 0, "2-D relu");
  const Tensor xd = x.to(DType::Float64), wd = w.to(DType::Float64), fd = full.to(DType::Float64);
  expect_close(run_fused(attrs(false, {1, 0}, "add,tanh", {0, 0}, {0, 0}), {xd, wd, fd}), tanh(matmul(xd, wd) + fd), 0,
               "float64");
  // bfloat16, with the post-ops forced and not: within bfloat16's rounding of the unfused ops.
  const Tensor xb = x.to(DType::BFloat16), wb = w.to(DType::BFloat16), bb = b.to(DType::BFloat16),
               fb = full.to(DType::BFloat16);
  const Tensor want_b = relu(matmul(xb, wb) + bb + fb);
  for (const char* mode : {"auto", "always"}) {
    const ScopedEnv env("SPORE_MATMUL_POST_OPS", mode);
    std::thread t([&] {
      expect_close(run_fused(attrs(true, {1, 0}, "add,relu", {0, 0}, {0, 0}), {xb, wb, bb, fb}), want_b, 2e-2,
                   std::string("bfloat16 ") + mode);
    });
    t.join();
  }
}

TEST(MatmulFusedKernel, BadNodesFailClearly) {
  const Tensor x = r({4, 8}, 1), w = r({8, 6}, 2);
  auto expect_error = [&](const prims::MatmulFusedAttrs& a, const std::vector<Tensor>& in, const std::string& want) {
    try {
      run_fused(a, in);
      ADD_FAILURE() << "ran: " << a.post_ops;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  expect_error(attrs(false, {1}, "add", {0}, {0}), {x, w}, "[matmul_fused] takes a, b and 1 post-op operands, got 2");
  expect_error(attrs(false, {1}, "add", {0}, {0}), {x, w, r({4, 7}, 3)}, "[matmul_fused] operand 0 is float32(4, 7)");
  expect_error(attrs(false, {0}, "frobnicate", {0}, {0}), {x, w}, "'frobnicate', not a unary float op");
  expect_error(attrs(false, {0, 0}, "relu", {0}, {0}), {x, w}, "need one entry per post-op, got 2, 1, 1, 1");
  // The product's own checks name this op.
  expect_error(attrs(false, {0}, "relu", {0}, {0}), {x, r({7, 6}, 4)}, "[matmul_fused] inner dimensions differ");
  const Tensor x9 = r({1, 1, 1, 1, 1, 1, 1, 2, 8}, 5);
  expect_error(attrs(false, {0}, "relu", {0}, {0}), {x9, w}, "the epilogue takes at most 8 dims");
  // A bad SPORE_MATMUL_POST_OPS fails when the kernel is prepared (a thread of its own: prepared
  // kernels are cached per thread), even for a chain with no post-op oneDNN could take.
  const ScopedEnv env("SPORE_MATMUL_POST_OPS", "sometimes");
  std::thread t([&] {
    expect_error(attrs(false, {0}, "exp", {0}, {0}), {r({3, 8}, 6), w}, "SPORE_MATMUL_POST_OPS is 'sometimes'");
  });
  t.join();
}

// A transformer feed-forward block with a residual, traced and run at O2 as a plan: both
// products take their epilogues (bias, ReLU; bias, residual; post-ops forced) and the plan
// matches the interpreter of the unoptimized graph.
TEST(MatmulFusedPlan, FeedForwardBlockMatchesTheUnfusedGraph) {
  const Tensor w1 = r({32, 64}, 10, 0.2), b1 = r({64}, 11), w2 = r({64, 32}, 12, 0.2), b2 = r({32}, 13);
  auto block = [&](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    return std::vector<Tensor>{x + (matmul(relu(matmul(x, w1) + b1), w2) + b2)};
  };
  const ScopedEnv env = forced_post_ops();
  const Tensor x = r({2, 9, 32}, 1);
  const auto traced = spore::testing::trace_program(block, {x});
  const auto want = transforms::interpret(*traced.graph, traced.inputs);
  const ir::GraphPtr g = optimize(traced.graph, 2);
  int fused = 0;
  for (const auto& n : g->nodes()) {
    fused += n->op() == prims::kMatmulFusedOp;
    EXPECT_NE(n->op(), "relu");
  }
  EXPECT_EQ(fused, 2) << ir::print_graph(*g);
  ::setenv("SPORE_OPT_LEVEL", "2", 1);
  const Tensor got = jit([&](const Tensor& v) { return block({v})[0]; })(x);
  ::unsetenv("SPORE_OPT_LEVEL");
  expect_close(got, want[0], 1e-5, "feed-forward block");
}

}  // namespace
}  // namespace spore::passes
