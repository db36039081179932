// SPDX-License-Identifier: Apache-2.0
// vmap rules of the control-flow primitives. Their sub-graphs are per-example graphs, run by the
// batching interpreter; the rules rebuild the control flow with the public functions (cond,
// switch_case, while_loop, scan), which run as C++ control flow eagerly and become If / Switch /
// While / Scan nodes again under an outer trace (jit of vmap, vmap of vmap).
//
//  - if / switch with a shared predicate: the one branch every lane takes, batched.
//  - if / switch with a batched predicate: every branch runs on the whole batch and each lane
//    selects its own result with where (as JAX: both sides are evaluated, so a NaN or an error in
//    a branch a lane does not take still happens, and a gradient through where of a NaN side is
//    NaN; guard the inputs of such branches).
//  - while with a shared condition: the loop, batched. With a batched condition: the loop runs
//    while any lane runs, each lane carries a "still running" flag and a finished lane keeps its
//    carry (the body still computes on it, as above).
//  - scan: the batched xs are scanned along their own axis 1; carries and ys batched as needed.
//
// A loop carry's batchedness must not change between iterations, so it is fixed first: a carry
// is batched when its initial value is, when the body makes it so from batched values, or (for
// a batched condition) when it changes at all.
#include "spore/control_flow.h"
#include "transforms/control_flow.h"
#include "transforms/ir_bridge.h"
#include "transforms/vmap_interpreter.h"
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore::transforms::vmap_rules {
namespace {

const ControlFlowAttrs& cf(const void* a) { return *static_cast<const ControlFlowAttrs*>(a); }

std::vector<BatchedValue> values(const std::vector<Tensor>& ts, const std::vector<bool>& flags) {
  std::vector<BatchedValue> v;
  for (size_t i = 0; i < ts.size(); ++i) v.push_back({ts[i], flags[i]});
  return v;
}

// Runs `g` and returns its outputs, materialized (broadcast) where `batched` says they must be.
std::vector<Tensor> run(const ir::Graph& g, const std::vector<Tensor>& args, const std::vector<bool>& flags,
                        const std::vector<bool>& batched, int64_t batch) {
  auto r = run_batched(g, values(args, flags), batch);
  std::vector<Tensor> out;
  for (size_t j = 0; j < r.size(); ++j) out.push_back(batched[j] ? materialize(r[j], batch) : r[j].t);
  return out;
}

std::vector<int> axes_of(const std::vector<bool>& flags, size_t from = 0) {
  std::vector<int> a;
  for (size_t i = from; i < flags.size(); ++i) a.push_back(flags[i] ? 0 : kNotBatched);
  return a;
}

// ---- if / switch ----------------------------------------------------------------------------

void branches(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
              std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const auto& a = cf(attrs);
  const int64_t batch = batch_size(in, in_axes);
  const bool is_if = &p == &if_primitive();
  const std::vector<Tensor> operands(in.begin() + 1, in.end());
  std::vector<bool> flags;
  for (size_t i = 1; i < in.size(); ++i) flags.push_back(in_axes[i] >= 0);
  const size_t nout = a.graphs[0]->outputs().size();
  if (in_axes[0] < 0) {
    // Every lane takes the same branch. An output batched in any branch is batched in all, so
    // the result's batchedness does not depend on the branch taken.
    std::vector<bool> force(nout, false);
    for (const auto& g : a.graphs) {
      auto bo = batched_outputs(*g, flags);
      for (size_t j = 0; j < nout; ++j) force[j] = force[j] || bo[j];
    }
    std::vector<TreeFunction> fns;
    for (const auto& g : a.graphs)
      fns.push_back([&, g](const TensorTree& t) { return TensorTree(run(*g, t.leaves(), flags, force, batch)); });
    const TensorTree args(operands);
    const TensorTree r = is_if ? cond(in[0], fns[0], fns[1], args) : switch_case(in[0], fns, args);
    out = r.leaves();
    out_axes = axes_of(force);
    return;
  }
  // Each lane picks its branch: run them all on the whole batch, then select per lane.
  std::vector<std::vector<BatchedValue>> results;
  for (const auto& g : a.graphs) results.push_back(run_batched(*g, values(operands, flags), batch));
  const Tensor& sel = in[0];
  const int64_t n = static_cast<int64_t>(a.graphs.size());
  out.clear();
  for (size_t j = 0; j < nout; ++j) {
    const int64_t rank = results[0][j].t.dim() - (results[0][j].batched ? 1 : 0);
    auto pick = [&](const Tensor& mask, const Tensor& yes, const Tensor& no) { return ops::where(lift(mask, rank), yes, no); };
    if (is_if) {
      out.push_back(pick(sel, results[0][j].t, results[1][j].t));
      continue;
    }
    // switch clamps the index: lanes at or below 0 take branch 0, at or above n-1 the last.
    Tensor r = results[static_cast<size_t>(n - 1)][j].t;
    for (int64_t k = n - 2; k >= 0; --k) {
      const Tensor mask = k == 0 ? ops::less_equal(sel, ops::scalar_tensor(0, sel.dtype()))
                                 : ops::equal(sel, ops::scalar_tensor(k, sel.dtype()));
      r = pick(mask, results[static_cast<size_t>(k)][j].t, r);
    }
    out.push_back(r);
  }
  all_batched(out, out_axes);
}

// ---- while ----------------------------------------------------------------------------------

void while_rule(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
                std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const auto& a = cf(attrs);
  const ir::Graph& cond_g = *a.graphs[0];
  const ir::Graph& body_g = *a.graphs[1];
  const int64_t batch = batch_size(in, in_axes);
  const size_t n = in.size();
  // Carries the body passes through unchanged (loop invariants) never need freezing.
  std::vector<bool> through(n);
  for (size_t j = 0; j < n; ++j)
    through[j] = body_g.outputs()[j].value == ir::ValueRef{ir::ValueRef::kParam, static_cast<int32_t>(j)};
  std::vector<bool> flags;
  for (size_t j = 0; j < n; ++j) flags.push_back(in_axes[j] >= 0);
  bool cond_batched = false;
  for (bool changed = true; changed;) {
    changed = false;
    cond_batched = batched_outputs(cond_g, flags)[0];
    const auto bo = batched_outputs(body_g, flags);
    for (size_t j = 0; j < n; ++j) {
      const bool want = flags[j] || bo[j] || (cond_batched && !through[j]);
      changed = changed || want != flags[j];
      flags[j] = want;
    }
  }
  std::vector<Tensor> init;
  for (size_t j = 0; j < n; ++j) init.push_back(flags[j] ? materialize({in[j], in_axes[j] >= 0}, batch) : in[j]);
  auto cond_of = [&](const std::vector<Tensor>& c, bool want_batched) {
    return run(cond_g, c, flags, {want_batched}, batch)[0];
  };
  if (!cond_batched) {
    auto cond_fn = [&](const TensorTree& c) { return cond_of(c.leaves(), false); };
    auto body_fn = [&](const TensorTree& c) { return TensorTree(run(body_g, c.leaves(), flags, flags, batch)); };
    out = while_loop(cond_fn, body_fn, TensorTree(init)).leaves();
    out_axes = axes_of(flags);
    return;
  }
  // The last carry says which lanes still run; a lane stops for good once its condition fails.
  std::vector<Tensor> carries = init;
  carries.push_back(cond_of(init, true));
  auto cond_fn = [](const TensorTree& c) { return ops::any(c.leaves().back()); };
  auto body_fn = [&](const TensorTree& c) {
    std::vector<Tensor> now = c.leaves();
    const Tensor running = now.back();
    now.pop_back();
    std::vector<Tensor> next = run(body_g, now, flags, flags, batch);
    for (size_t j = 0; j < n; ++j)
      if (!through[j]) next[j] = ops::where(lift(running, next[j].dim() - 1), next[j], now[j]);
    next.push_back(ops::logical_and(running, cond_of(next, true)));
    return TensorTree(next);
  };
  out = while_loop(cond_fn, body_fn, TensorTree(carries)).leaves();
  out.pop_back();
  out_axes = axes_of(flags);
}

// ---- scan -----------------------------------------------------------------------------------

void scan_rule(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int> in_axes,
               std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const auto& a = cf(attrs);
  const ir::Graph& body = *a.graphs[0];
  const int64_t batch = batch_size(in, in_axes);
  const size_t nc = static_cast<size_t>(a.num_carry);
  std::vector<bool> flags;
  for (size_t i = 0; i < in.size(); ++i) flags.push_back(in_axes[i] >= 0);
  std::vector<bool> bo;
  for (bool changed = true; changed;) {
    changed = false;
    bo = batched_outputs(body, flags);
    for (size_t j = 0; j < nc; ++j) {
      changed = changed || (bo[j] && !flags[j]);
      flags[j] = flags[j] || bo[j];
    }
  }
  const std::vector<bool> carry_flags(flags.begin(), flags.begin() + static_cast<std::ptrdiff_t>(nc));
  const std::vector<bool> out_flags = bo;  // carries (fixed above), then ys
  std::vector<Tensor> init, xs;
  for (size_t j = 0; j < nc; ++j) init.push_back(flags[j] ? materialize({in[j], in_axes[j] >= 0}, batch) : in[j]);
  // A batched x (B, L, ...) is scanned along L: (L, B, ...) hands the body (B, ...) slices.
  for (size_t i = nc; i < in.size(); ++i) xs.push_back(flags[i] ? ops::transpose(in[i], 0, 1) : in[i]);
  std::vector<int> y_axes;
  for (size_t j = nc; j < out_flags.size(); ++j) y_axes.push_back(out_flags[j] ? 1 : kNotBatched);
  if (a.length == 0) {
    // Nothing to scan: the carries come back and every ys is empty (as the primitive gives).
    out = init;
    for (size_t j = nc; j < out_flags.size(); ++j) {
      const auto& t = std::get<ir::TensorType>(body.type_of(body.outputs()[j].value));
      Shape s = out_flags[j] ? Shape{batch, 0} : Shape{0};
      for (const auto& d : from_ir(t).shape) s.push_back(d);
      out.push_back(ops::zeros(s, {from_ir(t).dtype}));
    }
    out_axes = axes_of(carry_flags);
    for (size_t j = nc; j < out_flags.size(); ++j) out_axes.push_back(out_flags[j] ? 0 : kNotBatched);
    return;
  }
  auto fn = [&](const TensorTree& carry, const TensorTree& x) {
    std::vector<Tensor> args = carry.leaves();
    for (const Tensor& t : x.leaves()) args.push_back(t);
    std::vector<Tensor> r = run(body, args, flags, out_flags, batch);
    std::vector<Tensor> c(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(nc));
    std::vector<Tensor> y(r.begin() + static_cast<std::ptrdiff_t>(nc), r.end());
    return std::make_pair(TensorTree(c), TensorTree(y));
  };
  auto [c, ys] = scan(fn, TensorTree(init), TensorTree(xs), a.reverse);
  out = c.leaves();
  for (const Tensor& y : ys.leaves()) out.push_back(y);
  out_axes = axes_of(carry_flags);
  out_axes.insert(out_axes.end(), y_axes.begin(), y_axes.end());
}

}  // namespace

void install_control_flow_vmap_rules() {
  def_vmap(if_primitive(), &branches);
  def_vmap(switch_primitive(), &branches);
  def_vmap(while_primitive(), &while_rule);
  def_vmap(scan_primitive(), &scan_rule);
}

}  // namespace spore::transforms::vmap_rules
