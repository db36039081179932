// SPDX-License-Identifier: Apache-2.0
// The public control-flow functions (spore/control_flow.h): plain C++ control flow when no
// symbolic trace is active, If / Switch / While / Scan nodes when one is.
#include <climits>
#include <cstdint>

#include "autodiff/frames.h"
#include "runtime/dispatch.h"
#include "spore/control_flow.h"
#include "spore/error.h"
#include "spore/ops.h"
#include "transforms/control_flow.h"
#include "transforms/control_flow_checkpoint.h"
#include "transforms/trace.h"

namespace spore {
namespace {

using transforms::ControlFlowAttrs;
using transforms::SymbolicTrace;

bool tracing() { return autodiff::innermost(autodiff::Frame::Kind::Symbolic) != nullptr; }

std::string types_of(const TensorTree& t) {
  std::string s = t.structure_str(true);
  for (const Tensor& l : t.leaves()) s += detail::cat(" ", dtype_name(l.dtype()));
  return s;
}

void append_unique(std::vector<Tensor>& list, const std::vector<Tensor>& more) {
  for (const Tensor& t : more) {
    bool seen = false;
    for (const Tensor& u : list) seen = seen || u.is_same(t);
    if (!seen) list.push_back(t);
  }
}

// One sub-graph per function, all with the same inputs: the declared ones, then every outside
// tensor any of the functions uses (found by a first trace), so the node can pass them as
// explicit operands and each sub-graph stays closed.
struct Traced {
  std::vector<ir::GraphPtr> graphs;
  std::vector<Tensor> captures;
  std::vector<TensorTree> outs;  // each function's result structure (symbolic leaves)
};

using Body = std::function<TensorTree(const TensorTree&)>;

// `fixed_captures` are bound as inputs right after the first `bind_after` argument leaves (all of
// them by default), so loop-invariant operands can sit between carries and per-step slices.
Traced trace_closed(const char* name, const std::vector<Body>& fns, const TensorTree& args,
                    const std::vector<Tensor>& fixed_captures = {}, size_t bind_after = SIZE_MAX) {
  auto trace_one = [&](const Body& fn, const std::vector<Tensor>* bind, std::vector<Tensor>* found,
                       TensorTree* out) -> ir::GraphPtr {
    SymbolicTrace st(name, true);
    TensorTree result;
    {
      autodiff::FrameGuard open(&st);
      auto leaves = args.leaves();
      const size_t split = std::min(bind_after, leaves.size());
      for (size_t i = 0; i < split; ++i) leaves[i] = st.input(runtime::type_of(leaves[i]));
      if (bind)
        for (const Tensor& c : *bind) st.bind(c);
      for (size_t i = split; i < leaves.size(); ++i) leaves[i] = st.input(runtime::type_of(leaves[i]));
      result = fn(args.with_leaves(leaves));
    }
    // A random op's key is fixed in its attributes when traced, so inside a loop body it would
    // repeat the same numbers every step, and a branch would draw even when not taken.
    SPORE_CHECK(!st.has_random(), "[", name, "] a random op (uniform, normal, dropout ...) inside a traced ", name,
                " body or branch is not supported yet: its numbers would repeat on every step. Draw them before the ",
                name, " (e.g. one uniform of shape (steps, ...)) and pass them in as operands or scanned inputs");
    auto g = st.finish(result.leaves());
    if (found) *found = st.captured();
    if (out) *out = result;
    return g;
  };
  std::vector<Tensor> captures = fixed_captures;
  for (const Body& fn : fns) {
    std::vector<Tensor> found;
    trace_one(fn, &fixed_captures, &found, nullptr);
    append_unique(captures, found);
  }
  Traced t;
  t.captures = captures;
  for (const Body& fn : fns) {
    TensorTree out;
    t.graphs.push_back(trace_one(fn, &captures, nullptr, &out));
    t.outs.push_back(out);
  }
  return t;
}

std::vector<Tensor> concat_lists(std::initializer_list<const std::vector<Tensor>*> lists) {
  std::vector<Tensor> out;
  for (auto* l : lists) out.insert(out.end(), l->begin(), l->end());
  return out;
}

TensorTree branches(const char* api, const Primitive& p, const Tensor& selector,
                    const std::vector<TreeFunction>& fns, const TensorTree& operands) {
  std::vector<Body> bodies(fns.begin(), fns.end());
  Traced t = trace_closed(api, bodies, operands);
  for (size_t k = 1; k < t.outs.size(); ++k)
    SPORE_CHECK(t.outs[k].same_structure(t.outs[0]), "[", api, "] the branches return different structures: ",
                t.outs[0].structure_str(true), " and ", t.outs[k].structure_str(true),
                "; every branch must return the same structure, dtypes and shapes");
  SPORE_CHECK(t.outs[0].num_leaves() > 0, "[", api, "] the branches return no tensor; a branch must return at least "
              "one (a conditional with no result computes nothing)");
  ControlFlowAttrs a;
  a.graphs = t.graphs;
  auto leaves = operands.leaves();
  std::vector<Tensor> sel{selector};
  auto outs = transforms::call_control_flow(p, a, concat_lists({&sel, &leaves, &t.captures}));
  return t.outs[0].with_leaves(outs);
}

}  // namespace

TensorTree cond(const Tensor& pred, const TreeFunction& true_fn, const TreeFunction& false_fn,
                const TensorTree& operands) {
  SPORE_CHECK(pred.dtype() == DType::Bool && pred.dim() == 0, "[cond] the predicate must be a 0-d bool tensor, got ",
              dtype_name(pred.dtype()), shape_str(pred.shape()), "; compare to get one (e.g. sum(x) > 0)");
  if (!tracing()) return pred.item<bool>() ? true_fn(operands) : false_fn(operands);
  return branches("cond", transforms::if_primitive(), pred, {true_fn, false_fn}, operands);
}

TensorTree switch_case(const Tensor& index, const std::vector<TreeFunction>& fns, const TensorTree& operands) {
  SPORE_CHECK(!fns.empty(), "[switch_case] needs at least one branch");
  SPORE_CHECK(is_integral(index.dtype(), false) && index.dim() == 0, "[switch_case] the index must be a 0-d integer tensor, got ",
              dtype_name(index.dtype()), shape_str(index.shape()));
  if (!tracing()) {
    const int64_t k = std::clamp<int64_t>(index.item<int64_t>(), 0, static_cast<int64_t>(fns.size()) - 1);
    return fns[static_cast<size_t>(k)](operands);
  }
  return branches("switch_case", transforms::switch_primitive(), index, fns, operands);
}

namespace {

// The while node of a loop: the sub-graphs, and its operands (the carries, then the outside
// tensors the functions use, which ride along as carries the body passes through).
std::pair<ControlFlowAttrs, std::vector<Tensor>> while_node(const std::function<Tensor(const TensorTree&)>& cond_fn,
                                                            const TreeFunction& body_fn, const TensorTree& init) {
  std::vector<Body> fns{[&](const TensorTree& c) { return TensorTree(cond_fn(c)); },
                        [&](const TensorTree& c) { return body_fn(c); }};
  Traced first = trace_closed("while_loop", fns, init);
  SPORE_CHECK(first.outs[1].same_structure(init), "[while_loop] body_fn changes the carried structure: it enters as ",
              init.structure_str(true), " and leaves as ", first.outs[1].structure_str(true));
  // Retrace with the captures bound after the carries: cond and body take (carries...,
  // captures...) and the body returns the captures unchanged, so they ride along as carries.
  std::vector<Tensor> caps = first.captures;
  std::vector<Body> fns2{[&](const TensorTree& c) { return TensorTree(cond_fn(c)); },
                         [&](const TensorTree& c) {
                           auto out = body_fn(c).leaves();
                           out.insert(out.end(), caps.begin(), caps.end());
                           return TensorTree(out);
                         }};
  Traced t = trace_closed("while_loop", fns2, init, caps);
  SPORE_CHECK(t.captures.size() == caps.size(), "[while_loop] internal: captures changed between traces");
  std::vector<Tensor> all = init.leaves();
  all.insert(all.end(), caps.begin(), caps.end());
  ControlFlowAttrs a;
  a.num_carry = static_cast<int64_t>(all.size());
  a.graphs = t.graphs;
  return {std::move(a), std::move(all)};
}

}  // namespace

TensorTree while_loop(const std::function<Tensor(const TensorTree&)>& cond_fn, const TreeFunction& body_fn,
                      const TensorTree& init, const WhileOptions& options) {
  SPORE_CHECK(options.checkpoint_every >= 0, "[while_loop] checkpoint_every must be 0 (keep every trip's residuals) or "
              "a positive trip count between checkpoints, got ", options.checkpoint_every);
  // PyNative under a tape with checkpointing: the loop becomes one node (control_flow_checkpoint.h).
  const bool record_node = options.checkpoint_every > 0 && !tracing() && transforms::reverse_tapes_open();
  if (!tracing() && !record_node) {
    TensorTree carry = init;
    const std::string want = types_of(init);
    for (;;) {
      Tensor c = cond_fn(carry);
      SPORE_CHECK(c.dtype() == DType::Bool && c.dim() == 0, "[while_loop] cond_fn must return a 0-d bool tensor, got ",
                  dtype_name(c.dtype()), shape_str(c.shape()));
      if (!c.item<bool>()) return carry;
      carry = body_fn(carry);
      SPORE_CHECK(types_of(carry) == want, "[while_loop] body_fn changes the carried values: they enter as ", want,
                  " and leave as ", types_of(carry), "; the loop carry must keep its structure, dtypes and shapes");
    }
  }
  auto [a, all] = while_node(cond_fn, body_fn, init);
  a.checkpoint_every = options.checkpoint_every;
  auto outs = transforms::call_control_flow(transforms::while_primitive(), a, all);
  outs.resize(init.num_leaves());
  return init.with_leaves(outs);
}

namespace {

// Meta tensors of one step's slice of each x (types only: an empty xs has no slice to take).
std::vector<Tensor> slice_types(const std::vector<Tensor>& x_leaves) {
  std::vector<Tensor> s;
  for (const Tensor& x : x_leaves) {
    const Shape& full = x.shape();
    s.push_back(Tensor::empty(Shape(full.begin() + 1, full.end()), x.dtype(), kMeta));
  }
  return s;
}

// The ys of a scan over zero steps: fn is traced once on types to learn their structure, and
// each is empty along a new leading axis. The generator is rewound so the trace draws nothing.
TensorTree empty_ys(const ScanFunction& fn, const TensorTree& init, const TensorTree& xs) {
  Generator& gen = default_generator();
  const uint64_t seed = gen.seed(), offset = gen.offset();
  SymbolicTrace st("scan_types", true);
  TensorTree y;
  {
    autodiff::FrameGuard open(&st);
    auto c = init.leaves();
    for (Tensor& l : c) l = st.input(runtime::type_of(l));
    auto x = slice_types(xs.leaves());
    for (Tensor& l : x) l = st.input(runtime::type_of(l));
    y = fn(init.with_leaves(c), xs.with_leaves(x)).second;
  }
  gen.set_state(seed, offset);
  std::vector<Tensor> empty;
  for (const Tensor& l : y.leaves()) {
    Shape s{0};
    for (Dim d : l.shape()) s.push_back(d);
    empty.push_back(ops::zeros(s, {l.dtype()}));
  }
  return y.with_leaves(empty);
}

}  // namespace

std::pair<TensorTree, TensorTree> scan(const ScanFunction& fn, const TensorTree& init, const TensorTree& xs,
                                       bool reverse) {
  auto x_leaves = xs.leaves();
  // The length may be symbolic (a traced dynamic batch, or a value symbol: shape.h).
  Dim length = 0;
  bool found = false;
  for (const Tensor& x : x_leaves) {
    SPORE_CHECK(x.dim() >= 1, "[scan] every leaf of xs needs a leading axis to scan over, got shape ", shape_str(x.shape()));
    SPORE_CHECK(!found || x.shape()[0] == length, "[scan] the leaves of xs have different lengths: ", dim_str(length), " and ",
                dim_str(x.shape()[0]), "; they must share their leading dimension");
    length = x.shape()[0];
    found = true;
  }
  SPORE_CHECK(found, "[scan] xs has no tensors to scan over; use fori_loop for a counted loop");
  auto slice_tree = [&](int64_t i) {
    std::vector<Tensor> s;
    for (const Tensor& x : x_leaves) s.push_back(ops::select(x, 0, i));
    return xs.with_leaves(s);
  };
  if (!tracing()) {
    TensorTree carry = init;
    const std::string want = types_of(init);
    std::vector<TensorTree> ys;
    for (int64_t s = 0; s < length; ++s) {
      const int64_t i = reverse ? length - 1 - s : s;
      auto [c, y] = fn(carry, slice_tree(i));
      SPORE_CHECK(types_of(c) == want, "[scan] fn changes the carry: it enters as ", want, " and leaves as ", types_of(c),
                  "; the carry must keep its structure, dtypes and shapes");
      carry = c;
      ys.push_back(y);
    }
    if (reverse) std::reverse(ys.begin(), ys.end());
    if (ys.empty()) return {carry, empty_ys(fn, init, xs)};
    const size_t ny = ys[0].num_leaves();
    std::vector<Tensor> stacked;
    for (size_t k = 0; k < ny; ++k) {
      std::vector<Tensor> col;
      for (auto& y : ys) col.push_back(y.leaves()[k]);
      stacked.push_back(ops::stack(col, 0));
    }
    return {carry, ys[0].with_leaves(stacked)};
  }
  // Traced: body(carries..., captures..., x slices...) -> (carries..., captures..., ys...).
  const size_t nc = init.num_leaves();
  const std::vector<Tensor> slice0 = slice_types(x_leaves);  // the traces read types only
  TensorTree y_structure;
  std::vector<Tensor> caps;
  auto body = [&](const TensorTree& t) {
    auto l = t.leaves();  // (carries..., x slices...); captures are bound, not declared
    TensorTree carry = init.with_leaves(std::vector<Tensor>(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(nc)));
    TensorTree x = xs.with_leaves(std::vector<Tensor>(l.begin() + static_cast<std::ptrdiff_t>(nc), l.end()));
    auto [c, y] = fn(carry, x);
    y_structure = y;
    auto out = c.leaves();
    out.insert(out.end(), caps.begin(), caps.end());
    for (const Tensor& yl : y.leaves()) out.push_back(yl);
    return TensorTree(out);
  };
  std::vector<Tensor> args = init.leaves();
  args.insert(args.end(), slice0.begin(), slice0.end());
  Traced first = trace_closed("scan", {body}, TensorTree(args));
  caps = first.captures;
  Traced t = trace_closed("scan", {body}, TensorTree(args), caps, nc);
  SPORE_CHECK(t.captures.size() == caps.size(), "[scan] internal: captures changed between traces");
  ControlFlowAttrs a;
  a.num_carry = static_cast<int64_t>(nc + caps.size());
  a.length = is_symbolic(length) ? -1 : length;  // -1: the scanned operands' leading size, as they run
  a.reverse = reverse;
  a.graphs = t.graphs;
  std::vector<Tensor> in = init.leaves();
  in.insert(in.end(), caps.begin(), caps.end());
  in.insert(in.end(), x_leaves.begin(), x_leaves.end());
  auto outs = transforms::call_control_flow(transforms::scan_primitive(), a, in);
  std::vector<Tensor> carry(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(nc));
  std::vector<Tensor> ys(outs.begin() + static_cast<std::ptrdiff_t>(nc + caps.size()), outs.end());
  return {init.with_leaves(carry), y_structure.with_leaves(ys)};
}

TensorTree fori_loop(int64_t lower, int64_t upper, const std::function<TensorTree(const Tensor& i, const TensorTree&)>& body,
                     const TensorTree& init) {
  if (upper <= lower) return init;
  Tensor idx = ops::arange(lower, upper);
  auto r = scan([&](const TensorTree& c, const TensorTree& i) { return std::make_pair(body(i.tensor(), c), TensorTree(std::vector<TensorTree>{})); },
                init, TensorTree(idx));
  return r.first;
}

}  // namespace spore
