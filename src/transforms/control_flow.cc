// SPDX-License-Identifier: Apache-2.0
#include "transforms/control_flow.h"

#include <sstream>

#include "autodiff/frames.h"
#include "runtime/dispatch.h"
#include "runtime/trace_hooks.h"
#include "spore/error.h"
#include "spore/ops.h"
#include "transforms/control_flow_checkpoint.h"
#include "transforms/control_flow_helpers.h"
#include "transforms/interpreter.h"
#include "transforms/symbol_binding.h"
#include "transforms/ir_bridge.h"
#include "transforms/subgraph_plans.h"

namespace spore::transforms {
namespace {

std::string types_str(std::span<const TensorType> ts) {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < ts.size(); ++i) os << (i ? ", " : "") << dtype_name(ts[i].dtype) << shape_str(ts[i].shape);
  os << ')';
  return os.str();
}
bool same_types(std::span<const TensorType> a, std::span<const TensorType> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].dtype != b[i].dtype || !(a[i].shape == b[i].shape)) return false;
  return true;
}

// Whether symbol `s` names a size of one of `g`'s parameters (an operand or capture): bound
// outside the branch, not by it.
bool bound_outside(const ir::Graph& g, Dim s) {
  const std::string name = dim_str(s);
  for (const auto& p : g.params())
    for (const ir::Dim& d : std::get<ir::TensorType>(p.type).shape)
      if (d.kind() == ir::Dim::Kind::Symbol && d.name() == name) return true;
  return false;
}

// Branch results agree where each gives a size that its own values give (a value symbol bound
// inside the branch): the node's result takes the first branch's symbol, which the interpreter
// binds from the result whichever branch ran (interpreter.cc). A symbol bound outside is a size
// the result must have, so it must match exactly.
bool same_branch_types(std::span<const TensorType> a, const ir::Graph& ga, std::span<const TensorType> b,
                       const ir::Graph& gb) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype != b[i].dtype || a[i].shape.size() != b[i].shape.size()) return false;
    for (size_t d = 0; d < a[i].shape.size(); ++d) {
      const Dim x = a[i].shape[d], y = b[i].shape[d];
      if (x == y) continue;
      const bool local = is_value_size(x) && is_value_size(y) && is_plain_symbol(x) && is_plain_symbol(y) &&
                         !bound_outside(ga, x) && !bound_outside(gb, y);
      if (!local) return false;
    }
  }
  return true;
}

const ControlFlowAttrs& cf(const void* a) { return *static_cast<const ControlFlowAttrs*>(a); }

// A sub-graph's parameters against the operands the node hands it (a run-time dimension on
// either side matches any size).
void check_params(const std::string& op, const ir::Graph& g, std::span<const TensorType> operands, const char* what) {
  std::vector<TensorType> params;
  for (const auto& p : g.params()) params.push_back(from_ir(std::get<ir::TensorType>(p.type)));
  bool ok = params.size() == operands.size();
  for (size_t i = 0; ok && i < params.size(); ++i) {
    ok = params[i].dtype == operands[i].dtype && params[i].shape.size() == operands[i].shape.size();
    for (size_t d = 0; ok && d < params[i].shape.size(); ++d) {
      const Dim a = params[i].shape[d], b = operands[i].shape[d];
      ok = a == b || is_symbolic(a) || is_symbolic(b);
    }
  }
  SPORE_CHECK(ok, "[", op, "] ", what, " @", g.name(), " takes ", types_str(params), " but the node passes ",
              types_str(operands), "; a control-flow node's operands must match its sub-graph's parameters");
}

void eager_branches(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out, bool is_if) {
  const auto& a = cf(attrs);
  int64_t k = 0;
  if (is_if) {
    k = in[0].item<bool>() ? 0 : 1;
  } else {
    k = std::clamp<int64_t>(in[0].item<int64_t>(), 0, static_cast<int64_t>(a.graphs.size()) - 1);
  }
  out = run_subgraph(a.graphs[static_cast<size_t>(k)], in.subspan(1));
}
void eager_if(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  eager_branches(attrs, in, out, true);
}
void eager_switch(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  eager_branches(attrs, in, out, false);
}
void eager_while(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  const auto& a = cf(attrs);
  const size_t n = in.size();
  const auto body_types = cf_helpers::output_types(*a.graphs[1]);
  std::vector<std::vector<Tensor>> extras(body_types.size() - n);  // with `stack`: per trip
  out.assign(in.begin(), in.end());
  int64_t trips = 0;
  while (run_subgraph(a.graphs[0], out)[0].item<bool>()) {
    std::vector<Tensor> r = run_subgraph(a.graphs[1], out);
    for (size_t e = 0; e < extras.size(); ++e) extras[e].push_back(r[n + e]);
    r.resize(n);
    out = std::move(r);
    ++trips;
  }
  if (!a.stack) return;
  out.push_back(ops::scalar_tensor(trips, DType::Int64));
  for (size_t e = 0; e < extras.size(); ++e) {
    if (trips > 0) {
      out.push_back(ops::stack(extras[e], 0));
    } else {
      Shape s{0};
      for (Dim d : body_types[n + e].shape) s.push_back(d);
      out.push_back(ops::zeros(s, {body_types[n + e].dtype}));
    }
  }
}
void eager_scan(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out) {
  const auto& a = cf(attrs);
  const size_t nc = static_cast<size_t>(a.num_carry);
  const int64_t length = a.length >= 0 ? a.length : (in.size() > nc ? in[nc].shape()[0] : 0);
  std::vector<Tensor> carry(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(nc));
  std::vector<std::vector<Tensor>> ys;
  std::vector<Tensor> args;
  for (int64_t s = 0; s < length; ++s) {
    const int64_t i = a.reverse ? length - 1 - s : s;
    args = carry;
    for (size_t x = nc; x < in.size(); ++x) args.push_back(ops::select(in[x], 0, i));
    auto r = run_subgraph(a.graphs[0], args);
    carry.assign(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(nc));
    if (ys.empty()) ys.resize(r.size() - nc);
    for (size_t y = nc; y < r.size(); ++y) ys[y - nc].push_back(r[y]);
  }
  out = carry;
  const auto types = cf_helpers::output_types(*a.graphs[0]);
  for (size_t y = 0; y < types.size() - nc; ++y) {
    if (length == 0) {
      // No trip ran: the stacked result's other sizes come from the body's type, with the
      // enclosing graph's symbols bound (a batch); a size only the body's values give is unknown.
      Shape s{0};
      const SymbolSizes* enclosing = enclosing_sizes();
      for (Dim d : types[nc + y].shape) {
        if (is_symbolic(d) && enclosing != nullptr)
          d = dim_substitute(d, [enclosing](Dim sym, int64_t& size) {
            auto it = enclosing->find(sym);
            if (it == enclosing->end()) return false;
            size = it->second;
            return true;
          });
        SPORE_CHECK(!is_symbolic(d), "[scan] runs no iteration, so the size ", dim_str(d), " of its stacked output ", y,
                    " (", shape_str(types[nc + y].shape), ") is unknown: the body's values would give it; run it at "
                    "least once or give that size another way");
        s.push_back(d);
      }
      out.push_back(ops::zeros(s, {types[nc + y].dtype}));
      continue;
    }
    if (a.reverse) std::reverse(ys[y].begin(), ys[y].end());
    out.push_back(ops::stack(ys[y], 0));
  }
}

// Inference is only a formality for these (types come from the graphs); dispatch never runs it.
void infer_none(const ControlFlowAttrs&, std::span<const TensorType>, OutTypes&) {}
Cost no_cost(const ControlFlowAttrs&, std::span<const TensorType>, std::span<const TensorType>) { return {}; }

const Primitive& define_cf(const char* name, EagerFn eager) {
  PrimitiveSpec<ControlFlowAttrs> spec;
  spec.name = name;
  spec.infer = infer_none;
  spec.cost = no_cost;
  Primitive& p = const_cast<Primitive&>(define_primitive(spec));
  p.eager = eager;
  p.sparse_cotangents = true;
  return p;
}

const Primitive& if_def() {
  static const Primitive& p = define_cf("if", eager_if);
  return p;
}
const Primitive& switch_def() {
  static const Primitive& p = define_cf("switch", eager_switch);
  return p;
}
const Primitive& while_def() {
  static const Primitive& p = define_cf("while", eager_while);
  return p;
}
const Primitive& scan_def() {
  static const Primitive& p = define_cf("scan", eager_scan);
  return p;
}
// The rules are set here, with the primitives, because src/autodiff may not depend on src/transforms.
[[maybe_unused]] const bool registered =
    (if_def(), switch_def(), while_def(), scan_def(), install_control_flow_rules(), true);

}  // namespace

const Primitive& if_primitive() { return if_def(); }
const Primitive& switch_primitive() { return switch_def(); }
const Primitive& while_primitive() { return while_def(); }
const Primitive& scan_primitive() { return scan_def(); }
bool is_control_flow(const Primitive& p) {
  return &p == &if_def() || &p == &switch_def() || &p == &while_def() || &p == &scan_def();
}

std::vector<ir::GraphPtr> subgraphs_of(const Primitive& p, const void* attrs) {
  if (!is_control_flow(p)) return {};
  return cf(attrs).graphs;
}

std::shared_ptr<const void> attrs_with_subgraphs(const Primitive& p, const void* attrs,
                                                 const std::vector<ir::GraphPtr>& graphs) {
  auto a = std::make_shared<ControlFlowAttrs>(cf(attrs));
  a->graphs = graphs;
  return a;
}

std::vector<TensorType> control_flow_types(const Primitive& p, const ControlFlowAttrs& a,
                                           std::span<const TensorType> in) {
  const std::string& op = p.name;
  const size_t want_graphs = &p == &scan_def() ? 1 : &p == &switch_def() ? std::max<size_t>(a.graphs.size(), 1) : 2;
  SPORE_CHECK(a.graphs.size() == want_graphs, "[", op, "] needs ", want_graphs, " sub-graph", want_graphs == 1 ? "" : "s",
              ", got ", a.graphs.size());
  if (&p == &if_def() || &p == &switch_def()) {
    SPORE_CHECK(!in.empty(), "[", op, "] needs a predicate or index");
    for (size_t k = 0; k < a.graphs.size(); ++k) check_params(op, *a.graphs[k], in.subspan(1), "branch");
    if (&p == &if_def())
      SPORE_CHECK(in[0].dtype == DType::Bool && in[0].shape.empty(), "[cond] the predicate must be a 0-d bool tensor, got ",
                  dtype_name(in[0].dtype), shape_str(in[0].shape), "; compare to get one (e.g. sum(x) > 0)");
    else
      SPORE_CHECK(is_integral(in[0].dtype, false) && in[0].shape.empty(), "[switch] the index must be a 0-d integer tensor, got ",
                  dtype_name(in[0].dtype), shape_str(in[0].shape));
    auto first = cf_helpers::output_types(*a.graphs[0]);
    for (size_t k = 1; k < a.graphs.size(); ++k) {
      auto other = cf_helpers::output_types(*a.graphs[k]);
      if (!same_branch_types(first, *a.graphs[0], other, *a.graphs[k])) {
        if (&p == &if_def())
          throw Error(detail::cat("[cond] the branches return different types: true_fn returns ", types_str(first),
                                  ", false_fn returns ", types_str(other),
                                  "; both branches must return the same structure, dtypes and shapes"));
        throw Error(detail::cat("[switch] the branches return different types: branch 0 returns ", types_str(first),
                                ", branch ", k, " returns ", types_str(other),
                                "; every branch must return the same structure, dtypes and shapes"));
      }
    }
    return first;
  }
  if (&p == &while_def()) {
    SPORE_CHECK(a.checkpoint_every >= 0, "[while_loop] checkpoint_every=", a.checkpoint_every,
                "; it must be 0 (keep every trip's residuals) or a positive trip count between checkpoints");
    check_params(op, *a.graphs[0], in, "cond");
    check_params(op, *a.graphs[1], in, "body");
    auto c = cf_helpers::output_types(*a.graphs[0]);
    SPORE_CHECK(c.size() == 1 && c[0].dtype == DType::Bool && c[0].shape.empty(),
                "[while_loop] cond_fn must return a 0-d bool tensor, got ", types_str(c));
    const auto body = cf_helpers::output_types(*a.graphs[1]);
    const std::span<const TensorType> carried(body.data(), a.stack ? std::min(body.size(), in.size()) : body.size());
    SPORE_CHECK(same_types(carried, in), "[while_loop] body_fn changes the carried values: they enter as ",
                types_str(in), " and leave as ", types_str(carried), "; the loop carry must keep its dtypes and shapes "
                "(pad or preallocate to a fixed size)");
    if (!a.stack) return body;
    const Dim trips = symbol_named(a.trip_symbol);
    std::vector<TensorType> out(carried.begin(), carried.end());
    out.push_back(TensorType{DType::Int64, false, {}});
    for (size_t e = in.size(); e < body.size(); ++e) {
      TensorType st{body[e].dtype, false, Shape{trips}};
      for (Dim d : body[e].shape) st.shape.push_back(d);
      out.push_back(st);
    }
    return out;
  }
  // scan
  auto body = cf_helpers::output_types(*a.graphs[0]);
  const size_t nc = static_cast<size_t>(a.num_carry);
  SPORE_CHECK(a.num_carry >= 0 && nc <= in.size() && nc <= body.size(), "[scan] num_carry=", a.num_carry,
              " does not fit a node with ", in.size(), " operands whose body returns ", body.size(), " values");
  std::vector<TensorType> step(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(nc));
  for (size_t i = nc; i < in.size(); ++i) {
    SPORE_CHECK(!in[i].shape.empty(), "[scan] scanned operand ", i - nc, " is 0-d; it needs a leading axis");
    const Dim len = in[i].shape[0];
    SPORE_CHECK(a.length < 0 || len == a.length || is_symbolic(len), "[scan] length=", a.length, " but scanned operand ",
                i - nc, " has ", shape_str(in[i].shape), "; every scanned operand's leading size is the length");
    step.push_back(cf_helpers::slice_type(in[i]));
  }
  check_params(op, *a.graphs[0], step, "body");
  SPORE_CHECK(same_types(std::span<const TensorType>(body).first(nc), in.first(nc)), "[scan] fn changes the carry: it enters as ",
              types_str(in.first(nc)), " and leaves as ", types_str(std::span<const TensorType>(body).first(nc)),
              "; the carry must keep its dtypes and shapes");
  std::vector<TensorType> out(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(nc));
  const Dim length = a.length >= 0 ? a.length : (in.size() > nc && !in[nc].shape.empty() ? in[nc].shape[0] : 0);
  for (size_t y = nc; y < body.size(); ++y) {
    TensorType t = body[y];
    t.shape = Shape{length};
    for (Dim d : body[y].shape) t.shape.push_back(d);
    t.weak = false;
    out.push_back(t);
  }
  return out;
}

std::vector<Tensor> call_control_flow(const Primitive& p, const ControlFlowAttrs& a, std::span<const Tensor> in) {
  std::vector<TensorType> in_types;
  for (const Tensor& t : in) in_types.push_back(runtime::type_of(t));
  auto types = control_flow_types(p, a, in_types);
  std::vector<Tensor> out(types.size());
  if (runtime::tls_open_traces != 0 && autodiff::innermost(autodiff::Frame::Kind::Symbolic) != nullptr) {
    // A tape will differentiate the node: build it to pass its vjp's residuals out, and hand the
    // caller only the node's own outputs (the tape keeps the rest).
    if (auto aug = with_residuals(p, a, in)) {
      types = control_flow_types(p, *aug, in_types);
      out.resize(types.size());
      autodiff::trace_symbolic(p, aug.get(), in, types, out);
      out.resize(aug->plan->num_outputs);
      return out;
    }
    autodiff::trace_symbolic(p, &a, in, types, out);
    return out;
  }
  // A checkpointed while under PyNative tapes is recorded as one node (its vjp recomputes).
  if (&p == &while_primitive())
    if (auto r = run_recorded_checkpointed(a, in)) return std::move(*r);
  // Eager: interpreting the sub-graphs dispatches their ops, which open tapes record (the path
  // taken); the node itself is not recorded.
  p.eager(&a, in, out);
  return out;
}

}  // namespace spore::transforms
