// SPDX-License-Identifier: Apache-2.0
// Gradient-check cases of the reductions, scans and softmaxes: all axes, one axis, several axes,
// negative axes, keepdims, 0-d inputs, and the special points of each rule (zeros in prod and
// cumprod, ties in amax/amin/norm(inf), zero norms and zero deviations). Piecewise-linear
// reductions are checked to order 1; points where the function has a kink (ties, a zero norm)
// get order 0, leaving them to the jvp/vjp agreement check and PyTorch. oracle_op and attrs are
// those of tests/oracle/cases_reduction.cc and cases_nn.cc.
#include <cmath>

#include "autodiff/grad_cases.h"

namespace spore::gradcheck {
namespace {

using namespace ops;
using oracle::Fill;
using V = std::vector<int64_t>;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Tensor T(std::vector<double> v, const Shape& s) { return from_vector(std::move(v), s); }

struct Adder {
  std::vector<GradCase>& cases;
  void operator()(std::string name, std::string prim, Fn fn, std::vector<Tensor> inputs, int order,
                  std::string oracle_op, oracle::Attrs attrs) {
    cases.push_back({std::move(name), {std::move(prim)}, std::move(fn), std::move(inputs), {}, order, 1e-6,
                     std::move(oracle_op), std::move(attrs), 0});
  }
};

std::string axes_name(const V& axes, bool keepdims) {
  std::string s = axes.empty() ? "/all" : "/axes";
  for (int64_t a : axes) {
    s += a < 0 ? "_m" : "_";
    s += std::to_string(a < 0 ? -a : a);
  }
  if (keepdims) s += "_keep";
  return s;
}
/// "/axis<normalized>[_neg]_r<rank>" (gcc 12's -Wrestrict misfires on chained string +).
std::string axis_name(int64_t axis, size_t rank) {
  std::string s = "/axis";
  s += std::to_string(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
  if (axis < 0) s += "_neg";
  s += "_r";
  s += std::to_string(rank);
  return s;
}
oracle::Attrs red_attrs(const V& axes, bool keepdims) { return {{"axes", axes}, {"keepdims", keepdims}}; }

/// One reduction pattern: input shape, axes as passed to the public op, keepdims.
struct Pattern {
  Shape shape;
  V axes;
  bool keepdims;
};
const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> p = {
      {{3, 4}, {}, false},        {{3, 4}, {}, true},           {{3, 4}, {1}, false},       {{3, 4}, {0}, true},
      {{2, 3, 4}, {0, 2}, false}, {{2, 3, 4}, {-1, -2}, true},  {{2, 3, 4}, {-2}, false},   {{5}, {-1}, false},
  };
  return p;
}

using ReduceFn = Tensor (*)(const Tensor&, const V&, bool);

/// Every pattern for one reduction, plus a 0-d input (which reduces nothing).
void patterned(Adder& add, const char* prim, const char* op, ReduceFn f, Fill fill, int order, uint64_t seed,
               oracle::Attrs extra = {}) {
  auto attrs = [&](const V& axes, bool keepdims) {
    oracle::Attrs a = red_attrs(axes, keepdims);
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  for (const Pattern& p : patterns())
    add(std::string(prim) + axes_name(p.axes, p.keepdims) + "_r" + std::to_string(p.shape.size()), prim,
        [f, p](const std::vector<Tensor>& x) { return f(x[0], p.axes, p.keepdims); }, {R(p.shape, seed++, fill)},
        order, op, attrs(p.axes, p.keepdims));
  add(std::string(prim) + "/scalar", prim, [f](const std::vector<Tensor>& x) { return f(x[0], {}, false); },
      {R({}, seed, fill)}, order, op, attrs({}, false));
}

void reductions(Adder& add) {
  patterned(add, "reduce_sum", "sum", [](const Tensor& x, const V& a, bool k) { return sum(x, a, k); },
            Fill::Normal, 2, 100);
  patterned(add, "reduce_mean", "mean", [](const Tensor& x, const V& a, bool k) { return mean(x, a, k); },
            Fill::Normal, 2, 200);
  patterned(add, "reduce_prod", "prod", [](const Tensor& x, const V& a, bool k) { return prod(x, a, k); },
            Fill::Positive, 2, 300);
  patterned(add, "reduce_max", "amax", [](const Tensor& x, const V& a, bool k) { return amax(x, a, k); },
            Fill::Normal, 1, 400);
  patterned(add, "reduce_min", "amin", [](const Tensor& x, const V& a, bool k) { return amin(x, a, k); },
            Fill::Normal, 1, 500);
  patterned(add, "logsumexp", "logsumexp", [](const Tensor& x, const V& a, bool k) { return logsumexp(x, a, k); },
            Fill::Normal, 2, 600);
  patterned(add, "reduce_norm1", "norm", [](const Tensor& x, const V& a, bool k) { return norm(x, 1.0, a, k); },
            Fill::Normal, 1, 700, {{"p", 1.0}});
  patterned(add, "reduce_norm2", "norm", [](const Tensor& x, const V& a, bool k) { return norm(x, 2.0, a, k); },
            Fill::Normal, 2, 800, {{"p", 2.0}});
  patterned(add, "reduce_norm_inf", "norm",
            [](const Tensor& x, const V& a, bool k) { return norm(x, double(INFINITY), a, k); }, Fill::Normal, 1, 900,
            {{"p", double(INFINITY)}});
  for (int64_t c : {0, 1, 2}) {
    std::string cs = "_c";
    cs += std::to_string(c);
    for (const Pattern& p : {Pattern{{3, 4}, {}, false}, Pattern{{3, 4}, {-1}, true}, Pattern{{2, 3, 4}, {0, 2}, false}}) {
      const std::string suffix = axes_name(p.axes, p.keepdims) + cs;
      const oracle::Attrs attrs = {{"axes", p.axes}, {"keepdims", p.keepdims}, {"correction", c}};
      add("var" + suffix, "var", [p, c](const std::vector<Tensor>& x) { return var(x[0], p.axes, c, p.keepdims); },
          {R(p.shape, 1000 + static_cast<uint64_t>(c))}, 2, "var", attrs);
      add("std" + suffix, "std", [p, c](const std::vector<Tensor>& x) { return ops::std(x[0], p.axes, c, p.keepdims); },
          {R(p.shape, 1100 + static_cast<uint64_t>(c))}, 2, "std", attrs);
    }
  }
}

// Points where a rule takes its special branch.
void special_points(Adder& add) {
  // prod with zeros: one zero in row 0 (the zero's gradient is the product of the others), two
  // in row 1 (all zero), none in row 2. Second derivatives hold the zero mask constant: order 1.
  const Tensor pz = T({0.0, 1.5, -2.0, 0.7, 0.0, 1.2, 0.0, 2.5, 1.1, -0.6, 1.3, 0.9}, {3, 4});
  add("reduce_prod/zeros_axis", "reduce_prod", [](const std::vector<Tensor>& x) { return prod(x[0], {1}); }, {pz}, 1,
      "prod", red_attrs({1}, false));
  add("reduce_prod/one_zero_all", "reduce_prod", [](const std::vector<Tensor>& x) { return prod(x[0]); },
      {T({1.3, -0.8, 0.0, 1.7, 0.6, -1.1}, {2, 3})}, 1, "prod", red_attrs({}, false));
  add("reduce_prod/negative_values", "reduce_prod",
      [](const std::vector<Tensor>& x) { return prod(x[0], {0, -1}, true); }, {R({3, 2, 3}, 1200)}, 2, "prod",
      red_attrs({0, -1}, true));
  // Ties: the gradient is split evenly (PyTorch's amax/amin); finite differences see a kink.
  const Tensor ties = T({1.0, 3.0, 3.0, -2.0, -2.0, 0.5, -2.0, 0.5, 2.0, 2.0, 2.0, 2.0}, {3, 4});
  add("reduce_max/ties", "reduce_max", [](const std::vector<Tensor>& x) { return amax(x[0], {1}); }, {ties}, 0, "amax",
      red_attrs({1}, false));
  add("reduce_min/ties", "reduce_min", [](const std::vector<Tensor>& x) { return amin(x[0], {1}, true); }, {ties}, 0,
      "amin", red_attrs({1}, true));
  add("reduce_norm_inf/ties", "reduce_norm_inf",
      [](const std::vector<Tensor>& x) { return norm(x[0], double(INFINITY), {1}); },
      {T({1.0, -3.0, 3.0, 0.5, -2.0, 2.0, 2.0, -1.0, 0.1, 0.2, -0.3, 0.3}, {3, 4})}, 0, "norm",
      {{"axes", V{1}}, {"keepdims", false}, {"p", double(INFINITY)}});
  // Ties that every perturbation keeps (x next to a copy of itself, or of -x for norm(inf)):
  // finite differences see no kink, and only an even split gives the gradient of the copy.
  add("reduce_max/tied_copies", "reduce_max",
      [](const std::vector<Tensor>& x) { return amax(concat({x[0], x[0]}, 1), {1}); }, {R({3, 4}, 1250)}, 1, "", {});
  add("reduce_min/tied_copies", "reduce_min",
      [](const std::vector<Tensor>& x) { return amin(concat({x[0], x[0]}, 0)); }, {R({3, 4}, 1251)}, 1, "", {});
  add("reduce_norm_inf/tied_copies", "reduce_norm_inf",
      [](const std::vector<Tensor>& x) { return norm(concat({x[0], -x[0], x[0]}, -1), double(INFINITY), {-1}); },
      {R({3, 4}, 1252)}, 1, "", {});
  // A zero norm / zero deviation: the gradient is 0 there (PyTorch), not NaN.
  const Tensor zrow = T({0.0, 0.0, 0.0, 1.0, -2.0, 0.5}, {2, 3});
  add("reduce_norm2/zero_row", "reduce_norm2", [](const std::vector<Tensor>& x) { return norm(x[0], 2.0, {1}); },
      {zrow}, 0, "norm", {{"axes", V{1}}, {"keepdims", false}, {"p", 2.0}});
  add("std/constant_row", "std", [](const std::vector<Tensor>& x) { return ops::std(x[0], {1}, 1); },
      {T({0.5, 0.5, 0.5, 1.0, -2.0, 0.5}, {2, 3})}, 0, "std",
      {{"axes", V{1}}, {"keepdims", false}, {"correction", int64_t{1}}});
}

void scans(Adder& add) {
  struct C {
    Shape shape;
    int64_t axis;
  };
  const std::vector<C> cs = {{{6}, 0}, {{3, 4}, 1}, {{3, 4}, 0}, {{2, 3, 4}, -2}, {{2, 3, 4}, -1}, {{}, 0}};
  uint64_t seed = 1300;
  for (const C& c : cs) {
    const std::string suffix = axis_name(c.axis, c.shape.size());
    const int64_t axis = c.axis;
    add("cumsum" + suffix, "cumsum", [axis](const std::vector<Tensor>& x) { return cumsum(x[0], axis); },
        {R(c.shape, seed++)}, 2, "cumsum", {{"axis", axis}});
    add("cumprod" + suffix, "cumprod", [axis](const std::vector<Tensor>& x) { return cumprod(x[0], axis); },
        {R(c.shape, seed++, Fill::Positive)}, 2, "cumprod", {{"axis", axis}});
  }
  add("cumprod/signed", "cumprod", [](const std::vector<Tensor>& x) { return cumprod(x[0], 1); }, {R({2, 5}, seed++)},
      2, "cumprod", {{"axis", int64_t{1}}});
  // Zeros: none in row 0, one in row 1, two in row 2, a leading zero in row 3.
  const Tensor z = T({1.2, -0.7, 1.5, 0.8, 1.1, 0.9, 1.3, 0.0, -1.4, 0.6, 0.5, 0.0, 1.7, 0.0, 1.2, 0.0, 1.4, -0.9,
                      0.6, 1.3},
                     {4, 5});
  add("cumprod/zeros", "cumprod", [](const std::vector<Tensor>& x) { return cumprod(x[0], -1); }, {z}, 1, "cumprod",
      {{"axis", int64_t{-1}}});
  add("cumprod/zeros_axis0", "cumprod", [](const std::vector<Tensor>& x) { return cumprod(x[0], 0); },
      {transpose(z, 0, 1).contiguous()}, 1, "cumprod", {{"axis", int64_t{0}}});
}

void softmaxes(Adder& add) {
  struct C {
    Shape shape;
    int64_t axis;
  };
  const std::vector<C> cs = {{{7}, 0}, {{3, 5}, -1}, {{3, 5}, 0}, {{2, 3, 4}, 1}, {{2, 3, 4}, -1}, {{2, 3, 4}, -3}, {{}, 0}};
  uint64_t seed = 1400;
  for (const C& c : cs) {
    const std::string suffix = axis_name(c.axis, c.shape.size());
    const int64_t axis = c.axis;
    add("softmax" + suffix, "softmax", [axis](const std::vector<Tensor>& x) { return softmax(x[0], axis); },
        {R(c.shape, seed++) * 2.0}, 2, "softmax", {{"axis", axis}});
    add("log_softmax" + suffix, "log_softmax", [axis](const std::vector<Tensor>& x) { return log_softmax(x[0], axis); },
        {R(c.shape, seed++) * 2.0}, 2, "log_softmax", {{"axis", axis}});
  }
}

}  // namespace

SPORE_GRAD_CASES(reduction) {
  Adder add{cases};
  reductions(add);
  special_points(add);
  scans(add);
  softmaxes(add);
}

}  // namespace spore::gradcheck
