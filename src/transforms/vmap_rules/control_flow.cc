// SPDX-License-Identifier: Apache-2.0
// vmap rules of the control-flow primitives. A node's sub-graphs are per-example graphs; the
// rules trace batched versions of them (the batching interpreter run symbolically) and call the
// same kind of node on the batch, so eagerly it runs as C++ control flow and under an outer
// trace (jit of vmap, vmap of vmap) it stays one If / Switch / While / Scan node.
//
//  - if / switch with a shared predicate: the branch every lane takes, batched.
//  - if / switch with a batched predicate: every branch runs on the whole batch and each lane
//    selects its own result with where (as JAX: both sides are evaluated, so a NaN or an error in
//    a branch a lane does not take still happens, and a gradient through where of a NaN side is
//    NaN; guard the inputs of such branches).
//  - while with a shared condition: the loop, batched. With a batched condition: the loop runs
//    while any lane runs; each lane carries a "still running" flag, and a finished lane keeps
//    its carry (the body still computes on it, as above). A loop that also stacks its body's
//    extras (reverse mode's forward pass) gives per-lane trip counts and stacks padded to the
//    longest lane, batched and marked ragged by the running flags.
//  - scan: the batched xs are scanned along their axis 1; over ragged stacks (the reverse pass
//    of such a loop) each lane skips its padding.
//
// A loop carry's batchedness must not change between iterations, so it is fixed first: a carry
// is batched when its initial value is, when the body makes it so from batched values, or (when
// lanes stop at different steps) when it changes at all.
#include "transforms/control_flow.h"
#include "transforms/control_flow_helpers.h"
#include "transforms/ir_bridge.h"
#include "transforms/vmap_interpreter.h"
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore::transforms::vmap_rules {
namespace {

const ControlFlowAttrs& cf(const void* a) { return *static_cast<const ControlFlowAttrs*>(a); }

std::vector<BatchedValue> values(std::span<const Tensor> ts, const std::vector<bool>& flags) {
  std::vector<BatchedValue> v;
  for (size_t i = 0; i < ts.size(); ++i) v.push_back({ts[i], flags[i], {}});
  return v;
}

// Runs `g` on the batch and returns its outputs, materialized where `batched` says.
std::vector<Tensor> run(const ir::Graph& g, std::span<const Tensor> args, const std::vector<bool>& flags,
                        const std::vector<bool>& batched, int64_t batch) {
  auto r = run_batched(g, values(args, flags), batch);
  std::vector<Tensor> out;
  for (size_t j = 0; j < r.size(); ++j) out.push_back(batched[j] ? materialize(r[j], batch) : r[j].t);
  return out;
}

using cf_helpers::types_of;

// A sub-graph's batched version: inputs of the given types, body `fn`.
ir::GraphPtr batched_graph(const ir::Graph& g, std::span<const TensorType> types,
                           const std::function<std::vector<Tensor>(std::span<const Tensor>)>& fn) {
  return trace_graph(g.name() + "_vmap", types, fn);
}

using cf_helpers::passes_through;

// Fixes the batchedness of the first `nc` inputs of a loop body (its carries) given the rest:
// batched when batched on entry, when the body makes them so, or, with `frozen` (lanes stop at
// different steps), when the body changes them.
std::vector<bool> loop_flags(const ir::Graph& body, std::vector<bool> flags, size_t nc, bool frozen) {
  for (bool changed = true; changed;) {
    changed = false;
    const auto bo = batched_outputs(body, flags);
    for (size_t j = 0; j < nc; ++j) {
      const bool want = flags[j] || bo[j] || (frozen && !passes_through(body, j));
      changed = changed || want != flags[j];
      flags[j] = want;
    }
  }
  return flags;
}

std::vector<BatchedValue> outputs(std::vector<Tensor> ts, const std::vector<bool>& flags) {
  std::vector<BatchedValue> v;
  for (size_t j = 0; j < ts.size(); ++j) v.push_back({std::move(ts[j]), flags[j], {}});
  return v;
}

// A stacked output (T, B, ...) in the canonical (B, T, ...) form.
BatchedValue stacked(const Tensor& t, bool batched, const Tensor& ragged) {
  if (!batched) return {t, false, {}};
  return {ops::transpose(t, 0, 1), true, ragged};
}

// ---- if / switch ----------------------------------------------------------------------------

std::vector<BatchedValue> batch_branches(const Primitive& p, const ControlFlowAttrs& a, std::span<const BatchedValue> in,
                                   int64_t batch) {
  std::vector<Tensor> operands;
  std::vector<bool> flags;
  for (size_t i = 1; i < in.size(); ++i) {
    operands.push_back(in[i].t);
    flags.push_back(in[i].batched);
  }
  const size_t nout = a.graphs[0]->outputs().size();
  if (!in[0].batched) {
    // Every lane takes the same branch. An output batched in any branch is batched in all, so
    // the node's outputs do not depend on the branch taken.
    std::vector<bool> force(nout, false);
    for (const auto& g : a.graphs) {
      const auto bo = batched_outputs(*g, flags);
      for (size_t j = 0; j < nout; ++j) force[j] = force[j] || bo[j];
    }
    ControlFlowAttrs b = a;
    b.plan.reset();  // the plan belongs to the per-example graphs
    b.graphs.clear();
    for (const auto& g : a.graphs)
      b.graphs.push_back(batched_graph(*g, types_of(operands), [&](std::span<const Tensor> v) { return run(*g, v, flags, force, batch); }));
    std::vector<Tensor> args{in[0].t};
    args.insert(args.end(), operands.begin(), operands.end());
    return outputs(call_control_flow(p, b, args), force);
  }
  // Each lane picks its branch: run them all on the whole batch, then select per lane.
  std::vector<std::vector<BatchedValue>> results;
  for (const auto& g : a.graphs) results.push_back(run_batched(*g, values(operands, flags), batch));
  const Tensor& sel = in[0].t;
  const bool is_if = &p == &if_primitive();
  const int64_t n = static_cast<int64_t>(a.graphs.size());
  std::vector<BatchedValue> out;
  for (size_t j = 0; j < nout; ++j) {
    const int64_t rank = results[0][j].t.dim() - (results[0][j].batched ? 1 : 0);
    auto pick = [&](const Tensor& mask, const Tensor& yes, const Tensor& no) {
      return ops::where(lift(mask, rank), yes, no);
    };
    Tensor r;
    if (is_if) {
      r = pick(sel, results[0][j].t, results[1][j].t);
    } else {
      // switch clamps the index: lanes at or below 0 take branch 0, at or above n-1 the last.
      r = results[static_cast<size_t>(n - 1)][j].t;
      for (int64_t k = n - 2; k >= 0; --k) {
        const Tensor mask = k == 0 ? ops::less_equal(sel, ops::scalar_tensor(0, sel.dtype()))
                                   : ops::equal(sel, ops::scalar_tensor(k, sel.dtype()));
        r = pick(mask, results[static_cast<size_t>(k)][j].t, r);
      }
    }
    out.push_back({r, true, {}});
  }
  return out;
}

// ---- while ----------------------------------------------------------------------------------

std::vector<BatchedValue> batch_while(const ControlFlowAttrs& a, std::span<const BatchedValue> in, int64_t batch) {
  const ir::Graph& cond_g = *a.graphs[0];
  const ir::Graph& body_g = *a.graphs[1];
  const size_t n = in.size();
  std::vector<bool> flags;
  for (const auto& v : in) flags.push_back(v.batched);
  flags = loop_flags(body_g, flags, n, false);
  const bool cond_batched = batched_outputs(cond_g, flags)[0];
  if (cond_batched) flags = loop_flags(body_g, flags, n, true);
  std::vector<Tensor> init;
  for (size_t j = 0; j < n; ++j) init.push_back(flags[j] ? materialize(in[j], batch) : in[j].t);
  // The body's outputs: the carries as fixed above, then a stacking loop's extras.
  std::vector<bool> body_flags = batched_outputs(body_g, flags);
  for (size_t j = 0; j < n; ++j) body_flags[j] = flags[j];
  const size_t ne = body_flags.size() - n;
  ControlFlowAttrs w = a;
  w.plan.reset();
  if (!cond_batched) {
    const auto types = types_of(init);
    w.graphs = {batched_graph(cond_g, types, [&](std::span<const Tensor> v) { return run(cond_g, v, flags, {false}, batch); }),
                batched_graph(body_g, types, [&](std::span<const Tensor> v) { return run(body_g, v, flags, body_flags, batch); })};
    auto r = call_control_flow(while_primitive(), w, init);
    std::vector<BatchedValue> out = outputs(std::vector<Tensor>(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(n)), flags);
    if (a.stack) {
      out.push_back({r[n], false, {}});  // one trip count for every lane
      for (size_t e = 0; e < ne; ++e) out.push_back(stacked(r[n + 1 + e], body_flags[n + e], {}));
    }
    return out;
  }
  // Lanes stop at different steps. The last carry says which lanes still run; a lane stops for
  // good once its condition fails, and keeps its carry from then on.
  std::vector<Tensor> init1 = init;
  init1.push_back(run(cond_g, init, flags, {true}, batch)[0]);
  w.num_carry = static_cast<int64_t>(n + 1);
  const auto types1 = types_of(init1);
  w.graphs = {batched_graph(cond_g, types1, [](std::span<const Tensor> v) { return std::vector<Tensor>{ops::any(v.back())}; }),
              batched_graph(body_g, types1, [&](std::span<const Tensor> v) {
                const std::span<const Tensor> now = v.first(n);
                const Tensor& running = v.back();
                std::vector<Tensor> r = run(body_g, now, flags, body_flags, batch);
                std::vector<Tensor> next(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(n));
                for (size_t j = 0; j < n; ++j)
                  if (!passes_through(body_g, j))
                    next[j] = ops::where(lift(running, next[j].dim() - 1), next[j], now[j]);
                next.push_back(ops::logical_and(running, run(cond_g, next, flags, {true}, batch)[0]));
                // A stacking loop's extras, then the running flags entering the trip (stacked: which
                // steps of each lane are real).
                next.insert(next.end(), r.begin() + static_cast<std::ptrdiff_t>(n), r.end());
                if (a.stack) next.push_back(running);
                return next;
              })};
  auto r = call_control_flow(while_primitive(), w, init1);
  std::vector<BatchedValue> out = outputs(std::vector<Tensor>(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(n)), flags);
  if (a.stack) {
    // r = (carries..., running, trips of the longest lane, extra stacks..., running stack (T, B)).
    const Tensor running = r[n + 2 + ne];
    out.push_back({ops::sum(running.to(DType::Int64), {0}), true, {}});  // each lane's own trip count
    const Tensor ragged = ops::transpose(running, 0, 1);
    // Every stack is batched, so each carries the ragged marks to the reverse scan.
    for (size_t e = 0; e < ne; ++e) {
      const Tensor& st = r[n + 2 + e];
      out.push_back(body_flags[n + e] ? stacked(st, true, ragged) : BatchedValue{materialize({st, false, {}}, batch), true, ragged});
    }
  }
  return out;
}

// ---- scan -----------------------------------------------------------------------------------

std::vector<BatchedValue> batch_scan(const ControlFlowAttrs& a, std::span<const BatchedValue> in, int64_t batch) {
  const ir::Graph& body = *a.graphs[0];
  const size_t nc = static_cast<size_t>(a.num_carry);
  Tensor ragged;  // (B, L) when the xs are stacks of a loop whose lanes ran different trip counts
  std::vector<bool> flags;
  for (size_t i = 0; i < in.size(); ++i) {
    flags.push_back(in[i].batched);
    if (i >= nc && in[i].ragged.defined()) ragged = in[i].ragged;
  }
  flags = loop_flags(body, flags, nc, ragged.defined());
  // Outputs: the carries as fixed above (a batched carry stays batched even if the body resets
  // it to a shared value), then the ys.
  std::vector<bool> out_flags = batched_outputs(body, flags);
  for (size_t j = 0; j < nc; ++j) out_flags[j] = flags[j];
  std::vector<Tensor> args;
  for (size_t j = 0; j < nc; ++j) args.push_back(flags[j] ? materialize(in[j], batch) : in[j].t);
  // A batched x (B, L, ...) is scanned along L: (L, B, ...) hands the body (B, ...) slices.
  for (size_t i = nc; i < in.size(); ++i) args.push_back(flags[i] ? ops::transpose(in[i].t, 0, 1) : in[i].t);
  if (ragged.defined()) args.push_back(ops::transpose(ragged, 0, 1));
  // The body takes the carries and one slice of each x (the leading axis dropped).
  std::vector<TensorType> slices = types_of(args);
  for (size_t i = nc; i < slices.size(); ++i) {
    slices[i].shape.erase(0);
    slices[i].weak = false;
  }
  ControlFlowAttrs s = a;
  s.plan.reset();
  s.graphs = {batched_graph(body, slices, [&](std::span<const Tensor> v) {
    const std::span<const Tensor> point = ragged.defined() ? v.first(v.size() - 1) : v;
    std::vector<Tensor> r = run(body, point, flags, out_flags, batch);
    if (ragged.defined()) {
      // Padding steps leave a lane's carries as they are.
      const Tensor& here = v.back();
      for (size_t j = 0; j < nc; ++j)
        if (!passes_through(body, j)) r[j] = ops::where(lift(here, r[j].dim() - 1), r[j], v[j]);
    }
    return r;
  })};
  auto r = call_control_flow(scan_primitive(), s, args);
  std::vector<BatchedValue> out;
  for (size_t j = 0; j < r.size(); ++j) {
    if (j < nc) out.push_back({r[j], out_flags[j], {}});
    else out.push_back(stacked(r[j], out_flags[j], ragged));
  }
  return out;
}

// The VmapRule slot of the control-flow primitives (the interpreter calls vmap_control_flow
// directly, so ragged stacks reach the rules).
void control_flow_rule(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                       std::vector<Tensor>& out, std::vector<int>& out_axes) {
  std::vector<BatchedValue> v;
  for (size_t i = 0; i < in.size(); ++i) v.push_back({in[i], in_axes[i] >= 0, {}});
  auto r = vmap_control_flow(p, attrs, v, batch_size(in, in_axes));
  out.clear();
  out_axes.clear();
  for (auto& b : r) {
    out.push_back(b.t);
    out_axes.push_back(b.batched ? 0 : kNotBatched);
  }
}

}  // namespace

std::vector<BatchedValue> vmap_control_flow(const Primitive& p, const void* attrs, std::span<const BatchedValue> in,
                                            int64_t batch) {
  const auto& a = cf(attrs);
  if (&p == &while_primitive()) return batch_while(a, in, batch);
  if (&p == &scan_primitive()) return batch_scan(a, in, batch);
  return batch_branches(p, a, in, batch);
}

bool is_control_flow_rule(VmapRule rule) { return rule == &control_flow_rule; }

void install_control_flow_vmap_rules() {
  for (const Primitive* p : {&if_primitive(), &switch_primitive(), &while_primitive(), &scan_primitive()})
    def_vmap(*p, &control_flow_rule);
  // custom_vjp is a tape-only node: it is never recorded into a traced graph.
  def_vmap("custom_vjp", &vmap_by_loop);
}

}  // namespace spore::transforms::vmap_rules
