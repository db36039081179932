// SPDX-License-Identifier: Apache-2.0
#include "passes/remat.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

#include "passes/graph_editor.h"
#include "prims/batch_norm.h"
#include "prims/unary.h"
#include "prims/views.h"

namespace spore::passes {
namespace {

constexpr size_t kMinBytes = size_t{1} << 20;  // smaller values do not pay for a recompute
constexpr int64_t kMinGap = 32;                // nodes between a value's early and late readers
constexpr size_t kMaxNodes = 8;                // elementwise nodes one recipe may recompute
constexpr size_t kMaxFullReads = 3;            // leaves of the value's size one recipe reads

bool cheap_elementwise(const ir::Node& n) {
  static const char* const ops[] = {"relu", "leaky_relu", "neg", "clamp", "add", "sub", "mul", "maximum", "minimum"};
  if (n.outputs().size() != 1 || !n.subgraphs().empty()) return false;
  return std::any_of(std::begin(ops), std::end(ops), [&](const char* o) { return n.op() == o; });
}

const ir::TensorType* tensor(const ir::Type& t) { return std::get_if<ir::TensorType>(&t); }

std::optional<int64_t> numel(const ir::TensorType& t) {
  int64_t e = 1;
  for (const ir::Dim& d : t.shape) {
    if (!d.is_const()) return std::nullopt;
    e *= d.value();
  }
  return e;
}

bool is_float32_or_64(ir::DType t) { return t == ir::DType::Float32 || t == ir::DType::Float64; }

// The graph's values, one flat index per node output; who reads each, and until when.
struct Values {
  std::vector<size_t> base;                  // per node: the flat index of its output 0
  std::vector<std::vector<int64_t>> readers;  // per value: the reading nodes, ascending
  std::vector<int64_t> last;                  // per value: its last reader (a graph output: n)
  explicit Values(const ir::Graph& g) {
    const auto& nodes = g.nodes();
    size_t total = 0;
    for (const auto& nd : nodes) base.push_back(total), total += nd->outputs().size();
    readers.resize(total);
    last.assign(total, -1);
    for (size_t k = 0; k < nodes.size(); ++k)
      for (ir::ValueRef v : nodes[k]->inputs())
        if (v.node != ir::ValueRef::kParam) {
          auto& r = readers[at(v)];
          if (r.empty() || r.back() != static_cast<int64_t>(k)) r.push_back(static_cast<int64_t>(k));
          last[at(v)] = static_cast<int64_t>(k);
        }
    for (const ir::Output& o : g.outputs())
      if (o.value.node != ir::ValueRef::kParam) last[at(o.value)] = static_cast<int64_t>(nodes.size());
  }
  size_t at(ir::ValueRef v) const { return base[static_cast<size_t>(v.node)] + static_cast<size_t>(v.index); }
};

// How to remake one value before node `point`: the nodes to redo, deps first (a batch_norm
// entry stands for its affine formula), and what they read that is kept.
struct Recipe {
  int64_t point = 0;
  std::vector<int32_t> nodes;
  size_t full_reads = 0;
  size_t elementwise = 0;
  ir::ValueRef value;          // in the old graph
  ir::ValueRef made;           // in the new graph, once emitted
};

class Planner {
 public:
  Planner(const ir::Graph& g, Values& vals, const std::vector<char>& remade)
      : g_(g), vals_(vals), remade_(remade) {}

  // Whether `v` can be read as it is at `point`: a parameter, a literal, or a value that lives
  // until then anyway (and was not itself given to a recompute).
  bool kept(ir::ValueRef v, int64_t point) const {
    if (v.node == ir::ValueRef::kParam) return true;
    if (g_.nodes()[static_cast<size_t>(v.node)]->op() == transforms::kConstantOp) return true;
    return !remade_[vals_.at(v)] && vals_.last[vals_.at(v)] >= point;
  }

  bool add(ir::ValueRef v, Recipe& r, int64_t full, bool top) {
    if (!top && kept(v, r.point)) {
      const ir::TensorType* t = tensor(g_.type_of(v));
      if (t && numel(*t) == full) ++r.full_reads;
      return r.full_reads <= kMaxFullReads;
    }
    if (v.node == ir::ValueRef::kParam) return false;
    if (std::find(r.nodes.begin(), r.nodes.end(), v.node) != r.nodes.end()) return true;
    const ir::Node& n = *g_.nodes()[static_cast<size_t>(v.node)];
    if (cheap_elementwise(n)) {
      if (++r.elementwise > kMaxNodes) return false;
      for (ir::ValueRef in : n.inputs())
        if (!add(in, r, full, false)) return false;
    } else if (n.op() == "batch_norm" && v.index == 0) {
      const auto& a = *static_cast<const prims::BatchNormAttrs*>(n.attrs());
      const ir::TensorType* xt = tensor(n.outputs()[0]);
      if (!a.training || !xt || !is_float32_or_64(xt->dtype) || xt->shape.size() < 2 || !xt->shape[1].is_const())
        return false;
      // The statistics are read as they are (their backward reads them), never remade.
      if (!kept({v.node, 1}, r.point) || !kept({v.node, 2}, r.point)) return false;
      for (ir::ValueRef in : n.inputs())
        if (!add(in, r, full, false) || !kept(in, r.point)) return false;
    } else {
      return false;
    }
    r.nodes.push_back(v.node);
    return true;
  }

 private:
  const ir::Graph& g_;
  Values& vals_;
  const std::vector<char>& remade_;
};

// (x - mean) * scale + bias with scale = weight / sqrt(var + eps), per channel: the forward
// kernel's formula (prims/batch_norm.cc) on the forward's own statistics (remat.h: rounding).
ir::ValueRef emit_batch_norm(GraphEditor& ed, const ir::Node& bn, int32_t k, const std::map<size_t, ir::ValueRef>& made,
                             const Values& vals) {
  auto in = [&](ir::ValueRef v) {
    if (v.node != ir::ValueRef::kParam)
      if (auto it = made.find(vals.at(v)); it != made.end()) return it->second;
    return ed.map(v);
  };
  const auto& a = *static_cast<const prims::BatchNormAttrs*>(bn.attrs());
  size_t i = 1;
  const ir::ValueRef x = in(bn.inputs()[0]);
  const std::optional<ir::ValueRef> w = a.has_weight ? std::optional(in(bn.inputs()[i++])) : std::nullopt;
  const std::optional<ir::ValueRef> b = a.has_bias ? std::optional(in(bn.inputs()[i++])) : std::nullopt;
  const ir::ValueRef mean = ed.map({k, 1}), var = ed.map({k, 2});
  const std::string& sc = bn.scope();
  const auto& xt = std::get<ir::TensorType>(bn.outputs()[0]);
  auto none = std::make_shared<const NoAttrs>();
  auto unary = std::make_shared<const prims::UnaryAttrs>();
  const ir::ValueRef e = emit_float_literal(ed, xt.dtype, a.eps, sc);
  const ir::ValueRef inv =
      emit_op(ed, "reciprocal", unary, {emit_op(ed, "sqrt", unary, {emit_op(ed, "add", none, {var, e}, sc)}, sc)}, sc);
  const ir::ValueRef scale = w ? emit_op(ed, "mul", none, {inv, *w}, sc) : inv;
  Shape s = {xt.shape[1].value()};
  while (s.size() + 1 < xt.shape.size()) s.push_back(1);
  auto reshape = std::make_shared<const prims::ReshapeAttrs>(prims::ReshapeAttrs{s});
  auto per_channel = [&](ir::ValueRef v) { return emit_op(ed, "reshape", reshape, {v}, sc); };
  ir::ValueRef y = emit_op(ed, "sub", none, {x, per_channel(mean)}, sc);
  y = emit_op(ed, "mul", none, {y, per_channel(scale)}, sc);
  if (b) y = emit_op(ed, "add", none, {y, per_channel(*b)}, sc);
  return y;
}

}  // namespace

ir::GraphPtr rematerialize(const ir::GraphPtr& g) {
  // SPORE_REMAT=0 keeps every activation: more memory, no recompute.
  if (const char* e = std::getenv("SPORE_REMAT"); e && std::string_view(e) == "0") return g;
  const auto& nodes = g->nodes();
  const auto n = static_cast<int64_t>(nodes.size());
  Values vals(*g);
  std::vector<char> remade(vals.last.size(), 0);
  std::vector<Recipe> recipes;
  Planner planner(*g, vals, remade);
  for (int64_t k = 0; k < n; ++k) {
    const ir::Node& nd = *nodes[static_cast<size_t>(k)];
    if (!cheap_elementwise(nd)) continue;
    const ir::TensorType* t = tensor(nd.outputs()[0]);
    const std::optional<int64_t> e = t ? numel(*t) : std::nullopt;
    if (!e || !is_float32_or_64(t->dtype) || static_cast<size_t>(*e) * (t->dtype == ir::DType::Float64 ? 8 : 4) < kMinBytes)
      continue;
    const ir::ValueRef v{static_cast<int32_t>(k), 0};
    const size_t vi = vals.at(v);
    const std::vector<int64_t>& rd = vals.readers[vi];
    if (rd.empty() || vals.last[vi] == n) continue;  // a graph output lives to the end anyway
    // The widest gap between consecutive readers splits them into early and late.
    int64_t prev = k, gap = 0;
    size_t split = 0;
    for (size_t i = 0; i < rd.size(); ++i) {
      if (rd[i] - prev > gap && i > 0) gap = rd[i] - prev, split = i;
      prev = rd[i];
    }
    if (split == 0 || gap < kMinGap) continue;
    Recipe r;
    r.point = rd[split];
    r.value = v;
    if (!planner.add(v, r, *e, true)) continue;
    remade[vi] = 1;
    vals.last[vi] = rd[split - 1];
    recipes.push_back(std::move(r));
  }
  if (recipes.empty()) return g;

  std::vector<std::vector<size_t>> before(nodes.size());
  std::map<size_t, size_t> recipe_of;  // remade value -> its recipe
  for (size_t i = 0; i < recipes.size(); ++i) {
    before[static_cast<size_t>(recipes[i].point)].push_back(i);
    recipe_of[vals.at(recipes[i].value)] = i;
  }
  GraphEditor ed(g);
  for (int64_t k = 0; k < n; ++k) {
    for (size_t ri : before[static_cast<size_t>(k)]) {
      Recipe& r = recipes[ri];
      std::map<size_t, ir::ValueRef> made;  // old value -> its recomputed copy
      for (int32_t j : r.nodes) {
        const ir::Node& m = *nodes[static_cast<size_t>(j)];
        ir::ValueRef out;
        if (m.op() == "batch_norm") {
          out = emit_batch_norm(ed, m, j, made, vals);
        } else {
          std::vector<ir::ValueRef> in;
          for (ir::ValueRef u : m.inputs()) {
            auto it = u.node == ir::ValueRef::kParam ? made.end() : made.find(vals.at(u));
            in.push_back(it != made.end() ? it->second : ed.map(u));
          }
          out = ed.add(std::make_shared<const ir::Node>(m.op(), m.attrs_ptr(), std::move(in), m.outputs(), m.scope()))[0];
        }
        made[vals.at({j, 0})] = out;
      }
      r.made = made.at(vals.at(r.value));
    }
    const ir::NodePtr& nd = nodes[static_cast<size_t>(k)];
    std::vector<ir::ValueRef> in = ed.map_inputs(*nd);
    for (size_t i = 0; i < in.size(); ++i) {
      const ir::ValueRef u = nd->inputs()[i];
      if (u.node == ir::ValueRef::kParam) continue;
      auto it = recipe_of.find(vals.at(u));
      if (it != recipe_of.end() && k >= recipes[it->second].point) in[i] = recipes[it->second].made;
    }
    ed.bind_node(static_cast<size_t>(k), ed.add(with_inputs(nd, std::move(in))));
  }
  return ed.finish();
}

}  // namespace spore::passes
