// SPDX-License-Identifier: Apache-2.0
// Control-flow nodes built for reverse mode pass their vjp's residuals out (ResidualPlan in
// control_flow.h), as the issue and shared/ARCHITECTURE.md ask: the forward node computes them
// once and the backward node takes them, instead of recomputing the forward from the inputs.
//
//  - if / switch: each branch is linearized; the node outputs every branch's residuals (a branch
//    fills the others' with zeros, so all branches return the same types), and the backward node
//    is an if/switch over the branches' backward graphs on the same predicate.
//  - scan: the body is linearized and its residuals become extra ys, so they are stacked per
//    iteration; loop-invariant carries (weights a body only reads) and the xs are not copied per
//    step: the backward scan carries the former and scans the latter. Its body runs the body's
//    backward on one step's residual slices.
//  - while: the same, on a loop that stacks (the `stack` form: the residuals are the body's
//    extras, stacked over the trips) and a reversed scan whose length is the run-time trip
//    count: reverse mode through a data-dependent trip count.
#include <atomic>

#include "autodiff/frames.h"
#include "spore/ops.h"
#include "transforms/control_flow.h"
#include "transforms/control_flow_checkpoint.h"
#include "transforms/control_flow_helpers.h"
#include "transforms/interpreter.h"
#include "transforms/linearize.h"

namespace spore::transforms {

using cf_helpers::float_positions;
using cf_helpers::output_types;
using cf_helpers::types_of;

const ResidualPlan* plan_of(const ControlFlowAttrs& a) {
  return a.plan && a.plan->fwd == a.graphs ? a.plan.get() : nullptr;
}

namespace {

// Which float inputs a tape inside the innermost symbolic trace tracks (a tape outside it never
// records the node: the trace's tensors are not its own).
std::vector<bool> taped_inputs(std::span<const Tensor> in) {
  std::vector<bool> taped(in.size(), false);
  const auto frames = autodiff::active_frames();
  for (size_t d = frames.size(); d-- > 0;) {
    const autodiff::Frame* f = frames[d];
    if (f->kind() == autodiff::Frame::Kind::Symbolic) break;
    if (f->kind() != autodiff::Frame::Kind::Tape) continue;
    for (size_t i = 0; i < in.size(); ++i)
      taped[i] = taped[i] || (is_floating(in[i].dtype()) && autodiff::find_entry(in[i], f->uid()) != nullptr);
  }
  return taped;
}

std::shared_ptr<ControlFlowAttrs> branches(const Primitive& p, const ControlFlowAttrs& a, std::span<const Tensor> in,
                                           const std::vector<bool>& taped) {
  const std::vector<TensorType> types = types_of(in.subspan(1));
  const size_t n = types.size();
  auto plan = std::make_shared<ResidualPlan>();
  for (size_t i = 1; i < in.size(); ++i)
    if (taped[i]) plan->wrt.push_back(static_cast<int>(i - 1));
  const std::vector<TensorType> out_types = output_types(*a.graphs[0]);
  const size_t nout = out_types.size();
  // The backward node takes the operands and the node's outputs themselves.
  const std::vector<bool> keep_in(n, true), keep_out(nout, true);
  std::vector<Linearized> lins;
  std::vector<TensorType> res_types;  // every branch's residuals, branch after branch
  std::vector<size_t> offset;
  for (const auto& g : a.graphs) {
    lins.push_back(linearize(*g, types, plan->wrt, keep_in, keep_out));
    offset.push_back(res_types.size());
    res_types.insert(res_types.end(), lins.back().residual_types.begin(), lins.back().residual_types.end());
  }
  // A residual sized at run time (a loop's stack) cannot be zero-filled by the branches that do
  // not make it: such nodes recompute instead.
  if (cf_helpers::any_runtime_dims(res_types)) return nullptr;
  auto aug = std::make_shared<ControlFlowAttrs>(a);
  aug->graphs.clear();
  for (size_t k = 0; k < lins.size(); ++k)
    aug->graphs.push_back(trace_graph(p.name + "_fwd", types, [&](std::span<const Tensor> x) {
      std::vector<Tensor> y = interpret(*lins[k].fwd, x), out(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(nout));
      for (size_t m = 0; m < lins.size(); ++m) {
        if (m == k) out.insert(out.end(), y.begin() + static_cast<std::ptrdiff_t>(nout), y.end());
        else
          for (const TensorType& t : lins[m].residual_types) out.push_back(ops::zeros(t.shape, {t.dtype}));
      }
      return out;
    }));
  // Backward branches: (operands..., outputs..., all residuals..., cotangents of the float
  // outputs...) -> cotangents of the operands in wrt.
  std::vector<TensorType> sig = types;
  sig.insert(sig.end(), out_types.begin(), out_types.end());
  sig.insert(sig.end(), res_types.begin(), res_types.end());
  for (const TensorType& t : out_types)
    if (is_floating(t.dtype)) sig.push_back(t);
  for (size_t k = 0; k < lins.size(); ++k)
    plan->bwd.push_back(trace_graph(p.name + "_bwd", sig, [&](std::span<const Tensor> v) {
      std::vector<Tensor> cts(nout);
      size_t c = n + nout + res_types.size();
      for (size_t j = 0; j < nout; ++j)
        if (is_floating(out_types[j].dtype)) cts[j] = v[c++];
      return lins[k].backward(v.first(n), v.subspan(n, nout), v.subspan(n + nout + offset[k], lins[k].residual_types.size()),
                              cts);
    }));
  plan->num_outputs = plan->first_residual = nout;
  plan->fwd = aug->graphs;
  aug->plan = plan;
  return aug;
}

// What a loop body's linearization keeps rather than stacks: loop-invariant carries (weights a
// body only reads; the reversed scan carries them), the x slices and the ys (it scans those).
struct LoopKeep {
  std::vector<bool> in, out;
};
LoopKeep loop_keep(const ir::Graph& body, size_t nc, size_t nx, size_t n_out, ResidualPlan& plan) {
  LoopKeep k{std::vector<bool>(nc + nx, true), std::vector<bool>(n_out, true)};
  for (size_t j = 0; j < nc; ++j) {
    k.in[j] = cf_helpers::passes_through(body, j);
    k.out[j] = false;
    if (k.in[j]) plan.invariant.push_back(static_cast<int>(j));
  }
  return k;
}

// The reversed body of a loop (scan, or while with its extras as ys): (cotangents of the float
// carries..., invariant carries..., x slices..., y slices..., residual slices..., `unused`
// slices..., cotangents of the float ys...) -> (cotangents of the float carries..., invariant
// carries..., cotangents of the wrt xs...).
ir::GraphPtr reverse_body(const Linearized& lin, std::span<const TensorType> sig, size_t nc, std::span<const TensorType> out_types,
                          const ResidualPlan& plan, std::span<const TensorType> unused) {
  const size_t nx = sig.size() - nc;
  const std::vector<int> fc = float_positions(sig.first(nc));
  std::vector<TensorType> bsig;
  for (int i : fc) bsig.push_back(sig[static_cast<size_t>(i)]);
  for (int j : plan.invariant) bsig.push_back(sig[static_cast<size_t>(j)]);
  bsig.insert(bsig.end(), sig.begin() + static_cast<std::ptrdiff_t>(nc), sig.end());
  bsig.insert(bsig.end(), out_types.begin() + static_cast<std::ptrdiff_t>(nc), out_types.end());
  bsig.insert(bsig.end(), lin.residual_types.begin(), lin.residual_types.end());
  bsig.insert(bsig.end(), unused.begin(), unused.end());
  for (size_t j = nc; j < out_types.size(); ++j)
    if (is_floating(out_types[j].dtype)) bsig.push_back(out_types[j]);
  return trace_graph("loop_bwd", bsig, [&](std::span<const Tensor> v) {
    std::vector<Tensor> inputs(nc + nx), outputs(out_types.size()), cts(out_types.size());
    size_t o = 0;
    for (int i : fc) cts[static_cast<size_t>(i)] = v[o++];
    for (int j : plan.invariant) inputs[static_cast<size_t>(j)] = v[o++];
    for (size_t i = 0; i < nx; ++i) inputs[nc + i] = v[o++];
    for (size_t j = nc; j < out_types.size(); ++j) outputs[j] = v[o++];
    const std::span<const Tensor> res = v.subspan(o, lin.residual_types.size());
    o += res.size() + unused.size();
    for (size_t j = nc; j < out_types.size(); ++j)
      if (is_floating(out_types[j].dtype)) cts[j] = v[o++];
    std::vector<Tensor> g = lin.backward(inputs, outputs, res, cts);
    std::vector<Tensor> out(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(fc.size()));
    for (int j : plan.invariant) out.push_back(inputs[static_cast<size_t>(j)]);
    out.insert(out.end(), g.begin() + static_cast<std::ptrdiff_t>(fc.size()), g.end());
    return out;
  });
}

std::shared_ptr<ControlFlowAttrs> scan(const ControlFlowAttrs& a, std::span<const Tensor> in, const std::vector<bool>& taped) {
  const ir::Graph& body = *a.graphs[0];
  const size_t nc = static_cast<size_t>(a.num_carry), nx = in.size() - nc;
  std::vector<TensorType> sig = types_of(in.first(nc));
  for (size_t i = 0; i < nx; ++i) sig.push_back(cf_helpers::slice_type(in[nc + i]));
  auto plan = std::make_shared<ResidualPlan>();
  // Every float carry (cotangents flow through them step to step), then the taped xs.
  plan->wrt = float_positions(std::span<const TensorType>(sig).first(nc));
  for (size_t i = 0; i < nx; ++i)
    if (taped[nc + i]) plan->wrt.push_back(static_cast<int>(nc + i));
  const std::vector<TensorType> out_types = output_types(body);
  const LoopKeep keep = loop_keep(body, nc, nx, out_types.size(), *plan);
  const Linearized lin = linearize(body, sig, plan->wrt, keep.in, keep.out);
  // Per-step residuals sized at run time (an inner loop's stacks) differ from step to step and
  // cannot be stacked: such loops recompute instead.
  if (cf_helpers::any_runtime_dims(lin.residual_types)) return nullptr;
  auto aug = std::make_shared<ControlFlowAttrs>(a);
  aug->graphs = {lin.fwd};  // the residuals are extra ys: stacked per step
  plan->bwd = {reverse_body(lin, sig, nc, out_types, *plan, {})};
  plan->num_outputs = plan->first_residual = out_types.size();
  plan->fwd = aug->graphs;
  aug->plan = plan;
  return aug;
}

std::atomic<int> g_loop_symbols{0};

std::shared_ptr<ControlFlowAttrs> loop(const ControlFlowAttrs& a, std::span<const Tensor> in) {
  const ir::Graph& body = *a.graphs[1];
  const size_t nc = in.size();
  const std::vector<TensorType> sig = types_of(in);
  const std::vector<TensorType> out_types = output_types(body);  // carries, then a stacking loop's extras
  auto plan = std::make_shared<ResidualPlan>();
  plan->wrt = float_positions(sig);
  const LoopKeep keep = loop_keep(body, nc, 0, out_types.size(), *plan);
  const Linearized lin = linearize(body, sig, plan->wrt, keep.in, keep.out);
  if (cf_helpers::any_runtime_dims(lin.residual_types)) return nullptr;  // as for scan
  // The reversed scan takes its length from its first stack; a loop with nothing to stack
  // stacks a one-byte marker per trip.
  std::vector<TensorType> marker;
  if (out_types.size() == nc && lin.residual_types.empty()) marker.push_back(TensorType{DType::Int8, false, {}});
  auto aug = std::make_shared<ControlFlowAttrs>(a);
  aug->stack = true;
  if (!a.stack) aug->trip_symbol = detail::cat("loop_trips", g_loop_symbols.fetch_add(1));
  aug->graphs = {a.graphs[0], marker.empty() ? lin.fwd : trace_graph("while_fwd", sig, [&](std::span<const Tensor> v) {
    auto r = interpret(*lin.fwd, v);
    r.push_back(ops::zeros({}, {DType::Int8}));
    return r;
  })};
  plan->bwd = {reverse_body(lin, sig, nc, out_types, *plan, marker)};
  // Outputs: (carries, [trip count, the original's stacked extras]) then the residual stacks
  // (after the augmented loop's own trip count when the original did not stack).
  plan->num_outputs = a.stack ? out_types.size() + 1 : nc;
  plan->first_residual = out_types.size() + 1;
  plan->fwd = aug->graphs;
  aug->plan = plan;
  return aug;
}

}  // namespace

std::shared_ptr<ControlFlowAttrs> with_residuals(const Primitive& p, const ControlFlowAttrs& a, std::span<const Tensor> in) {
  if (plan_of(a) != nullptr) return nullptr;
  const std::vector<bool> taped = taped_inputs(in);
  bool any = false;
  for (bool t : taped) any = any || t;
  if (!any) return nullptr;
  if (&p == &scan_primitive()) return scan(a, in, taped);
  // A checkpointed loop outputs every k-th trip's carries instead (control_flow_checkpoint.cc).
  if (&p == &while_primitive()) return a.checkpoint_every > 0 ? checkpointed_loop(a, in) : loop(a, in);
  return branches(p, a, in, taped);
}

}  // namespace spore::transforms
