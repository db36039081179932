// SPDX-License-Identifier: Apache-2.0
// jvp and vjp rules of the control-flow primitives. They only ever run under a symbolic trace
// (in PyNative the tape records the path taken instead), and they transform the sub-graphs by
// tracing: a derivative sub-graph is the trace of the ordinary autodiff (spore::autodiff::vjp or
// jvp) applied to an interpretation of the original sub-graph. So one autodiff serves here too,
// and higher orders follow: the new nodes are control-flow nodes with their own rules.
//
//  - Nodes that a tape records are built to pass their residuals out
//    (control_flow_residuals.cc): the vjp of if/switch is one if/switch over the branches'
//    backward graphs; of scan, one reversed scan over the stacked residuals; of while (reverse
//    mode through a data-dependent trip count, which JAX refuses and MindSpore and TensorFlow
//    do), one reversed scan whose length is the run-time trip count. Nothing is recomputed.
//  - Otherwise (a node read back from text, one differentiated again through its residual
//    outputs, or one whose residuals are sized at run time, e.g. a loop inside a loop) the
//    derivative recomputes: if/switch over the branches' vjp from the operands; scan and while
//    by an augmented forward loop that stacks the carry entering each step and a reversed scan
//    of the body's vjp over those stacks.
//  - Forward mode is the same node kind over (values, tangents).
#include <atomic>

#include "autodiff/frames.h"
#include "autodiff/rules.h"
#include "runtime/dispatch.h"
#include "spore/autodiff.h"
#include "spore/error.h"
#include "spore/ops.h"
#include "transforms/control_flow.h"
#include "transforms/control_flow_checkpoint.h"
#include "transforms/control_flow_helpers.h"
#include "transforms/control_flow_vjp.h"
#include "transforms/interpreter.h"
#include "transforms/trace.h"

namespace spore::transforms {

ir::GraphPtr trace_graph(const std::string& name, std::span<const TensorType> in,
                         const std::function<std::vector<Tensor>(std::span<const Tensor>)>& fn) {
  SymbolicTrace st(name, true);
  std::vector<Tensor> outs;
  {
    autodiff::FrameGuard open(&st);
    std::vector<Tensor> args;
    for (const TensorType& t : in) args.push_back(st.input(t));
    outs = fn(args);
  }
  auto g = st.finish(outs);
  SPORE_ASSERT(st.captured().empty(), "a derivative sub-graph of ", name, " captured an outside tensor");
  return g;
}

// The vjp of `g` (run by the interpreter) at `x`: cotangents for the positions `wrt` of x, given
// cotangents for the float outputs of g (in order).
std::vector<Tensor> cf_vjp::graph_vjp(const ir::Graph& g, std::span<const Tensor> x, const std::vector<int>& wrt,
                                      std::span<const Tensor> out_cts) {
  if (wrt.empty()) return {};
  autodiff::TreeFn f = [&g](const std::vector<TensorTree>& args) {
    std::vector<Tensor> in;
    for (const auto& a : args) in.push_back(a.tensor());
    std::vector<Tensor> outs = interpret(g, in), floats;
    for (const Tensor& o : outs)
      if (is_floating(o.dtype())) floats.push_back(o);
    return TensorTree(floats);
  };
  std::vector<TensorTree> args(x.begin(), x.end());
  auto r = autodiff::vjp("control flow vjp", f, args, wrt, false, false);
  auto g_in = r.pullback(TensorTree(std::vector<Tensor>(out_cts.begin(), out_cts.end())));
  std::vector<Tensor> out;
  for (auto& t : g_in) out.push_back(t.tensor());
  return out;
}

// Cotangents of the float outputs (zeros where undefined), in output order.
std::vector<Tensor> cf_vjp::float_cts(const VjpArgs& a, size_t begin, size_t end) {
  std::vector<Tensor> c;
  for (size_t j = begin; j < end; ++j) {
    if (!is_floating(a.out_types[j].dtype)) continue;
    if (a.cotangents[j].defined()) c.push_back(a.cotangents[j]);
    else if (cf_helpers::has_runtime_dims(a.out_types[j])) c.push_back(cf_helpers::zeros_like_at_run_time(a.outputs[j]));
    else c.push_back(ops::zeros(a.out_types[j].shape, {a.out_types[j].dtype}));
  }
  return c;
}

namespace {

using cf_vjp::float_cts;
using cf_vjp::graph_vjp;

const ControlFlowAttrs& cf(const void* a) { return *static_cast<const ControlFlowAttrs*>(a); }

std::vector<Tensor> slice(std::span<const Tensor> v, size_t b, size_t e) { return {v.begin() + b, v.begin() + e}; }

// The jvp of `g` at `x` along `t` (undefined = zero): tangents of g's outputs (zeros for
// non-float outputs are left undefined and returned as zeros of their type).
std::vector<Tensor> graph_jvp(const ir::Graph& g, std::span<const Tensor> x, std::span<const Tensor> t) {
  autodiff::TreeFn f = [&g](const std::vector<TensorTree>& args) {
    std::vector<Tensor> in;
    for (const auto& a : args) in.push_back(a.tensor());
    return TensorTree(interpret(g, in));
  };
  std::vector<TensorTree> args(x.begin(), x.end()), tangents;
  for (size_t i = 0; i < x.size(); ++i) tangents.push_back(t[i].defined() ? TensorTree(t[i]) : TensorTree());
  auto [y, ty] = autodiff::jvp("control flow jvp", f, args, tangents);
  return ty.leaves();
}

using cf_helpers::float_positions;
using cf_helpers::slice_type;
using cf_helpers::types_of;

// Whether an output at or past `n` (a residual of a node built for reverse mode) has a
// cotangent: then the node is differentiated again and its residuals' derivatives are needed.
bool any_ct_past(const VjpArgs& a, size_t n) {
  for (size_t j = n; j < a.cotangents.size(); ++j)
    if (a.cotangents[j].defined()) return true;
  return false;
}

// ---- if / switch -------------------------------------------------------------------------
void branches_vjp(const VjpArgs& a, std::span<Tensor> in_ct) {
  const auto& at = cf(a.attrs);
  const Primitive& p = a.in_types.size() && at.graphs.size() ? (a.in_types[0].dtype == DType::Bool ? if_primitive() : switch_primitive())
                                                             : if_primitive();
  const std::vector<Tensor> operands = slice(a.inputs, 1, a.inputs.size());
  std::vector<int> wrt;
  for (size_t i = 0; i < operands.size(); ++i)
    if (a.needs[i + 1]) wrt.push_back(static_cast<int>(i));
  if (wrt.empty()) return;
  if (const ResidualPlan* plan = plan_of(at); plan && !any_ct_past(a, plan->num_outputs)) {
    // Built for reverse mode: the backward branches take the outputs and residuals.
    std::vector<Tensor> in(a.inputs.begin(), a.inputs.end());
    in.insert(in.end(), a.outputs.begin(), a.outputs.end());  // the outputs, then the residuals
    const std::vector<Tensor> cts = float_cts(a, 0, plan->num_outputs);
    in.insert(in.end(), cts.begin(), cts.end());
    ControlFlowAttrs bwd;
    bwd.graphs = plan->bwd;
    const auto g = call_control_flow(p, bwd, in);
    for (size_t k = 0; k < plan->wrt.size(); ++k) {
      const size_t i = static_cast<size_t>(plan->wrt[k]) + 1;
      if (a.needs[i]) in_ct[i] = g[k];
    }
    return;
  }
  const std::vector<Tensor> cts = float_cts(a, 0, a.out_types.size());
  std::vector<TensorType> sig = types_of(operands);
  const size_t n = operands.size();
  for (const Tensor& c : cts) sig.push_back(runtime::type_of(c));
  ControlFlowAttrs bwd;
  for (const auto& g : at.graphs)
    bwd.graphs.push_back(trace_graph(p.name + "_vjp", sig, [&](std::span<const Tensor> x) {
      return graph_vjp(*g, x.first(n), wrt, x.subspan(n));
    }));
  std::vector<Tensor> in{a.inputs[0]};
  in.insert(in.end(), operands.begin(), operands.end());
  in.insert(in.end(), cts.begin(), cts.end());
  auto g = call_control_flow(p, bwd, in);
  for (size_t k = 0; k < wrt.size(); ++k) in_ct[static_cast<size_t>(wrt[k]) + 1] = g[k];
}

void branches_jvp(const JvpArgs& a, std::span<Tensor> out_t) {
  const auto& at = cf(a.attrs);
  const Primitive& p = a.inputs[0].dtype() == DType::Bool ? if_primitive() : switch_primitive();
  const std::vector<Tensor> operands = slice(a.inputs, 1, a.inputs.size());
  const size_t n = operands.size();
  std::vector<int> with_t;  // operands with a tangent
  for (size_t i = 0; i < n; ++i)
    if (a.tangents[i + 1].defined()) with_t.push_back(static_cast<int>(i));
  std::vector<TensorType> sig = types_of(operands);
  for (int i : with_t) sig.push_back(runtime::type_of(a.tangents[static_cast<size_t>(i) + 1]));
  ControlFlowAttrs fwd;
  for (const auto& g : at.graphs)
    fwd.graphs.push_back(trace_graph(p.name + "_jvp", sig, [&](std::span<const Tensor> x) {
      std::vector<Tensor> t(n);
      for (size_t k = 0; k < with_t.size(); ++k) t[static_cast<size_t>(with_t[k])] = x[n + k];
      return graph_jvp(*g, x.first(n), t);
    }));
  std::vector<Tensor> in{a.inputs[0]};
  in.insert(in.end(), operands.begin(), operands.end());
  for (int i : with_t) in.push_back(a.tangents[static_cast<size_t>(i) + 1]);
  auto t = call_control_flow(p, fwd, in);
  for (size_t j = 0; j < out_t.size(); ++j)
    if (is_floating(a.outputs[j].dtype())) out_t[j] = t[j];
}

// ---- scan --------------------------------------------------------------------------------
// Cotangents through a scan (or a while, whose extras are its ys) given the stacked carries
// entering each step. `length` may be -1 (taken from the stacks at run time).
void scan_backward(const ir::Graph& body, size_t nc, bool reverse, int64_t length, std::span<const TensorType> carry_types,
                   std::span<const Tensor> stacks, std::span<const Tensor> xs, std::span<const Tensor> ct_carry,
                   std::span<const Tensor> ct_ys, std::span<const int> x_wrt, std::vector<Tensor>& ct_init,
                   std::vector<Tensor>& ct_xs) {
  const std::vector<int> cf_pos = float_positions(carry_types);
  std::vector<TensorType> x_types;
  for (const Tensor& x : xs) x_types.push_back(slice_type(x));
  // Body of the reversed scan: (ct_c (float carries), c_i (all carries), x_i, ct_y_i) ->
  // (ct_c_prev, ct_x_i for x_wrt).
  std::vector<TensorType> sig;
  for (int i : cf_pos) sig.push_back(carry_types[static_cast<size_t>(i)]);
  sig.insert(sig.end(), carry_types.begin(), carry_types.end());
  sig.insert(sig.end(), x_types.begin(), x_types.end());
  auto add_slices = [&sig](std::span<const Tensor> stacked) {
    for (const Tensor& c : stacked) sig.push_back(slice_type(c));
  };
  add_slices(ct_ys);
  const size_t nf = cf_pos.size(), nx = xs.size(), ny = ct_ys.size();
  ControlFlowAttrs bwd;
  bwd.num_carry = static_cast<int64_t>(nf);
  bwd.length = length;
  bwd.reverse = !reverse;
  bwd.graphs.push_back(trace_graph("scan_vjp", sig, [&](std::span<const Tensor> v) {
    std::vector<Tensor> point(v.begin() + nf, v.begin() + nf + nc + nx);  // (c_i, x_i)
    std::vector<int> wrt(cf_pos.begin(), cf_pos.end());
    for (int i : x_wrt) wrt.push_back(static_cast<int>(nc) + i);
    // Cotangents of the body's float outputs: the float carries, then the float ys.
    std::vector<Tensor> cts(v.begin(), v.begin() + nf);
    cts.insert(cts.end(), v.begin() + nf + nc + nx, v.begin() + nf + nc + nx + ny);
    return graph_vjp(body, point, wrt, cts);
  }));
  std::vector<Tensor> in(ct_carry.begin(), ct_carry.end());
  in.insert(in.end(), stacks.begin(), stacks.end());
  in.insert(in.end(), xs.begin(), xs.end());
  in.insert(in.end(), ct_ys.begin(), ct_ys.end());
  auto out = call_control_flow(scan_primitive(), bwd, in);
  ct_init.assign(out.begin(), out.begin() + nf);
  ct_xs.assign(out.begin() + nf, out.end());
}

// The vjp of a scan built for reverse mode: one reversed scan over its stacked residuals.
void scan_vjp_from_residuals(const VjpArgs& a, const ResidualPlan& plan, std::span<Tensor> in_ct) {
  const auto& at = cf(a.attrs);
  const size_t nc = static_cast<size_t>(at.num_carry), nr = plan.num_outputs;
  const std::vector<TensorType> carry_types(a.in_types.begin(), a.in_types.begin() + static_cast<std::ptrdiff_t>(nc));
  const std::vector<int> fc = float_positions(carry_types);
  std::vector<Tensor> in = float_cts(a, 0, nc);
  for (int j : plan.invariant) in.push_back(a.inputs[static_cast<size_t>(j)]);
  in.insert(in.end(), a.inputs.begin() + static_cast<std::ptrdiff_t>(nc), a.inputs.end());
  in.insert(in.end(), a.outputs.begin() + static_cast<std::ptrdiff_t>(nc), a.outputs.end());  // ys, then residuals
  const std::vector<Tensor> ct_ys = float_cts(a, nc, nr);
  in.insert(in.end(), ct_ys.begin(), ct_ys.end());
  ControlFlowAttrs bwd;
  bwd.num_carry = static_cast<int64_t>(fc.size() + plan.invariant.size());
  bwd.length = at.length;
  bwd.reverse = !at.reverse;
  bwd.graphs = plan.bwd;
  const auto out = call_control_flow(scan_primitive(), bwd, in);
  for (size_t k = 0; k < fc.size(); ++k)
    if (a.needs[static_cast<size_t>(fc[k])]) in_ct[static_cast<size_t>(fc[k])] = out[k];
  size_t o = static_cast<size_t>(bwd.num_carry);
  for (size_t k = fc.size(); k < plan.wrt.size(); ++k, ++o)
    if (a.needs[static_cast<size_t>(plan.wrt[k])]) in_ct[static_cast<size_t>(plan.wrt[k])] = out[o];
}

void scan_vjp(const VjpArgs& a, std::span<Tensor> in_ct) {
  const auto& at = cf(a.attrs);
  if (const ResidualPlan* plan = plan_of(at); plan && !any_ct_past(a, plan->num_outputs))
    return scan_vjp_from_residuals(a, *plan, in_ct);
  const size_t nc = static_cast<size_t>(at.num_carry), n_in = a.inputs.size();
  const std::vector<Tensor> init = slice(a.inputs, 0, nc), xs = slice(a.inputs, nc, n_in);
  const std::vector<TensorType> carry_types(a.in_types.begin(), a.in_types.begin() + nc);
  // 1. The forward again, also stacking the carry entering each step.
  std::vector<TensorType> sig(carry_types);
  for (const Tensor& x : xs) sig.push_back(slice_type(x));
  ControlFlowAttrs aug = at;
  aug.plan.reset();
  aug.graphs = {trace_graph("scan_stack", sig, [&](std::span<const Tensor> v) {
    auto out = interpret(*at.graphs[0], v);
    out.insert(out.end(), v.begin(), v.begin() + nc);
    return out;
  })};
  std::vector<Tensor> fwd = call_control_flow(scan_primitive(), aug, a.inputs);
  const size_t ny = a.out_types.size() - nc;
  std::vector<Tensor> stacks(fwd.begin() + nc + ny, fwd.end());
  // 2. The reversed scan of the body's vjp.
  const std::vector<Tensor> ct_carry = float_cts(a, 0, nc), ct_ys = float_cts(a, nc, a.out_types.size());
  std::vector<int> x_wrt;
  for (size_t i = 0; i < xs.size(); ++i)
    if (a.needs[nc + i]) x_wrt.push_back(static_cast<int>(i));
  std::vector<Tensor> ct_init, ct_xs;
  scan_backward(*at.graphs[0], nc, at.reverse, at.length, carry_types, stacks, xs, ct_carry, ct_ys, x_wrt, ct_init, ct_xs);
  const auto cf_pos = float_positions(carry_types);
  for (size_t k = 0; k < cf_pos.size(); ++k)
    if (a.needs[static_cast<size_t>(cf_pos[k])]) in_ct[static_cast<size_t>(cf_pos[k])] = ct_init[k];
  for (size_t k = 0; k < x_wrt.size(); ++k) in_ct[nc + static_cast<size_t>(x_wrt[k])] = ct_xs[k];
}

void scan_jvp(const JvpArgs& a, std::span<Tensor> out_t) {
  // A scan over (carries, carry tangents) and (xs, x tangents) running the body's jvp.
  const auto& at = cf(a.attrs);
  const size_t nc = static_cast<size_t>(at.num_carry), n_in = a.inputs.size(), nx = n_in - nc;
  std::vector<int> c_t, x_t;
  for (size_t i = 0; i < nc; ++i)
    if (is_floating(a.inputs[i].dtype())) c_t.push_back(static_cast<int>(i));
  for (size_t i = 0; i < nx; ++i)
    if (a.tangents[nc + i].defined()) x_t.push_back(static_cast<int>(i));
  std::vector<TensorType> sig = types_of(slice(a.inputs, 0, nc));
  for (int i : c_t) sig.push_back(runtime::type_of(a.inputs[static_cast<size_t>(i)]));
  for (size_t i = 0; i < nx; ++i) sig.push_back(slice_type(a.inputs[nc + i]));
  for (int i : x_t) sig.push_back(slice_type(a.inputs[nc + static_cast<size_t>(i)]));
  const size_t nct = c_t.size();
  ControlFlowAttrs fwd = at;
  fwd.plan.reset();
  fwd.num_carry = static_cast<int64_t>(nc + nct);
  fwd.graphs = {trace_graph("scan_jvp", sig, [&](std::span<const Tensor> v) {
    std::vector<Tensor> point(v.begin(), v.begin() + nc);
    point.insert(point.end(), v.begin() + nc + nct, v.begin() + nc + nct + nx);
    std::vector<Tensor> t(nc + nx);
    for (size_t k = 0; k < nct; ++k) t[static_cast<size_t>(c_t[k])] = v[nc + k];
    for (size_t k = 0; k < x_t.size(); ++k) t[nc + static_cast<size_t>(x_t[k])] = v[nc + nct + nx + k];
    auto y = interpret(*at.graphs[0], point);
    auto ty = graph_jvp(*at.graphs[0], point, t);
    // (carries, carry tangents, ys, y tangents)
    std::vector<Tensor> out(y.begin(), y.begin() + nc);
    for (int i : c_t) out.push_back(ty[static_cast<size_t>(i)]);
    out.insert(out.end(), y.begin() + nc, y.end());
    out.insert(out.end(), ty.begin() + nc, ty.end());
    return out;
  })};
  std::vector<Tensor> in = slice(a.inputs, 0, nc);
  for (int i : c_t) {
    const Tensor& t = a.tangents[static_cast<size_t>(i)];
    in.push_back(t.defined() ? t : ops::zeros_like(a.inputs[static_cast<size_t>(i)]));
  }
  for (size_t i = 0; i < nx; ++i) in.push_back(a.inputs[nc + i]);
  for (int i : x_t) in.push_back(a.tangents[nc + static_cast<size_t>(i)]);
  auto r = call_control_flow(scan_primitive(), fwd, in);
  const size_t ny = a.outputs.size() - nc;
  for (size_t k = 0; k < nct; ++k) out_t[static_cast<size_t>(c_t[k])] = r[nc + k];
  for (size_t j = 0; j < ny; ++j)
    if (is_floating(a.outputs[nc + j].dtype())) out_t[nc + j] = r[nc + nct + ny + j];
}

// ---- while -------------------------------------------------------------------------------
std::atomic<int> g_trip_symbols{0};

// The vjp of a while built for reverse mode: one reversed scan over its stacked residuals, as
// long as the loop ran (the stacks' run-time length).
void while_vjp_from_residuals(const VjpArgs& a, const ResidualPlan& plan, std::span<Tensor> in_ct) {
  const size_t nc = a.inputs.size(), nr = plan.num_outputs;
  const size_t ne = nr > nc ? nr - nc - 1 : 0;  // extras of a loop that was already stacking
  const std::vector<TensorType> carry_types(a.in_types.begin(), a.in_types.end());
  const std::vector<int> fc = float_positions(carry_types);
  std::vector<Tensor> in = float_cts(a, 0, nc);
  for (int j : plan.invariant) in.push_back(a.inputs[static_cast<size_t>(j)]);
  // The extras' stacks, the residuals' stacks (after the node's own outputs), their cotangents.
  in.insert(in.end(), a.outputs.begin() + static_cast<std::ptrdiff_t>(nc + 1), a.outputs.begin() + static_cast<std::ptrdiff_t>(nc + 1 + ne));
  in.insert(in.end(), a.outputs.begin() + static_cast<std::ptrdiff_t>(plan.first_residual), a.outputs.end());
  const std::vector<Tensor> ct_extras = float_cts(a, nc + 1, nc + 1 + ne);
  in.insert(in.end(), ct_extras.begin(), ct_extras.end());
  ControlFlowAttrs bwd;
  bwd.num_carry = static_cast<int64_t>(fc.size() + plan.invariant.size());
  bwd.length = -1;
  bwd.reverse = true;
  bwd.graphs = plan.bwd;
  const auto out = call_control_flow(scan_primitive(), bwd, in);
  for (size_t k = 0; k < fc.size(); ++k)
    if (a.needs[static_cast<size_t>(fc[k])]) in_ct[static_cast<size_t>(fc[k])] = out[k];
}

void while_vjp(const VjpArgs& a, std::span<Tensor> in_ct) {
  const auto& at = cf(a.attrs);
  if (at.checkpoint_every > 0 && !at.stack && plan_of(at) == nullptr && while_vjp_checkpointed(a, in_ct)) return;
  if (const ResidualPlan* plan = plan_of(at); plan && !any_ct_past(a, plan->num_outputs))
    return while_vjp_from_residuals(a, *plan, in_ct);
  const size_t nc = a.inputs.size();
  const ir::Graph& body = *at.graphs[1];
  const size_t ne = cf_helpers::output_types(body).size() - nc;  // a stacking loop's extras
  const std::vector<TensorType> carry_types(a.in_types.begin(), a.in_types.end());
  // 1. The forward again, counting trips and stacking (after any extras) the carries entering
  // each trip.
  ControlFlowAttrs aug;
  aug.num_carry = at.num_carry;
  aug.stack = true;
  // The same loop as a stacking one: the same run-time trip count.
  aug.trip_symbol = at.stack ? at.trip_symbol : detail::cat("trips", g_trip_symbols.fetch_add(1));
  aug.graphs = {at.graphs[0], trace_graph("while_stack", carry_types, [&](std::span<const Tensor> v) {
                  auto r = interpret(body, v);
                  r.insert(r.end(), v.begin(), v.end());
                  return r;
                })};
  const std::vector<Tensor> fwd = call_control_flow(while_primitive(), aug, a.inputs);
  const std::vector<Tensor> stacks(fwd.begin() + static_cast<std::ptrdiff_t>(nc + 1 + ne), fwd.end());
  // 2. A reversed scan of the body's vjp whose length is the trip count (known at run time); a
  // stacking loop's extras are its ys, with their cotangents.
  const std::vector<Tensor> ct_carry = float_cts(a, 0, nc);
  const std::vector<Tensor> ct_extras = at.stack ? float_cts(a, nc + 1, nc + 1 + ne) : std::vector<Tensor>{};
  std::vector<Tensor> ct_init, ct_xs;
  scan_backward(body, nc, false, -1, carry_types, stacks, {}, ct_carry, ct_extras, {}, ct_init, ct_xs);
  const auto cf_pos = float_positions(carry_types);
  for (size_t k = 0; k < cf_pos.size(); ++k)
    if (a.needs[static_cast<size_t>(cf_pos[k])]) in_ct[static_cast<size_t>(cf_pos[k])] = ct_init[k];
}

void while_jvp(const JvpArgs& a, std::span<Tensor> out_t) {
  // A while over (carries, tangents of the float carries): same trips, the body's jvp. A
  // stacking loop stacks its extras' tangents with them.
  const auto& at = cf(a.attrs);
  const size_t nc = a.inputs.size();
  const std::vector<TensorType> body_types = cf_helpers::output_types(*at.graphs[1]);
  const size_t ne = body_types.size() - nc;
  const std::vector<int> c_t = float_positions(std::span<const TensorType>(body_types).first(nc));
  std::vector<int> e_t;  // float extras
  for (size_t e = 0; e < ne; ++e)
    if (is_floating(body_types[nc + e].dtype)) e_t.push_back(static_cast<int>(e));
  std::vector<TensorType> sig = types_of(a.inputs);
  for (int i : c_t) sig.push_back(runtime::type_of(a.inputs[static_cast<size_t>(i)]));
  const size_t nct = c_t.size();
  ControlFlowAttrs fwd;
  fwd.num_carry = static_cast<int64_t>(nc + nct);
  fwd.stack = at.stack;
  fwd.trip_symbol = at.trip_symbol;  // the same loop: the same run-time trip count
  fwd.checkpoint_every = at.checkpoint_every;  // reverse mode over it keeps the memory bound
  fwd.graphs.push_back(trace_graph("while_jvp_cond", sig, [&](std::span<const Tensor> v) {
    return interpret(*at.graphs[0], v.first(nc));
  }));
  fwd.graphs.push_back(trace_graph("while_jvp_body", sig, [&](std::span<const Tensor> v) {
    std::vector<Tensor> t(nc);
    for (size_t k = 0; k < nct; ++k) t[static_cast<size_t>(c_t[k])] = v[nc + k];
    const auto y = interpret(*at.graphs[1], v.first(nc));
    const auto ty = graph_jvp(*at.graphs[1], v.first(nc), t);
    // (carries, their tangents, extras, their tangents)
    std::vector<Tensor> out(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(nc));
    for (int i : c_t) out.push_back(ty[static_cast<size_t>(i)]);
    out.insert(out.end(), y.begin() + static_cast<std::ptrdiff_t>(nc), y.end());
    for (int e : e_t) out.push_back(ty[nc + static_cast<size_t>(e)]);
    return out;
  }));
  std::vector<Tensor> in(a.inputs.begin(), a.inputs.end());
  for (int i : c_t) {
    const Tensor& t = a.tangents[static_cast<size_t>(i)];
    in.push_back(t.defined() ? t : ops::zeros_like(a.inputs[static_cast<size_t>(i)]));
  }
  const auto r = call_control_flow(while_primitive(), fwd, in);
  for (size_t k = 0; k < nct; ++k) out_t[static_cast<size_t>(c_t[k])] = r[nc + k];
  // r = (carries, tangents, trips, stacked extras, stacked extra tangents); the node's outputs
  // are (carries, trips, stacked extras).
  for (size_t k = 0; k < e_t.size(); ++k) out_t[nc + 1 + static_cast<size_t>(e_t[k])] = r[nc + nct + 1 + ne + k];
}

}  // namespace

void install_control_flow_rules() {
  // Every input and output is kept: the recompute paths read the inputs, and a node built for
  // reverse mode passes its residuals as outputs. (Under a trace these are symbolic values.)
  const Residuals all{~0u, ~0u};
  autodiff::def_rules(if_primitive(), all, branches_jvp, branches_vjp);
  autodiff::def_rules(switch_primitive(), all, branches_jvp, branches_vjp);
  autodiff::def_rules(scan_primitive(), all, scan_jvp, scan_vjp);
  autodiff::def_rules(while_primitive(), all, while_jvp, while_vjp);
}

}  // namespace spore::transforms
