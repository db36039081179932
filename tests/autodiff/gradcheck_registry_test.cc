// SPDX-License-Identifier: Apache-2.0
// Registry coverage of the gradient checks: every differentiable primitive has a jvp rule, a
// vjp rule and at least one case of the table that records it on a tape. Prints the table
// primitive x (jvp, vjp, cases, highest order checked) and its totals.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "autodiff/frames.h"
#include "autodiff/gradcheck.h"
#include "autodiff/rules.h"
#include "core/primitive.h"

namespace spore::gradcheck {
namespace {

// Primitives with no floating-point derivative to check: boolean or integer results
// (comparisons, logical and bitwise ops, predicates, argmax/argmin, reduce_all/any, one_hot,
// nonzero) and factories and random draws with no tensor input. Everything else is
// differentiable (a zero derivative, as floor's, is still a rule and a case).
const std::set<std::string>& no_float_semantics() {
  static const std::set<std::string> s = {
      "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",          // comparisons
      "logical_and", "logical_or", "logical_xor", "logical_not",                       // logical
      "bitwise_and", "bitwise_or", "bitwise_xor",                                      // bitwise
      "isnan", "isinf", "isfinite",                                                    // predicates
      "argmax", "argmin", "reduce_all", "reduce_any", "one_hot", "nonzero", "shape_of",  // index/bool results
      "fill", "arange", "linspace", "dim_value",                                       // factories
      "uniform", "normal", "truncated_normal", "bernoulli_scalar", "randint", "permutation",  // random, no input
  };
  return s;
}

struct Row {
  std::string name;
  bool jvp = false, vjp = false;
  int cases = 0;       // cases whose tape records the primitive
  int max_order = -1;  // highest order among them (0: jvp/vjp agreement only)
};

// Primitives recorded by each case (computed once: the registry test and its report share it).
struct Recorded {
  std::map<std::string, Row> rows;
  std::vector<std::string> errors;  // cases that could not run
};

Recorded record_all(const std::vector<GradCase>& cases) {
  autodiff::install();
  Recorded r;
  for (const Primitive* p : all_primitives()) r.rows[p->name] = {p->name, p->jvp != nullptr, p->vjp != nullptr};
  for (const GradCase& c : cases) {
    std::set<std::string> rec;
    try {
      rec = recorded_primitives(c);
    } catch (const std::exception& e) {
      r.errors.push_back(c.name + ": " + e.what());
    }
    for (const auto& name : rec) {
      Row& row = r.rows[name];
      ++row.cases;
      row.max_order = std::max(row.max_order, c.order);
    }
  }
  return r;
}

// Differentiable primitives lacking a jvp rule, a vjp rule or a case, one line each.
std::vector<std::string> missing(const Recorded& r) {
  std::vector<std::string> out;
  for (const auto& [name, row] : r.rows) {
    if (no_float_semantics().count(name)) continue;
    // Compiler-made nodes (`fused`, `conv_fused`) appear after autodiff, in compiled graphs
    // only; they never meet a transform (tests/codegen and tests/passes check them against the
    // unfused ops).
    if (const Primitive* cm = find_primitive(name); cm && cm->compiler_made) continue;
    std::string what;
    // custom_vjp has no forward mode by design (as in JAX); tests/autodiff/custom_vjp_test.cc.
    if (!row.jvp && name != "custom_vjp") what += " jvp";
    if (!row.vjp) what += " vjp";
    // Control-flow primitives appear only in traced graphs (in PyNative, cond and while_loop
    // are plain C++), so eager table cases cannot record them; their rules are checked against
    // PyNative gradients and analytic values in tests/transforms/control_flow_grad_test.cc.
    // bind_sizes too: eagerly the sizes are values and no node is made; its pass-through rules
    // are checked by jit gradients in tests/transforms/value_sizes_test.cc.
    const Primitive* p = find_primitive(name);
    const bool traced_only = p != nullptr && (p->eager != nullptr || p->value_sizes != nullptr);
    if (row.cases == 0 && !traced_only) what += " case";
    if (!what.empty()) out.push_back(name + ":" + what);
  }
  return out;
}

void print_table(const Recorded& r) {
  int diff = 0, jvp = 0, vjp = 0, cased = 0, o2 = 0, o1 = 0, o0 = 0, excluded = 0;
  std::printf("%-22s %-4s %-4s %5s %5s\n", "primitive", "jvp", "vjp", "cases", "order");
  for (const auto& [name, row] : r.rows) {
    if (no_float_semantics().count(name)) {
      ++excluded;
      continue;
    }
    ++diff;
    jvp += row.jvp;
    vjp += row.vjp;
    cased += row.cases > 0;
    o2 += row.max_order >= 2;
    o1 += row.max_order == 1;
    o0 += row.max_order == 0;
    std::printf("%-22s %-4s %-4s %5d %5s\n", name.c_str(), row.jvp ? "yes" : "-", row.vjp ? "yes" : "-", row.cases,
                row.max_order < 0 ? "-" : std::to_string(row.max_order).c_str());
  }
  std::string skipped;
  for (const auto& name : no_float_semantics()) skipped += " " + name;
  std::printf("without float semantics (no rules or cases required):%s\n", skipped.c_str());
  std::printf(
      "gradient-check coverage: %zu primitives, %d without float semantics; of %d differentiable: jvp %d, vjp %d, "
      "with cases %d (highest order checked: 2 -> %d, 1 -> %d, 0 (jvp/vjp agreement only) -> %d); %zu cases\n",
      r.rows.size(), excluded, diff, jvp, vjp, cased, o2, o1, o0, all_cases().size());
}

TEST(GradCheck, RegistryCoverage) {
  for (const auto& name : no_float_semantics())
    EXPECT_NE(find_primitive(name), nullptr) << "the list of primitives without float semantics names '" << name
                                             << "', which is not registered; update the list";
  const Recorded r = record_all(all_cases());
  print_table(r);
  for (const auto& e : r.errors) ADD_FAILURE() << "case " << e;
  const auto miss = missing(r);
  std::string list;
  for (const auto& m : miss) list += "\n  " + m;
  EXPECT_TRUE(miss.empty()) << miss.size() << " differentiable primitives lack a rule or a gradient case "
                            << "(rules: src/autodiff/rules/<family>.cc; cases: tests/autodiff/cases_<family>.cc):"
                            << list;
}

TEST(GradCheck, RegistryCoverageCatchesAMissingRule) {
  autodiff::install();
  Primitive* p = find_primitive("sin");
  const JvpRule jvp = p->jvp;
  const VjpRule vjp = p->vjp;
  Recorded r = record_all({});
  autodiff::def_rules(*p, p->residuals, nullptr, vjp);
  Recorded broken = record_all({});
  autodiff::def_rules(*p, p->residuals, jvp, vjp);
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    for (const auto& x : v)
      if (x == s) return true;
    return false;
  };
  EXPECT_TRUE(has(missing(broken), "sin: jvp case"));
  EXPECT_TRUE(has(missing(r), "sin: case"));  // no cases given
  EXPECT_FALSE(has(missing(r), "equal: jvp vjp case"));
}

}  // namespace
}  // namespace spore::gradcheck
