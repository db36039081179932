// SPDX-License-Identifier: Apache-2.0
#pragma once
// Programs that reach every primitive, for the round-trip tests (IR text: tests/transforms/
// ir_roundtrip_test.cc; MindIR files: tests/io/mindir_roundtrip_test.cc): the gradient-check table
// plus small programs for what it leaves out (comparisons, logic, predicates, arg and bool
// reductions, factories and random ops, bitwise ops, control flow). Each test runs `check` on
// every program and then asks which primitives it never saw (`never_seen`).
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "autodiff/grad_cases.h"
#include "core/primitive.h"
#include "prims/shape_of.h"
#include "runtime/dispatch.h"
#include "spore/spore.h"

namespace spore::testing {

using ProgramFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
using CheckProgram = std::function<void(const std::string& name, const ProgramFn& f, const std::vector<Tensor>& inputs)>;

inline void for_each_roundtrip_program(const CheckProgram& check) {
  using namespace ops;
  for (const auto& c : gradcheck::all_cases())
    check(c.name, [&c](const std::vector<Tensor>& x) { return std::vector<Tensor>{c.fn(x)}; }, c.inputs);
  Tensor a = tensor({{1.5, -2.0, 0.0}, {3.0, 0.5, -1.0}}), b = tensor({{1.0, -2.0, 2.0}, {0.0, 0.5, 4.0}});
  Tensor ia = tensor({{3, 5, 6}, {1, 0, 7}}).to(DType::Int32), ib = tensor({{1, 4, 2}, {7, 2, 1}}).to(DType::Int32);
  std::vector<std::pair<std::string, ProgramFn>> programs = {
      {"compare", [](auto& x) { return std::vector<Tensor>{equal(x[0], x[1]), not_equal(x[0], x[1]), x[0] < x[1], x[0] <= x[1], x[0] > x[1], x[0] >= x[1]}; }},
      {"logical", [](auto& x) {
         Tensor p = x[0] > 0.0, q = x[1] > 0.0;
         return std::vector<Tensor>{logical_and(p, q), logical_or(p, q), logical_xor(p, q), logical_not(p)};
       }},
      {"predicates", [](auto& x) { return std::vector<Tensor>{isnan(x[0] / x[1]), isinf(x[0] / x[1]), isfinite(x[0] / x[1])}; }},
      {"arg_and_bool_reductions", [](auto& x) {
         return std::vector<Tensor>{argmax(x[0], 1), argmin(x[0], 0), all(x[0] > -5.0, {1}), any(x[0] > 2.0)};
       }},
      {"factories_and_random", [](auto&) {
         return std::vector<Tensor>{arange(0, 5), linspace(0.0, 1.0, 4), uniform({3}), normal({2, 2}), truncated_normal({3}),
                                    bernoulli({4}, 0.5), randint(0, 10, {3}), permutation(6), one_hot(arange(0, 3), 4)};
       }},
  };
  for (auto& [name, f] : programs) check(name, f, {a, b});
  check("bitwise", [](auto& x) { return std::vector<Tensor>{bitwise_and(x[0], x[1]), bitwise_or(x[0], x[1]), bitwise_xor(x[0], x[1])}; },
        {ia, ib});
  // Sizes that values give when the graph runs (value symbols): topk's k and nonzero's count.
  check("value_sizes", [](auto& x) {
    auto [v, i] = topk(x[0], x[1], 1);
    return std::vector<Tensor>{v, i, nonzero(x[0] > 0.0), runtime::call(prims::shape_of_primitive(), NoAttrs{}, {v})};
  }, {a, scalar_tensor(2, DType::Int64)});
  check("control_flow", [](auto& x) {
    Tensor c = cond(sum(x[0]) > 0.0, [](const TensorTree& t) { return TensorTree(t.tensor() * 2.0); },
                    [](const TensorTree& t) { return TensorTree(-t.tensor()); }, x[0]).tensor();
    Tensor s = switch_case(scalar_tensor(1, DType::Int64), {[](const TensorTree& t) { return TensorTree(t.tensor() + 1.0); },
                                                           [](const TensorTree& t) { return TensorTree(t.tensor() * 3.0); }}, x[1]).tensor();
    Tensor w = while_loop([](const TensorTree& t) -> Tensor { return sum(t.tensor()) < 100.0; },
                          [](const TensorTree& t) { return TensorTree(t.tensor() * 2.0 + 1.0); }, abs(x[0])).tensor();
    Tensor wc = while_loop([](const TensorTree& t) -> Tensor { return sum(t.tensor()) < 50.0; },  // checkpointed
                           [](const TensorTree& t) { return TensorTree(t.tensor() * 1.5 + 1.0); }, abs(x[1]),
                           WhileOptions{2}).tensor();
    auto [carry, ys] = scan([](const TensorTree& cc, const TensorTree& xi) {
                              Tensor n = cc.tensor() + xi.tensor();
                              return std::make_pair(TensorTree(n), TensorTree(n * n));
                            }, TensorTree(zeros({3}, {x[1].dtype()})), TensorTree(x[1]));
    return std::vector<Tensor>{c, s, w, wc, carry.tensor(), ys.tensor()};
  }, {a, b});
}

/// Registered primitives missing from `seen`, as " a b c". custom_vjp nodes live only on
/// PyNative tapes, and compiler-made nodes come from passes (their round trips:
/// tests/passes/fuse_test.cc, conv_epilogue_test.cc).
inline std::string never_seen(const std::set<std::string>& seen) {
  std::string list;
  for (const Primitive* p : all_primitives())
    if (!seen.count(p->name) && p->name != "custom_vjp" && !p->compiler_made) list += " " + p->name;
  return list;
}

}  // namespace spore::testing
