// SPDX-License-Identifier: Apache-2.0
// The op test table's jit column (issue 4, "jit == PyNative for every op"): every case of the
// gradient-check table (tests/autodiff/grad_cases.h), plus rows for the primitives that table
// leaves out (no floating derivative: comparisons, logical, bitwise, predicates, argmax, one_hot,
// factories, random draws), runs under jit in Graph mode and eagerly; the outputs and, for the
// differentiable cases, the value and gradients (jit(value_and_grad(f)) vs value_and_grad(f))
// must agree within the tolerance table of jit_compare.h: bitwise at O1, kFusedEps at O2.
// Each jit call must have run a lowered plan, except the documented interpreted cases below.
// Failures are listed by case name; every registered primitive must appear in some row.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>

#include "autodiff/grad_cases.h"
#include "core/primitive.h"
#include "prims/shape_of.h"
#include "runtime/dispatch.h"
#include "trace_program.h"
#include "transforms/jit_compare.h"

namespace spore {
namespace {

using namespace ops;
using testing::diff_eps;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Row {
  std::string name;
  Fn fn;
  std::vector<Tensor> inputs;
  std::vector<int> wrt;  // differentiated positions (empty: every floating input)
  bool grad = true;      // also compare the gradients
};

Tensor I(const Shape& s, uint64_t seed) { return oracle::rand_tensor(s, DType::Int32, seed, oracle::Fill::Int); }
Tensor B(const Shape& s, uint64_t seed) { return oracle::rand_tensor(s, DType::Bool, seed, oracle::Fill::Bool); }
Tensor E(const Shape& s, uint64_t seed) { return oracle::rand_tensor(s, DType::Float32, seed, oracle::Fill::Edge); }

// Rows for the primitives the gradient-check table has no case of (they have no floating
// derivative; tests/autodiff/gradcheck_registry_test.cc lists them).
std::vector<Row> extra_rows() {
  using gradcheck::R;
  using V = const std::vector<Tensor>&;
  std::vector<Row> r;
  auto add = [&](std::string name, Fn fn, std::vector<Tensor> in) {
    r.push_back({std::move(name), std::move(fn), std::move(in), {}, false});
  };
  const Tensor a = R({3, 4}, 900), b = R({4}, 901);
  add("equal", [](V x) { return equal(x[0], x[0] * 0.0 + x[1]); }, {a, b});
  add("not_equal", [](V x) { return not_equal(x[0], x[1]); }, {I({3, 4}, 902), I({3, 4}, 903)});
  add("less", [](V x) { return less(x[0], x[1]); }, {a, b});
  add("less_equal", [](V x) { return less_equal(x[0], x[1]); }, {E({5, 6}, 904), E({5, 6}, 905)});
  add("greater", [](V x) { return greater(x[0], x[1]); }, {a, b});
  add("greater_equal", [](V x) { return greater_equal(x[0], x[1]); }, {I({2, 5}, 906), I({5}, 907)});
  add("logical_and", [](V x) { return logical_and(x[0], x[1]); }, {B({3, 4}, 908), B({3, 4}, 909)});
  add("logical_or", [](V x) { return logical_or(x[0], x[1]); }, {B({3, 4}, 910), B({4}, 911)});
  add("logical_xor", [](V x) { return logical_xor(x[0], x[1]); }, {a, b});
  add("logical_not", [](V x) { return logical_not(x[0]); }, {B({7}, 912)});
  add("bitwise_and", [](V x) { return bitwise_and(x[0], x[1]); }, {I({3, 4}, 913), I({3, 4}, 914)});
  add("bitwise_or", [](V x) { return bitwise_or(x[0], x[1]); }, {I({3, 4}, 915), I({4}, 916)});
  add("bitwise_xor", [](V x) { return bitwise_xor(x[0], x[1]); }, {B({3, 4}, 917), B({3, 4}, 918)});
  add("isnan", [](V x) { return isnan(x[0]); }, {E({4, 5}, 919)});
  add("isinf", [](V x) { return isinf(x[0]); }, {E({4, 5}, 920)});
  add("isfinite", [](V x) { return isfinite(x[0]); }, {E({4, 5}, 921)});
  add("argmax", [](V x) { return argmax(x[0], 1); }, {R({3, 7}, 922)});
  add("argmin", [](V x) { return argmin(x[0]); }, {R({3, 7}, 923)});
  add("reduce_all", [](V x) { return all(x[0], {1}); }, {B({3, 4}, 924)});
  add("reduce_any", [](V x) { return any(x[0] > 0.5); }, {a});
  add("one_hot", [](V x) { return one_hot(x[0], 6); }, {oracle::rand_index({2, 3}, 6, 925)});
  add("fill", [](V x) { return x[0] + full({3, 4}, 2.5, {DType::Float64}); }, {a});
  add("arange", [](V x) { return x[0] * arange(0.0, 4.0, 1.0, {DType::Float64}); }, {a});
  add("linspace", [](V x) { return x[0] + linspace(-1.0, 1.0, 4, {DType::Float64}); }, {a});
  // Random draws: the seed is set inside, so eager and traced runs take the same key (in the
  // graph, draws after a manual_seed inside the function are constants).
  auto seeded = [](uint64_t s, Fn f) { return [s, f](V x) { manual_seed(s); return f(x); }; };
  add("uniform", seeded(1, [](V x) { return x[0] + uniform({3, 4}, -1, 1, {DType::Float64}); }), {a});
  add("normal", seeded(2, [](V x) { return x[0] * normal({3, 4}, 0, 1, {DType::Float64}); }), {a});
  add("truncated_normal", seeded(3, [](V x) { return x[0] - truncated_normal({4}, 0, 1, -2, 2, {DType::Float64}); }), {a});
  add("bernoulli_scalar", seeded(4, [](V x) { return x[0] * bernoulli({3, 4}, 0.3, {DType::Float64}); }), {a});
  add("randint", seeded(5, [](V x) { return x[0] + randint(0, 9, {3, 4}); }), {I({3, 4}, 926)});
  add("permutation", seeded(6, [](V x) { return x[0] + permutation(5); }), {I({5}, 927).to(DType::Int64)});
  // Sizes the values give when the graph runs (value symbols): interpreted, documented below.
  add("nonzero", [](V x) { return nonzero(x[0] > 0.0); }, {a});
  add("shape_of", [](V x) { return runtime::call(prims::shape_of_primitive(), NoAttrs{}, {x[0] * 2.0}); }, {a});
  add("bind_sizes", [](V x) { return topk(x[0], x[1], 1).first; }, {a, scalar_tensor(3, DType::Int64)});
  return r;
}

std::vector<Row> all_rows() {
  std::vector<Row> rows;
  for (const auto& c : gradcheck::all_cases()) rows.push_back({c.name, c.fn, c.inputs, c.wrt, true});
  for (Row& r : extra_rows()) rows.push_back(std::move(r));
  return rows;
}

// Rows run by the interpreter on purpose, by primitive (the name before '/'), with the reason;
// every other jit call must run a lowered plan.
const std::map<std::string, std::string>& documented_interpreted() {
  // Random primitives too run as plans (the generator state is a graph input).
  static const std::map<std::string, std::string> m = {
      {"nonzero", "its count is a value symbol, bound when the node runs: no plan can lay out what follows"},
      {"bind_sizes", "its sizes are value symbols, bound when the node runs: no plan can lay out what follows"},
  };
  return m;
}

// Cases whose jit and eager results may differ beyond the table's tolerance, with the reason.
// Empty: every row agrees.
const std::map<std::string, std::string>& documented_mismatches() {
  static const std::map<std::string, std::string> m = {};
  return m;
}

std::string primitive_of(const std::string& case_name) { return case_name.substr(0, case_name.find('/')); }

void collect_ops(const ir::Graph& g, std::set<std::string>& ops) {
  for (const auto& n : g.nodes()) {
    ops.insert(n->op());
    for (const auto& sub : n->subgraphs()) collect_ops(*sub, ops);
  }
}

struct Report {
  std::vector<std::string> mismatches;   // "case: what"
  std::vector<std::string> interpreted;  // "case (reason)", undocumented
  std::vector<std::string> errors;       // a jit or eager call threw
  double worst = 0;
  int64_t plans = 0, compared = 0, documented_interpreted = 0;
};

// Runs `f` eagerly and, twice (the traced plan, then the cached one), under jit; compares.
void compare(const std::string& name, const std::function<TensorTree(const std::vector<Tensor>&)>& f,
             const std::vector<Tensor>& inputs, double tol, Report& rep) {
  TensorTree want;
  try {
    want = f(inputs);
  } catch (const std::exception& e) {
    rep.errors.push_back(name + " (eager): " + e.what());
    return;
  }
  testing::GraphModeScope graph;
  auto jf = jit([&f](const TensorTree& args) { return f(args.leaves()); }, "jit_table");
  for (int call = 0; call < 2; ++call) {
    testing::RunCounter counter;
    TensorTree got;
    try {
      got = jf(TensorTree(inputs));
    } catch (const std::exception& e) {
      rep.errors.push_back(name + " (jit): " + e.what());
      return;
    }
    rep.plans += counter.plans();
    if (counter.plans() != 1) {
      const std::string why = transforms::last_interpreted_reason();
      if (documented_interpreted().count(primitive_of(name))) ++rep.documented_interpreted;
      else rep.interpreted.push_back(name + ", call " + std::to_string(call) + " (" + why + ")");
    }
    const auto g = got.leaves(), w = want.leaves();
    if (g.size() != w.size()) {
      rep.mismatches.push_back(name + ": " + std::to_string(g.size()) + " outputs, eager has " + std::to_string(w.size()));
      return;
    }
    for (size_t i = 0; i < g.size(); ++i) {
      const double e = diff_eps(g[i], w[i]);
      ++rep.compared;
      if (std::isfinite(e)) rep.worst = std::max(rep.worst, e);
      if (e > tol && !documented_mismatches().count(name))
        rep.mismatches.push_back(name + ": call " + std::to_string(call) + ", output " + std::to_string(i) +
                                 " differs by " + std::to_string(e) + " eps (jit " + std::string(dtype_name(g[i].dtype())) +
                                 shape_str(g[i].shape()) + ", eager " + std::string(dtype_name(w[i].dtype())) +
                                 shape_str(w[i].shape()) + ")");
    }
  }
}

// [value, grads...] of sum(fn) with respect to the row's differentiated positions.
std::function<TensorTree(const std::vector<Tensor>&)> value_and_grads(const Row& r, const std::vector<int>& wrt) {
  return [&r, wrt](const std::vector<Tensor>& x) {
    std::vector<TensorTree> args(x.begin(), x.end());
    auto f = [&r](const std::vector<TensorTree>& y) {
      std::vector<Tensor> ts;
      for (const TensorTree& t : y) ts.push_back(t.tensor());
      return TensorTree(sum(r.fn(ts)));
    };
    auto vg = autodiff::value_and_grad("grad", f, args, wrt, false);
    std::vector<TensorTree> out{TensorTree(vg.value)};
    for (TensorTree& g : vg.grads) out.push_back(std::move(g));
    return TensorTree(std::move(out));
  };
}

std::vector<int> differentiated(const Row& r) {
  if (!r.wrt.empty()) return r.wrt;
  std::vector<int> wrt;
  for (size_t i = 0; i < r.inputs.size(); ++i)
    if (is_floating(r.inputs[i].dtype())) wrt.push_back(static_cast<int>(i));
  return wrt;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "\n  " + x;
  return s;
}

Report run_table(int level, bool grads) {
  testing::OptLevelScope opt(level);
  const double tol = testing::jit_tolerance_eps(level);
  Report rep;
  for (const Row& r : all_rows()) {
    compare(r.name, [&r](const std::vector<Tensor>& x) { return TensorTree(r.fn(x)); }, r.inputs, tol, rep);
    if (!grads || !r.grad) continue;
    const std::vector<int> wrt = differentiated(r);
    if (!wrt.empty()) compare(r.name + "/grad", value_and_grads(r, wrt), r.inputs, tol, rep);
  }
  return rep;
}

void expect_clean(const Report& rep, int level) {
  std::cout << "[ jit      ] O" << level << ": " << rep.compared << " outputs compared, " << rep.plans
            << " calls ran a lowered plan (" << rep.documented_interpreted
            << " interpreted, as documented), largest difference " << rep.worst << " eps\n";
  EXPECT_TRUE(rep.errors.empty()) << "calls that threw:" << joined(rep.errors);
  EXPECT_TRUE(rep.mismatches.empty()) << "jit != PyNative:" << joined(rep.mismatches);
  EXPECT_TRUE(rep.interpreted.empty()) << "jit calls that did not run a lowered plan:" << joined(rep.interpreted);
}

TEST(JitTable, EveryCaseAndGradientRunsAsAPlanBitwiseEqualToPyNativeAtO1) {
  const Report rep = run_table(1, true);
  expect_clean(rep, 1);
  EXPECT_GT(rep.compared, 1000);
  EXPECT_GT(rep.plans, 1000);
}

TEST(JitTable, EveryCaseAndGradientAgreesWithinTheFusedToleranceAtO2) {
  const Report rep = run_table(2, true);
  expect_clean(rep, 2);
  EXPECT_GT(rep.compared, 1000);
}

// The comparison the table relies on sees one ulp, a signed zero, an unmatched NaN and a type change.
TEST(JitTable, ComparatorSeesTheSmallestDifferences) {
  const Tensor a = tensor({1.0f, NAN, 2.0f});
  EXPECT_EQ(diff_eps(a, tensor({1.0f, NAN, 2.0f})), 0);
  EXPECT_NEAR(diff_eps(a, tensor({std::nextafter(1.0f, 2.0f), NAN, 2.0f})), 1, 1e-6);
  EXPECT_GT(diff_eps(tensor({0.0}), tensor({-0.0})), 0);
  EXPECT_EQ(diff_eps(a, tensor({1.0f, 0.0f, 2.0f})), INFINITY);
  EXPECT_EQ(diff_eps(a, a.to(DType::Float64)), INFINITY);
  EXPECT_EQ(diff_eps(tensor({int64_t{1} << 60}), tensor({(int64_t{1} << 60) + 1})), INFINITY);
}

TEST(JitTable, EveryPrimitiveHasARow) {
  std::set<std::string> seen;
  for (const Row& r : all_rows()) {
    const auto t = spore::testing::trace_program([&r](const std::vector<Tensor>& x) { return std::vector<Tensor>{r.fn(x)}; },
                                                 r.inputs);
    collect_ops(*t.graph, seen);
  }
  // Made only by passes or traced from C++ control flow and transforms, never by one op call:
  // compiler-made nodes (the O2 tests run them), control flow (tests/transforms/control_flow_test.cc),
  // custom_vjp (tests/autodiff/custom_vjp_test.cc).
  const std::set<std::string> no_row = {"custom_vjp"};
  std::string missing;
  for (const Primitive* p : all_primitives())
    if (!seen.count(p->name) && p->eager == nullptr && !p->compiler_made && !no_row.count(p->name))
      missing += " " + p->name;
  EXPECT_TRUE(missing.empty()) << "primitives no row of the jit table runs:" << missing;
}

}  // namespace
}  // namespace spore
