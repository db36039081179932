// SPDX-License-Identifier: Apache-2.0
// The passes preserve meaning: every case of the gradient-check table is traced, optimized at
// level 1 with the verifier on, and both graphs are interpreted: the outputs must be bitwise
// equal (NaN matches NaN). Groundwork for issue 4's "jit == PyNative for every op".
// At level 2 (fusion) the fused kernels run every lane through the vector routines, where the
// unfused kernels run a run's last n % lanes elements through libm: results agree within
// kFusedEps (|fused - unfused| / max(1, |unfused|), in epsilons of the dtype).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <iostream>

#include "autodiff/grad_cases.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "trace_program.h"
#include "spore/spore.h"
#include "transforms/interpreter.h"

namespace spore::passes {
namespace {

using namespace ops;
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

using Traced = spore::testing::TracedProgram;
inline Traced trace(const Fn& f, const std::vector<Tensor>& inputs) { return spore::testing::trace_program(f, inputs); }

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  auto x = a.to(DType::Float64).to_vector<double>(), y = b.to(DType::Float64).to_vector<double>();
  for (size_t k = 0; k < x.size(); ++k) {
    if (std::isnan(x[k]) && std::isnan(y[k])) continue;
    if (std::memcmp(&x[k], &y[k], sizeof(double)) != 0) return false;
  }
  return true;
}

constexpr double kFusedEps = 64;  // measured: 2.5 over the table and its gradients

// |a - b| / max(1, |b|) in epsilons of a's dtype (0 for equal bits or two NaNs).
double error_eps(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return INFINITY;
  if (!is_floating(a.dtype())) return same_bits(a, b) ? 0 : INFINITY;
  const double eps = a.dtype() == DType::Float64 ? 0x1p-52 : a.dtype() == DType::Float32 ? 0x1p-23 : 0x1p-7;
  auto x = a.to(DType::Float64).to_vector<double>(), y = b.to(DType::Float64).to_vector<double>();
  double m = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    if ((std::isnan(x[k]) && std::isnan(y[k])) || x[k] == y[k]) continue;
    if (std::isnan(x[k]) || std::isnan(y[k]) || std::isinf(x[k]) || std::isinf(y[k])) return INFINITY;
    m = std::max(m, std::fabs(x[k] - y[k]) / std::max(1.0, std::fabs(y[k])) / eps);
  }
  return m;
}

size_t count_fused(const ir::Graph& g) {
  size_t n = 0;
  for (const auto& node : g.nodes()) {
    n += node->op() == "fused";
    for (const auto& sub : node->subgraphs()) n += count_fused(*sub);
  }
  return n;
}

struct Level2 {
  size_t fused = 0;
  double worst = 0;
};

// Level 2: the fused graph interprets equal to the traced one within kFusedEps.
void check_fused(const std::string& name, const Fn& f, const std::vector<Tensor>& inputs, Level2& stats) {
  SCOPED_TRACE(name);
  Traced t = trace(f, inputs);
  ir::GraphPtr opt = optimize(t.graph, 2);
  auto want = transforms::interpret(*t.graph, t.inputs);
  std::vector<Tensor> got;
  try {
    got = transforms::interpret(*opt, t.inputs);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\nafter:\n" << ir::print_graph(*opt);
    return;
  }
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    const double e = error_eps(got[i], want[i]);
    stats.worst = std::max(stats.worst, e);
    EXPECT_LE(e, kFusedEps) << "output " << i << "\nbefore:\n" << ir::print_graph(*t.graph) << "after:\n"
                            << ir::print_graph(*opt);
  }
  stats.fused += count_fused(*opt);
}

// Returns how many nodes the pipeline removed, so the test can tell it did something.
size_t check(const std::string& name, const Fn& f, const std::vector<Tensor>& inputs) {
  SCOPED_TRACE(name);
  Traced t = trace(f, inputs);
  ir::GraphPtr opt = optimize(t.graph, 1);
  auto want = transforms::interpret(*t.graph, t.inputs);
  auto got = transforms::interpret(*opt, t.inputs);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size() && i < got.size(); ++i)
    EXPECT_TRUE(same_bits(got[i], want[i])) << "output " << i << "\nbefore:\n"
                                            << ir::print_graph(*t.graph) << "after:\n"
                                            << ir::print_graph(*opt);
  return t.graph->nodes().size() - opt->nodes().size();
}

class VerifyIr : public ::testing::Test {
 protected:
  void SetUp() override { setenv("SPORE_VERIFY_IR", "1", 1); }
  void TearDown() override { unsetenv("SPORE_VERIFY_IR"); }
};

using PassSemantics = VerifyIr;

TEST_F(PassSemantics, EveryGradCheckCaseInterpretsBitwiseEqualAfterOptimizing) {
  size_t removed = 0;
  for (const auto& c : gradcheck::all_cases())
    removed += check(c.name, [&c](const std::vector<Tensor>& x) { return std::vector<Tensor>{c.fn(x)}; }, c.inputs);
  EXPECT_GT(removed, 0u) << "the pipeline changed no case";
}

Fn gradient_of(const gradcheck::GradCase& c) {
  return [&c](const std::vector<Tensor>& x) {
    std::vector<TensorTree> args(x.begin(), x.end());
    std::vector<int> all(x.size());
    for (size_t i = 0; i < x.size(); ++i) all[i] = static_cast<int>(i);
    auto f = [&c](const std::vector<TensorTree>& y) {
      std::vector<Tensor> ts;
      for (const TensorTree& t : y) ts.push_back(t.tensor());
      return TensorTree(sum(c.fn(ts)));
    };
    std::vector<Tensor> grads;
    for (const TensorTree& g : autodiff::value_and_grad("grad", f, args, all, false).grads) grads.push_back(g.tensor());
    return grads;
  };
}

TEST_F(PassSemantics, EveryGradCheckCaseAndGradientInterpretsEqualAfterFusing) {
  Level2 fwd, bwd;
  size_t ran = 0;
  for (const auto& c : gradcheck::all_cases()) {
    check_fused(c.name, [&c](const std::vector<Tensor>& x) { return std::vector<Tensor>{c.fn(x)}; }, c.inputs, fwd);
    bool floating = true;
    for (const Tensor& x : c.inputs) floating = floating && is_floating(x.dtype());
    if (!floating) continue;
    Fn f = gradient_of(c);
    try {
      trace(f, c.inputs);
    } catch (const Error&) {
      continue;  // the level-1 test lists these
    }
    check_fused(c.name + "/grad", f, c.inputs, bwd);
    ++ran;
  }
  std::cout << "[ passes   ] level 2: " << fwd.fused << " fused nodes in the cases (largest difference " << fwd.worst
            << " eps), " << bwd.fused << " in " << ran << " gradient programs (largest " << bwd.worst << " eps)\n";
  EXPECT_GT(fwd.fused + bwd.fused, 0u) << "fusion fused nothing";
}

TEST_F(PassSemantics, GradientsInterpretBitwiseEqualAfterOptimizing) {
  // Traced backward passes are where literals, reshapes and repeated subexpressions abound.
  // Every gradient program traces (batch_norm's running statistics become state outputs).
  std::string skipped;
  size_t ran = 0, removed = 0;
  for (const auto& c : gradcheck::all_cases()) {
    bool floating = true;
    for (const Tensor& x : c.inputs) floating = floating && is_floating(x.dtype());
    if (!floating) continue;
    const Fn f = gradient_of(c);
    try {
      trace(f, c.inputs);
    } catch (const Error&) {
      skipped += " " + c.name;
      continue;
    }
    removed += check(c.name + "/grad", f, c.inputs);
    ++ran;
  }
  std::cout << "[ passes   ] " << ran << " gradient programs checked, " << removed
            << " nodes optimized away; not traceable:" << skipped << "\n";
  EXPECT_GT(ran, 100u) << skipped;
  EXPECT_TRUE(skipped.empty()) << "gradient programs that did not trace:" << skipped;
  EXPECT_GT(removed, 0u);
}

TEST_F(PassSemantics, ControlFlowAndLiteralsInterpretBitwiseEqualAfterOptimizing) {
  Tensor a = tensor({{1.5, -2.0, 0.0}, {3.0, 0.5, -1.0}}), b = tensor({{1.0, -2.0, 2.0}, {0.0, 0.5, 4.0}});
  size_t removed = check("control_flow", [](const std::vector<Tensor>& x) {
    Tensor c = cond(sum(x[0]) > 0.0, [](const TensorTree& t) { return TensorTree(t.tensor() * 2.0); },
                    [](const TensorTree& t) { return TensorTree(-t.tensor()); }, x[0]).tensor();
    Tensor s = switch_case(scalar_tensor(1, DType::Int64), {[](const TensorTree& t) { return TensorTree(t.tensor() + 1.0); },
                                                           [](const TensorTree& t) { return TensorTree(t.tensor() * 3.0); }}, x[1]).tensor();
    Tensor w = while_loop([](const TensorTree& t) -> Tensor { return sum(t.tensor()) < 100.0; },
                          [](const TensorTree& t) { return TensorTree(t.tensor() * 1.0 * 2.0 + 1.0); }, abs(x[0])).tensor();
    Tensor r = reshape(reshape(-(-x[1]), {6}), {3, 2}) / 1.0;
    return std::vector<Tensor>{c, s, w, r, x[0] * 1.0 - 0.0, exp(x[0]) + exp(x[0])};
  }, {a, b});
  EXPECT_GT(removed, 0u);
}

}  // namespace
}  // namespace spore::passes
