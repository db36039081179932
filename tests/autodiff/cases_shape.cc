// SPDX-License-Identifier: Apache-2.0
// Gradient-check cases of the view and shape primitives: views, concat, pad, flip, roll, tri,
// gather/scatter, sort/topk. Attributes follow tests/oracle/cases_shape.cc so the PyTorch
// autograd check can replay each case with the oracle's torch function.
#include "autodiff/grad_cases.h"

namespace spore::gradcheck {
namespace {

using namespace ops;
using oracle::Fill;
using V = std::vector<int64_t>;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;


/// An index along `axis` of `shape` with distinct values per line (no duplicate writes).
Tensor unique_index(const Shape& shape, int64_t axis, int64_t bound, uint64_t seed) {
  Shape full = shape;
  full[static_cast<size_t>(axis)] = bound;
  Tensor perm = argsort(R(full, seed), axis);
  return slice(perm, axis, 0, shape[static_cast<size_t>(axis)]).contiguous();
}

/// Adds one case; linear ops are checked to second order (their second derivative is zero).
struct Adder {
  std::vector<GradCase>& cases;
  void operator()(std::string name, std::string prim, Fn fn, std::vector<Tensor> inputs, std::string oracle_op,
                  oracle::Attrs attrs, int order = 2, int out_index = 0) {
    cases.push_back({std::move(name), {std::move(prim)}, std::move(fn), std::move(inputs), {}, order, 1e-6,
                     std::move(oracle_op), std::move(attrs), out_index});
  }
};

void views(Adder& add) {
  for (const V& s : {V{4, 6}, V{-1, 2}, V{2, 1, 12}})
    add("reshape/" + std::to_string(s[0]) + "x" + std::to_string(s[1]), "reshape",
        [s](const std::vector<Tensor>& x) { return reshape(x[0], Shape(s.begin(), s.end())); }, {R({2, 3, 4}, 1)},
        "reshape", {{"shape", s}});
  add("reshape/non_contiguous", "reshape", [](const std::vector<Tensor>& x) { return reshape(x[0], {24}); },
      {oracle::non_contiguous(R({2, 3, 4}, 2))}, "reshape", {{"shape", V{24}}});
  add("reshape/scalar", "reshape", [](const std::vector<Tensor>& x) { return reshape(x[0], {1, 1}); }, {R({}, 3)},
      "reshape", {{"shape", V{1, 1}}});
  add("reshape/empty", "reshape", [](const std::vector<Tensor>& x) { return reshape(x[0], {3, 0, 1}); },
      {R({0, 3}, 4)}, "reshape", {{"shape", V{3, 0, 1}}});

  add("permute/basic", "permute", [](const std::vector<Tensor>& x) { return permute(x[0], {2, 0, 1}); },
      {R({2, 3, 4}, 5)}, "permute", {{"axes", V{2, 0, 1}}});
  add("permute/negative", "permute", [](const std::vector<Tensor>& x) { return permute(x[0], {-1, 1, 0}); },
      {R({2, 3, 4}, 6)}, "permute", {{"axes", V{-1, 1, 0}}});
  add("permute/transpose", "permute", [](const std::vector<Tensor>& x) { return transpose(x[0], 0, -1); },
      {R({2, 3, 4}, 7)}, "transpose", {{"a", int64_t{0}}, {"b", int64_t{-1}}});
  add("permute/scalar", "permute", [](const std::vector<Tensor>& x) { return permute(x[0], {}); }, {R({}, 8)},
      "permute", {{"axes", V{}}});

  // (axis, start, stop, step): steps > 1, negative bounds, a step past the end, an empty slice.
  for (const V& sl : {V{2, 1, 4, 2}, V{-1, -3, 100, 1}, V{0, 0, 7, 3}, V{0, 1, 7, 3}, V{1, 1, 5, 4}, V{1, 2, 1, 1}})
    add("slice/" + std::to_string(sl[0]) + "_" + std::to_string(sl[1]) + "_" + std::to_string(sl[2]) + "_" +
            std::to_string(sl[3]),
        "slice", [sl](const std::vector<Tensor>& x) { return slice(x[0], sl[0], sl[1], sl[2], sl[3]); },
        {R({7, 5, 4}, 10 + static_cast<uint64_t>(sl[3]))}, "slice",
        {{"axis", sl[0]}, {"start", sl[1]}, {"stop", sl[2]}, {"step", sl[3]}});
  add("slice/select", "slice", [](const std::vector<Tensor>& x) { return select(x[0], 1, -1); }, {R({2, 3, 4}, 20)},
      "select", {{"axis", int64_t{1}}, {"i", int64_t{-1}}});
  add("slice/empty_input", "slice", [](const std::vector<Tensor>& x) { return slice(x[0], 1, 1, 3); },
      {R({0, 4}, 21)}, "slice", {{"axis", int64_t{1}}, {"start", int64_t{1}}, {"stop", int64_t{3}}, {"step", int64_t{1}}});

  add("broadcast_to/basic", "broadcast_to", [](const std::vector<Tensor>& x) { return broadcast_to(x[0], {2, 3, 4}); },
      {R({3, 1}, 22)}, "broadcast_to", {{"shape", V{2, 3, 4}}});
  add("broadcast_to/expand", "broadcast_to", [](const std::vector<Tensor>& x) { return expand(x[0], {-1, 5}); },
      {R({3, 1}, 23)}, "expand", {{"shape", V{-1, 5}}});
  add("broadcast_to/empty", "broadcast_to", [](const std::vector<Tensor>& x) { return broadcast_to(x[0], {2, 3, 0}); },
      {R({3, 1}, 24)}, "broadcast_to", {{"shape", V{2, 3, 0}}});
  add("broadcast_to/scalar", "broadcast_to", [](const std::vector<Tensor>& x) { return broadcast_to(x[0], {2, 3}); },
      {R({}, 25)}, "broadcast_to", {{"shape", V{2, 3}}});

  for (int64_t off : {0, 1, -2, 7})
    add("diagonal/offset_" + std::to_string(off), "diagonal",
        [off](const std::vector<Tensor>& x) { return diagonal(x[0], off); }, {R({4, 5}, 30)}, "diagonal",
        {{"offset", off}, {"axis1", int64_t{0}}, {"axis2", int64_t{1}}});
  add("diagonal/batched_axes", "diagonal", [](const std::vector<Tensor>& x) { return diagonal(x[0], 1, -1, 0); },
      {R({3, 2, 4}, 31)}, "diagonal", {{"offset", int64_t{1}}, {"axis1", int64_t{-1}}, {"axis2", int64_t{0}}});
  add("diagonal/middle_axes", "diagonal", [](const std::vector<Tensor>& x) { return diagonal(x[0], -1, 1, 2); },
      {R({2, 4, 3, 2}, 32)}, "diagonal", {{"offset", int64_t{-1}}, {"axis1", int64_t{1}}, {"axis2", int64_t{2}}});
}

void movement(Adder& add) {
  add("concat/axis0", "concat", [](const std::vector<Tensor>& x) { return concat({x[0], x[1]}, 0); },
      {R({2, 3}, 40), R({4, 3}, 41)}, "concat", {{"axis", int64_t{0}}});
  add("concat/negative_axis_empty_part", "concat",
      [](const std::vector<Tensor>& x) { return concat({x[0], x[1], x[2]}, -1); },
      {R({2, 3}, 42), R({2, 0}, 43), R({2, 5}, 44)}, "concat", {{"axis", int64_t{-1}}});
  add("concat/stack", "concat", [](const std::vector<Tensor>& x) { return stack({x[0], x[1]}, -1); },
      {R({2, 3}, 45), R({2, 3}, 46)}, "stack", {{"axis", int64_t{-1}}});

  auto P = [&](const std::string& variant, const Tensor& x, const V& pads, PadMode mode, const char* name, double v) {
    add("pad/" + variant, "pad", [pads, mode, v](const std::vector<Tensor>& in) { return pad(in[0], pads, mode, v); },
        {x}, "pad", {{"pads", pads}, {"mode", std::string(name)}, {"value", v}});
  };
  P("constant", R({2, 3}, 50), {1, 2}, PadMode::Constant, "constant", 0.0);
  P("constant_value", R({2, 5}, 51), {1, 0, 2, 1}, PadMode::Constant, "constant", 2.5);
  P("constant_crop", R({2, 3}, 52), {-1, 2}, PadMode::Constant, "constant", 2.5);
  P("constant_3d", R({2, 3, 2}, 53), {1, 1, 0, 2, 1, 0}, PadMode::Constant, "constant", 0.0);
  P("constant_empty", R({0, 3}, 54), {1, 1}, PadMode::Constant, "constant", 2.5);
  for (auto [mode, name] : {std::pair{PadMode::Reflect, "reflect"}, std::pair{PadMode::Replicate, "replicate"}}) {
    const std::string n = name;
    P(n + "_1d", R({2, 5}, 55), {2, 3}, mode, name, 0.0);
    P(n + "_2d", R({2, 3, 4}, 56), {1, 2, 2, 1}, mode, name, 0.0);
    P(n + "_one_side", R({3, 5, 4}, 57), {0, 3, 1, 0}, mode, name, 0.0);
    P(n + "_3d", R({1, 2, 3, 4, 3}, 58), {1, 1, 1, 1, 2, 0}, mode, name, 0.0);
  }

  for (const V& ax : {V{0, 2}, V{-1}, V{}})
    add("flip/" + std::to_string(ax.size()) + "_axes", "flip", [ax](const std::vector<Tensor>& x) { return flip(x[0], ax); },
        {R({3, 4, 5}, 60)}, "flip", {{"axes", ax}});
  add("flip/empty", "flip", [](const std::vector<Tensor>& x) { return flip(x[0], {0, 1}); }, {R({0, 4}, 61)}, "flip",
      {{"axes", V{0, 1}}});
  add("flip/scalar", "flip", [](const std::vector<Tensor>& x) { return flip(x[0], {}); }, {R({}, 62)}, "flip",
      {{"axes", V{}}});

  add("roll/one_axis", "roll", [](const std::vector<Tensor>& x) { return roll(x[0], {2}, {1}); }, {R({4, 5}, 63)},
      "roll", {{"shifts", V{2}}, {"axes", V{1}}});
  add("roll/two_axes", "roll", [](const std::vector<Tensor>& x) { return roll(x[0], {-7, 3}, {0, -1}); },
      {R({4, 5}, 64)}, "roll", {{"shifts", V{-7, 3}}, {"axes", V{0, -1}}});
  add("roll/flat", "roll", [](const std::vector<Tensor>& x) { return roll(x[0], {3}, {}); }, {R({4, 5}, 65)}, "roll",
      {{"shifts", V{3}}, {"axes", V{}}});
  add("roll/empty", "roll", [](const std::vector<Tensor>& x) { return roll(x[0], {1}, {1}); }, {R({2, 0}, 66)}, "roll",
      {{"shifts", V{1}}, {"axes", V{1}}});

  for (int64_t d : {0, 1, -2, 9}) {
    add("tri/tril_" + std::to_string(d), "tri", [d](const std::vector<Tensor>& x) { return tril(x[0], d); },
        {R({4, 5}, 70)}, "tril", {{"diagonal", d}});
    add("tri/triu_" + std::to_string(d), "tri", [d](const std::vector<Tensor>& x) { return triu(x[0], d); },
        {R({2, 3, 3}, 71)}, "triu", {{"diagonal", d}});
  }
  add("tri/empty", "tri", [](const std::vector<Tensor>& x) { return triu(x[0], 1); }, {R({0, 3}, 72)}, "triu",
      {{"diagonal", int64_t{1}}});
}

void indexing(Adder& add) {
  // Random indices repeat, so these also check that duplicate reads sum their cotangents.
  add("gather/axis1", "gather", [](const std::vector<Tensor>& x) { return gather(x[0], 1, x[1]); },
      {R({4, 5}, 80), oracle::rand_index({4, 3}, 5, 81)}, "gather", {{"axis", int64_t{1}}});
  add("gather/negative_axis", "gather", [](const std::vector<Tensor>& x) { return gather(x[0], -2, x[1]); },
      {R({4, 5}, 82), oracle::rand_index({2, 5}, 4, 83)}, "gather", {{"axis", int64_t{-2}}});
  add("gather/empty_index", "gather", [](const std::vector<Tensor>& x) { return gather(x[0], 0, x[1]); },
      {R({4, 5}, 84), oracle::rand_index({0, 5}, 4, 85)}, "gather", {{"axis", int64_t{0}}});
  add("gather/scalar", "gather", [](const std::vector<Tensor>& x) { return gather(x[0], 0, x[1]); },
      {R({}, 86), zeros({}, {DType::Int64})}, "gather", {{"axis", int64_t{0}}});
  add("gather/index_select", "gather", [](const std::vector<Tensor>& x) { return index_select(x[0], 0, x[1]); },
      {R({4, 5}, 87), from_vector(V{3, 0, 0, 2})}, "index_select", {{"axis", int64_t{0}}});
  add("gather/take_along_axis", "gather", [](const std::vector<Tensor>& x) { return take_along_axis(x[0], x[1], -1); },
      {R({4, 5}, 88), oracle::rand_index({1, 2}, 5, 89)}, "take_along_axis", {{"axis", int64_t{-1}}});

  add("scatter/axis0", "scatter", [](const std::vector<Tensor>& x) { return scatter(x[0], 0, x[1], x[2]); },
      {R({4, 5}, 90), unique_index({3, 5}, 0, 4, 91), R({3, 5}, 92)}, "scatter", {{"axis", int64_t{0}}});
  add("scatter/negative_axis", "scatter", [](const std::vector<Tensor>& x) { return scatter(x[0], -1, x[1], x[2]); },
      {R({4, 5}, 115), unique_index({4, 2}, 1, 5, 116), R({4, 2}, 117)}, "scatter", {{"axis", int64_t{-1}}});
  add("scatter/add_axis1", "scatter", [](const std::vector<Tensor>& x) { return scatter_add(x[0], 1, x[1], x[2]); },
      {R({4, 5}, 118), oracle::rand_index({3, 7}, 5, 119), R({3, 7}, 120)}, "scatter_add", {{"axis", int64_t{1}}});
  // A src larger than the index: its extra elements are never read and get zero.
  add("scatter/larger_src", "scatter", [](const std::vector<Tensor>& x) { return scatter(x[0], -1, x[1], x[2]); },
      {R({4, 5}, 93), unique_index({4, 2}, 1, 5, 94), R({4, 3}, 95)}, "scatter", {{"axis", int64_t{-1}}});
  // Duplicate writes: the last in row-major order stays, so only it gets a gradient. PyTorch
  // leaves the winner unspecified, hence no oracle.
  add("scatter/duplicates", "scatter", [](const std::vector<Tensor>& x) { return scatter(x[0], 0, x[1], x[2]); },
      {R({4, 5}, 96), oracle::rand_index({6, 5}, 4, 97), R({6, 5}, 98)}, "", {{"axis", int64_t{0}}});
  add("scatter/scalar", "scatter", [](const std::vector<Tensor>& x) { return scatter(x[0], 0, x[1], x[2]); },
      {R({}, 99), zeros({}, {DType::Int64}), R({}, 100)}, "scatter", {{"axis", int64_t{0}}});
  add("scatter/add", "scatter", [](const std::vector<Tensor>& x) { return scatter_add(x[0], 0, x[1], x[2]); },
      {R({4, 5}, 101), oracle::rand_index({6, 5}, 4, 102), R({6, 5}, 103)}, "scatter_add", {{"axis", int64_t{0}}});
  add("scatter/add_larger_src", "scatter",
      [](const std::vector<Tensor>& x) { return scatter_add(x[0], 1, x[1], x[2]); },
      {R({4, 5}, 104), oracle::rand_index({3, 7}, 5, 105), R({3, 8}, 106)}, "scatter_add", {{"axis", int64_t{1}}});
  add("scatter/add_empty_index", "scatter",
      [](const std::vector<Tensor>& x) { return scatter_add(x[0], 1, x[1], x[2]); },
      {R({4, 5}, 107), oracle::rand_index({4, 0}, 5, 108), R({4, 2}, 109)}, "scatter_add", {{"axis", int64_t{1}}});
}

// Normal samples have no ties, so a finite-difference step never reorders them.
void sorting(Adder& add) {
  for (int64_t ax : {-1, 0})
    for (bool desc : {false, true})
      add("sort/axis" + std::to_string(ax) + (desc ? "_descending" : "_ascending"), "sort",
          [ax, desc](const std::vector<Tensor>& x) { return sort(x[0], ax, desc).first; }, {R({5, 9}, 110)}, "sort",
          {{"axis", ax}, {"descending", desc}}, 1, 0);
  add("sort/scalar", "sort", [](const std::vector<Tensor>& x) { return sort(x[0]).first; }, {R({}, 111)}, "sort",
      {{"axis", int64_t{-1}}, {"descending", false}}, 1, 0);
  add("sort/empty", "sort", [](const std::vector<Tensor>& x) { return sort(x[0], 0).first; }, {R({3, 0}, 112)},
      "sort", {{"axis", int64_t{0}}, {"descending", false}}, 1, 0);
  for (auto [k, ax] : {std::pair<int64_t, int64_t>{3, -1}, {2, 0}, {0, 1}, {4, 0}})
    for (bool largest : {true, false})
      add("topk/k" + std::to_string(k) + "_axis" + std::to_string(ax) + (largest ? "_largest" : "_smallest"), "topk",
          [k, ax, largest](const std::vector<Tensor>& x) { return topk(x[0], k, ax, largest).first; },
          {R({4, 7}, 113)}, "topk", {{"k", k}, {"axis", ax}, {"largest", largest}}, 1, 0);
  add("topk/scalar", "topk", [](const std::vector<Tensor>& x) { return topk(x[0], 1).first; }, {R({}, 114)}, "topk",
      {{"k", int64_t{1}}, {"axis", int64_t{-1}}, {"largest", true}}, 1, 0);
}

}  // namespace

SPORE_GRAD_CASES(shape) {
  std::vector<GradCase> mine;
  Adder add{mine};
  views(add);
  movement(add);
  indexing(add);
  sorting(add);
  // Each op squared as well: the cotangent reaching the op (and the tangent leaving it) then
  // depends on x, so the second-order checks differentiate the rules' own ops, and sort and topk
  // get a non-zero Hessian. No PyTorch twin for these.
  const size_t n = mine.size();
  for (size_t i = 0; i < n; ++i) {
    GradCase sq = mine[i];
    sq.name += "_squared";
    sq.fn = [f = mine[i].fn](const std::vector<Tensor>& x) {
      Tensor y = f(x);
      return y * y;
    };
    sq.order = 2;
    sq.oracle_op.clear();
    sq.attrs.clear();
    mine.push_back(std::move(sq));
  }
  for (auto& c : mine) cases.push_back(std::move(c));
}

}  // namespace spore::gradcheck
