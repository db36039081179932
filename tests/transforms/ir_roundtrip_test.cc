// SPDX-License-Identifier: Apache-2.0
// Every primitive in real traced graphs: the printed text parses back to an equal graph that
// prints identically, and the interpreter (the reference for compiled plans) reproduces the
// eager results exactly. Graphs come from the gradient-check table (differentiable primitives)
// and from small programs for the rest (comparisons, factories, random ops, control flow).
#include <gtest/gtest.h>

#include <set>

#include "autodiff/grad_cases.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "spore/spore.h"
#include "transforms/interpreter.h"
#include "transforms/ir_bridge.h"
#include "roundtrip_programs.h"
#include "trace_program.h"

namespace spore {
namespace {

using namespace ops;
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;


void collect_ops(const ir::Graph& g, std::set<std::string>& ops) {
  for (const auto& n : g.nodes()) {
    ops.insert(n->op());
    for (const auto& sg : n->subgraphs()) collect_ops(*sg, ops);
  }
}

// Round trip, then interpreter == eager (same seed for random programs).
void check_program(const std::string& name, const Fn& f, const std::vector<Tensor>& inputs, std::set<std::string>& seen) {
  SCOPED_TRACE(name);
  manual_seed(11);
  const auto t = spore::testing::trace_program(f, inputs);
  const std::string text = ir::print_graph(*t.graph);
  ir::GraphPtr back = ir::parse_graph(text);
  EXPECT_TRUE(*back == *t.graph) << text;
  EXPECT_EQ(ir::print_graph(*back), text);
  collect_ops(*t.graph, seen);
  const std::vector<Tensor>& in = t.inputs;
  auto got = transforms::interpret(*back, in);
  manual_seed(11);
  auto want = f(inputs);
  ASSERT_GE(got.size(), want.size());  // state updates follow the results
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].shape(), want[i].shape()) << text;
    ASSERT_EQ(got[i].dtype(), want[i].dtype());
    auto a = got[i].to(DType::Float64).to_vector<double>(), b = want[i].to(DType::Float64).to_vector<double>();
    for (size_t k = 0; k < a.size(); ++k) {
      if (std::isnan(a[k]) && std::isnan(b[k])) continue;
      ASSERT_EQ(a[k], b[k]) << "output " << i << " element " << k << "\n" << text;
    }
  }
}

TEST(IrRoundTrip, EveryPrimitiveInTracedGraphs) {
  std::set<std::string> seen;
  testing::for_each_roundtrip_program(
      [&](const std::string& name, const Fn& f, const std::vector<Tensor>& in) { check_program(name, f, in, seen); });
  const std::string list = testing::never_seen(seen);
  EXPECT_TRUE(list.empty()) << "primitives never traced:" << list;
}

// Derivative graphs nest control flow: a cond and a Newton while inside a scan body, reverse
// mode through them (stacking loops with run-time trip sizes, residual outputs). Their text
// round-trips exactly and the parsed graph computes what jit computed.
TEST(IrRoundTrip, NestedControlFlowDerivativeGraphs) {
  auto newton = [](const Tensor& a) {
    return while_loop([&](const TensorTree& x) -> Tensor { return abs(x.tensor() * x.tensor() - a) > 1e-12; },
                      [&](const TensorTree& x) { return TensorTree((x.tensor() + a / x.tensor()) * 0.5); },
                      TensorTree(a + 1.0))
        .tensor();
  };
  auto f = [&](const Tensor& xs) {
    auto [c, ys] = scan([&](const TensorTree& acc, const TensorTree& x) {
                          Tensor y = cond(x.tensor() > 1.0, [&](const TensorTree& t) { return TensorTree(newton(t.tensor())); },
                                          [](const TensorTree& t) { return TensorTree(exp(t.tensor())); }, x)
                                         .tensor();
                          return std::make_pair(TensorTree(acc.tensor() * y), TensorTree(y));
                        },
                        TensorTree(scalar_tensor(1.0, DType::Float64)), TensorTree(xs));
    return c.tensor() + sum(ys.tensor());
  };
  auto g = [&](const Tensor& a) { return grad(newton)(a); };
  const Tensor xs = tensor({0.3, 4.0, -0.4, 9.0});
  auto jf = jit([&](const Tensor& x) { return grad(f)(x); });
  auto jg = jit(g);
  const Tensor want_f = jf(xs), want_g = jg(scalar_tensor(2.0, DType::Float64));
  for (const auto& [text, in, want] : {std::tuple{jf.core().last_graph_text(), xs, want_f},
                                       std::tuple{jg.core().last_graph_text(), scalar_tensor(2.0, DType::Float64), want_g}}) {
    ir::GraphPtr back = ir::parse_graph(text);
    EXPECT_EQ(ir::print_graph(*back), text);
    const std::vector<Tensor> args{in};
    const auto got = transforms::interpret(*back, args)[0].to_vector<double>();
    const auto expect = want.to_vector<double>();
    ASSERT_EQ(got.size(), expect.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expect[i]) << i << "\n" << text;
  }
  EXPECT_NE(jg.core().last_graph_text().find("stack=true"), std::string::npos);
  EXPECT_NE(jf.core().last_graph_text().find(" while{"), std::string::npos);
}

// The verifier checks a control-flow node's operands against its sub-graphs' parameters.
TEST(IrRoundTrip, VerifierRejectsMismatchedControlFlowOperands) {
  const std::string bad_if = R"(graph @main(%0: data bool[], %1: data float32[2]) {
  %2 = if{num_carry=0, length=0, reverse=false, stack=false, trip_symbol=""}(%0, %1) : float32[3] {
    graph @t(%0: data float32[3]) {
      return %0
    }
    graph @f(%0: data float32[3]) {
      return %0
    }
  }
  return %2
}
)";
  transforms::register_ir_ops();
  auto parse_error = [](const std::string& text) {
    try {
      ir::parse_graph(text);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(parsed)");
  };
  EXPECT_NE(parse_error(bad_if).find("branch @t takes (float32(3,)) but the node passes (float32(2,))"), std::string::npos)
      << parse_error(bad_if);
  const std::string bad_scan = R"(graph @main(%0: data float32[], %1: data float32[4, 2]) {
  %2, %3 = scan{num_carry=1, length=5, reverse=false, stack=false, trip_symbol=""}(%0, %1) : float32[], float32[5, 2] {
    graph @b(%0: data float32[], %1: data float32[2]) {
      return %0, %1
    }
  }
  return %2
}
)";
  EXPECT_NE(parse_error(bad_scan).find("length=5 but scanned operand 0 has (4, 2)"), std::string::npos) << parse_error(bad_scan);
}

}  // namespace
}  // namespace spore
