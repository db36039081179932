// SPDX-License-Identifier: Apache-2.0
// The memory-bounded reverse mode of while (WhileOptions::checkpoint_every = k): checkpoint every
// k-th trip and recompute the rest.
//
// Forward: the loop runs as a stacking while over segments, each trip of it an inner while of at
// most k of the original's trips, and stacks the changing carries entering each segment
// (loop-invariant carries, such as weights the body only reads, are not copied) and the number
// of trips it made. Backward: a reversed scan over those checkpoints, as long as the run-time
// number of segments; each step replays its segment from its checkpoint for exactly those trips
// with a stacking inner while (at most k carries live) and runs a reversed scan of the body's
// vjp over them. So about trips/k + k carries are live instead of one set of residuals per trip,
// for one more forward pass. Everything is ordinary while and scan nodes: it lowers, prints,
// serializes and differentiates again like any other graph.
#include <atomic>
#include <list>
#include <mutex>

#include "autodiff/frames.h"
#include "ir/printer.h"
#include "spore/ops.h"
#include "transforms/control_flow_checkpoint.h"
#include "transforms/control_flow_helpers.h"
#include "transforms/control_flow_vjp.h"
#include "transforms/interpreter.h"

namespace spore::transforms {
namespace {

using cf_helpers::float_positions;

std::atomic<int> g_symbols{0};

// Which carries change and which the body passes through, and which carry cotangents.
struct Layout {
  size_t nc = 0;
  std::vector<TensorType> types;  // the carries'
  std::vector<int> fc;            // float carries: cotangents flow through them
  std::vector<int> inv, var;      // carries the body returns unchanged / changes
  int64_t k = 0;
};

Layout layout_of(const ControlFlowAttrs& a, std::span<const TensorType> types) {
  Layout l;
  l.nc = types.size();
  l.types.assign(types.begin(), types.end());
  l.fc = float_positions(types);
  for (size_t j = 0; j < l.nc; ++j) (cf_helpers::passes_through(*a.graphs[1], j) ? l.inv : l.var).push_back(static_cast<int>(j));
  l.k = a.checkpoint_every;
  return l;
}

// The carries from the invariant ones and the changing ones.
std::vector<Tensor> assemble(const Layout& l, std::span<const Tensor> inv, std::span<const Tensor> var) {
  std::vector<Tensor> c(l.nc);
  for (size_t i = 0; i < l.inv.size(); ++i) c[static_cast<size_t>(l.inv[i])] = inv[i];
  for (size_t i = 0; i < l.var.size(); ++i) c[static_cast<size_t>(l.var[i])] = var[i];
  return c;
}

std::vector<Tensor> pick(std::span<const Tensor> v, const std::vector<int>& at) {
  std::vector<Tensor> out;
  for (int j : at) out.push_back(v[static_cast<size_t>(j)]);
  return out;
}

// Up to k trips of the loop from carries c: an inner while over (carries..., j) whose condition
// is j < k && cond(carries). Replaying a segment in the backward (`trips` defined: the count the
// forward made) runs exactly that many, over (carries..., j, trips), without evaluating cond:
// a recomputation one rounding apart from the forward's (fused differently) cannot stop on
// another trip. A replay also outputs its trip count and the changing carries entering each
// trip, stacked (after its nc + 2 carries).
std::vector<Tensor> run_segment(const ControlFlowAttrs& a, const Layout& l, std::span<const Tensor> c,
                                const Tensor& trips = Tensor()) {
  const size_t nc = l.nc;
  const bool replay = trips.defined();
  std::vector<TensorType> sig = l.types;
  sig.push_back(TensorType{DType::Int64, false, {}});
  if (replay) sig.push_back(TensorType{DType::Int64, false, {}});
  ControlFlowAttrs s;
  s.num_carry = static_cast<int64_t>(sig.size());
  s.stack = replay;
  if (replay) s.trip_symbol = detail::cat("segment_trips", g_symbols.fetch_add(1));
  s.graphs.push_back(trace_graph("checkpoint_segment_cond", sig, [&](std::span<const Tensor> v) {
    if (replay) return std::vector<Tensor>{ops::less(v[nc], v[nc + 1])};
    const Tensor more = interpret(*a.graphs[0], v.first(nc))[0];
    return std::vector<Tensor>{ops::logical_and(ops::less(v[nc], ops::scalar_tensor(l.k, DType::Int64)), more)};
  }));
  s.graphs.push_back(trace_graph("checkpoint_segment_body", sig, [&](std::span<const Tensor> v) {
    std::vector<Tensor> out = interpret(*a.graphs[1], v.first(nc));
    out.push_back(ops::add(v[nc], ops::scalar_tensor(1, DType::Int64)));
    if (replay) {
      out.push_back(v[nc + 1]);
      for (Tensor& t : pick(v, l.var)) out.push_back(t);
    }
    return out;
  }));
  std::vector<Tensor> in(c.begin(), c.end());
  in.push_back(ops::scalar_tensor(0, DType::Int64));
  if (replay) in.push_back(trips);
  return call_control_flow(while_primitive(), s, in);
}

// A reversed scan, as long as its stacks, whose carries are the float carries' cotangents and
// the invariant carries and whose xs are the stacks: returns the cotangents it ends with.
std::vector<Tensor> reverse_over(const ir::GraphPtr& step, const Layout& l, std::span<const Tensor> ct,
                                 std::span<const Tensor> inv, std::span<const Tensor> stacks) {
  ControlFlowAttrs b;
  b.num_carry = static_cast<int64_t>(l.fc.size() + l.inv.size());
  b.length = -1;
  b.reverse = true;
  b.graphs = {step};
  std::vector<Tensor> in(ct.begin(), ct.end());
  in.insert(in.end(), inv.begin(), inv.end());
  in.insert(in.end(), stacks.begin(), stacks.end());
  std::vector<Tensor> out = call_control_flow(scan_primitive(), b, in);
  out.resize(l.fc.size());
  return out;
}

// The signature of both reversed scans' steps: (cotangents of the float carries, invariant
// carries, one changing-carry slice each[, the segment's trip count]).
std::vector<TensorType> step_signature(const Layout& l, bool with_trips) {
  std::vector<TensorType> sig;
  for (int j : l.fc) sig.push_back(l.types[static_cast<size_t>(j)]);
  for (int j : l.inv) sig.push_back(l.types[static_cast<size_t>(j)]);
  for (int j : l.var) sig.push_back(l.types[static_cast<size_t>(j)]);
  if (with_trips) sig.push_back(TensorType{DType::Int64, false, {}});
  return sig;
}

// One trip backward: from the carries entering it and the cotangents leaving it, the
// cotangents entering it (the body's vjp; an invariant carry's cotangent accumulates).
ir::GraphPtr trip_step(const ControlFlowAttrs& a, const Layout& l) {
  const size_t nf = l.fc.size(), ni = l.inv.size();
  return trace_graph("checkpoint_trip_vjp", step_signature(l, false), [&](std::span<const Tensor> v) {
    const std::vector<Tensor> c = assemble(l, v.subspan(nf, ni), v.subspan(nf + ni));
    std::vector<Tensor> out = cf_vjp::graph_vjp(*a.graphs[1], c, l.fc, v.first(nf));
    out.insert(out.end(), v.begin() + static_cast<std::ptrdiff_t>(nf), v.begin() + static_cast<std::ptrdiff_t>(nf + ni));
    return out;
  });
}

// One segment backward: replay it from its checkpoint for the trips the forward made, stacking
// the carries entering each, and run the trips backward over them.
ir::GraphPtr segment_step(const ControlFlowAttrs& a, const Layout& l) {
  const size_t nf = l.fc.size(), ni = l.inv.size(), nv = l.var.size();
  const ir::GraphPtr trip = trip_step(a, l);
  return trace_graph("checkpoint_segment_vjp", step_signature(l, true), [&](std::span<const Tensor> v) {
    const std::span<const Tensor> inv = v.subspan(nf, ni);
    const std::vector<Tensor> c = assemble(l, inv, v.subspan(nf + ni, nv));
    // (carries, j, trips), its trip count, the stacks.
    const std::vector<Tensor> seg = run_segment(a, l, c, v[nf + ni + nv]);
    std::vector<Tensor> out =
        reverse_over(trip, l, v.first(nf), inv, std::span<const Tensor>(seg).subspan(l.nc + 3));
    out.insert(out.end(), inv.begin(), inv.end());
    return out;
  });
}

// The forward over segments: a stacking while whose body runs one segment and stacks the
// changing carries that entered it and the number of trips it made.
ControlFlowAttrs segment_loop(const ControlFlowAttrs& a, const Layout& l) {
  ControlFlowAttrs o;
  o.num_carry = static_cast<int64_t>(l.nc);
  o.stack = true;
  o.trip_symbol = detail::cat("checkpoints", g_symbols.fetch_add(1));
  o.graphs = {a.graphs[0], trace_graph("checkpoint_segments", l.types, [&](std::span<const Tensor> v) {
                std::vector<Tensor> seg = run_segment(a, l, v);
                const Tensor trips = seg[l.nc];
                std::vector<Tensor> out(v.begin(), v.end());
                // The invariant carries pass straight through (so the node still shows them as
                // invariant); the changing ones come out of the segment.
                for (int j : l.var) out[static_cast<size_t>(j)] = seg[static_cast<size_t>(j)];
                for (Tensor& t : pick(v, l.var)) out.push_back(t);
                out.push_back(trips);
                return out;
              })};
  return o;
}

}  // namespace

std::shared_ptr<ControlFlowAttrs> checkpointed_loop(const ControlFlowAttrs& a, std::span<const Tensor> in) {
  const Layout l = layout_of(a, cf_helpers::types_of(in));
  if (l.var.empty() || a.stack) return nullptr;  // nothing changes: nothing to checkpoint
  auto aug = std::make_shared<ControlFlowAttrs>(segment_loop(a, l));
  auto plan = std::make_shared<ResidualPlan>();
  plan->wrt = l.fc;
  plan->invariant = l.inv;
  plan->bwd = {segment_step(a, l)};
  // Outputs: the carries, the number of segments, the checkpoints and each segment's trips.
  plan->num_outputs = l.nc;
  plan->first_residual = l.nc + 1;
  plan->fwd = aug->graphs;
  aug->plan = plan;
  return aug;
}

bool while_vjp_checkpointed(const VjpArgs& a, std::span<Tensor> in_ct) {
  const auto& at = *static_cast<const ControlFlowAttrs*>(a.attrs);
  const Layout l = layout_of(at, a.in_types);
  if (l.var.empty()) return false;
  const std::vector<Tensor> fwd = call_control_flow(while_primitive(), segment_loop(at, l), a.inputs);
  const std::vector<Tensor> ct = cf_vjp::float_cts(a, 0, l.nc);
  const std::vector<Tensor> inv = pick(a.inputs, l.inv);
  const std::vector<Tensor> out =
      reverse_over(segment_step(at, l), l, ct, inv, std::span<const Tensor>(fwd).subspan(l.nc + 1));
  for (size_t i = 0; i < l.fc.size(); ++i)
    if (a.needs[static_cast<size_t>(l.fc[i])]) in_ct[static_cast<size_t>(l.fc[i])] = out[i];
  return true;
}

bool reverse_tapes_open() {
  bool tape = false;
  for (const autodiff::Frame* f : autodiff::active_frames()) {
    if (f->kind() == autodiff::Frame::Kind::Forward || f->kind() == autodiff::Frame::Kind::Symbolic) return false;
    tape = tape || f->kind() == autodiff::Frame::Kind::Tape;
  }
  return tape;
}

namespace {

// The node a tape records, per loop (its sub-graphs' text, operand types and k): built once, so
// a training loop calling the same while every step neither retraces the segment graphs and the
// body's linearization nor mints new trip-count symbols each step. A few recent loops are kept.
std::shared_ptr<ControlFlowAttrs> recorded_node(const ControlFlowAttrs& a, std::span<const Tensor> in) {
  static std::mutex mu;
  static std::list<std::pair<std::string, std::shared_ptr<ControlFlowAttrs>>> cache;  // most recent first
  constexpr size_t kKept = 32;
  std::string key = ir::print_graph(*a.graphs[0]) + ir::print_graph(*a.graphs[1]) + std::to_string(a.checkpoint_every);
  for (const Tensor& t : in) key += detail::cat(" ", dtype_name(t.dtype()), shape_str(t.shape()));
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = cache.begin(); it != cache.end(); ++it)
      if (it->first == key) {
        cache.splice(cache.begin(), cache, it);
        return cache.front().second;
      }
  }
  std::shared_ptr<ControlFlowAttrs> aug = checkpointed_loop(a, in);
  if (!aug) return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace_front(std::move(key), aug);
  if (cache.size() > kKept) cache.pop_back();
  return aug;
}

}  // namespace

std::optional<std::vector<Tensor>> run_recorded_checkpointed(const ControlFlowAttrs& a, std::span<const Tensor> in) {
  if (a.checkpoint_every <= 0 || a.stack || plan_of(a) != nullptr || !reverse_tapes_open()) return std::nullopt;
  bool tracked = false;
  for (const autodiff::Frame* f : autodiff::active_frames())
    for (const Tensor& x : in) tracked = tracked || (is_floating(x.dtype()) && autodiff::find_entry(x, f->uid()) != nullptr);
  if (!tracked) return std::nullopt;
  const std::shared_ptr<ControlFlowAttrs> aug = recorded_node(a, in);
  if (!aug) return std::nullopt;
  std::vector<Tensor> out;
  {
    autodiff::SuspendAbove none(0);  // the tapes keep the node, not the ops inside it
    out = call_control_flow(while_primitive(), *aug, in);
  }
  for (Tensor& o : out) o = autodiff::fresh_alias(o);
  autodiff::record_eager(while_primitive(), aug.get(), in, out);
  out.resize(aug->plan->num_outputs);
  return out;
}

}  // namespace spore::transforms
