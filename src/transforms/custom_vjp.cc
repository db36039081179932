// SPDX-License-Identifier: Apache-2.0
// custom_vjp and checkpoint (spore/custom_vjp.h): the forward runs with every tape set aside,
// then one node is recorded on the open tapes; its vjp rule is the user's backward. Under jit with
// grad inside (jit(grad(f))) the trace records the forward's ops, the tape inside it records the
// node, and the backward's ops, emitted when the tape runs, land in the same trace.
#include <memory>

#include "autodiff/frames.h"
#include "autodiff/rules.h"
#include "autodiff/tape.h"
#include "runtime/dispatch.h"
#include "runtime/trace_hooks.h"
#include "transforms/trace.h"
#include "spore/autodiff.h"
#include "spore/custom_vjp.h"
#include "spore/error.h"
#include "spore/ops.h"

namespace spore {
namespace {

struct CustomCall {
  CustomBackward bwd;
  TensorTree residuals;
  TensorTree out_structure;
  TensorTree in_structure;
};

/// The attributes of one recorded call: what its backward needs. Compared by identity.
struct CustomVjpAttrs {
  std::shared_ptr<const CustomCall> call;
  static constexpr auto fields() { return std::make_tuple(); }
};

void custom_vjp_rule(const VjpArgs& a, std::span<Tensor> in_ct) {
  const CustomCall& c = *static_cast<const CustomVjpAttrs*>(a.attrs)->call;
  std::vector<Tensor> cts;
  for (size_t j = 0; j < a.cotangents.size(); ++j)
    cts.push_back(a.cotangents[j].defined() ? a.cotangents[j] : ops::zeros(a.out_types[j].shape, {a.out_types[j].dtype}));
  TensorTree g = c.bwd(c.residuals, c.out_structure.with_leaves(cts));
  SPORE_CHECK(g.same_structure(c.in_structure), "[custom_vjp] the backward returned ", g.structure_str(true),
              "; it must return one cotangent per input, structured like the input ", c.in_structure.structure_str(true));
  auto leaves = g.leaves();
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!a.needs[i] || !leaves[i].defined()) continue;
    SPORE_CHECK(leaves[i].shape() == a.in_types[i].shape, "[custom_vjp] the backward's cotangent ", i, " has shape ",
                shape_str(leaves[i].shape()), "; the input has shape ", shape_str(a.in_types[i].shape));
    in_ct[i] = leaves[i].dtype() == a.in_types[i].dtype ? leaves[i] : leaves[i].to(a.in_types[i].dtype);
  }
}

void no_kernel(const void*, std::span<const Tensor>, std::vector<Tensor>&) {
  throw Error("[custom_vjp] this node is recorded by spore::custom_vjp and never runs by itself");
}

const Primitive& custom_def() {
  static const Primitive& p = [] () -> const Primitive& {
    PrimitiveSpec<CustomVjpAttrs> spec;
    spec.name = "custom_vjp";
    spec.infer = [](const CustomVjpAttrs&, std::span<const TensorType>, OutTypes&) {};
    spec.cost = [](const CustomVjpAttrs&, std::span<const TensorType>, std::span<const TensorType>) { return Cost{}; };
    Primitive& q = const_cast<Primitive&>(define_primitive(spec));
    q.eager = no_kernel;  // no kernels: it only ever lives on a tape
    q.attrs.equal = [](const void* x, const void* y) {
      return static_cast<const CustomVjpAttrs*>(x)->call == static_cast<const CustomVjpAttrs*>(y)->call;
    };
    autodiff::def_rules(q, {}, nullptr, custom_vjp_rule);
    return q;
  }();
  return p;
}
[[maybe_unused]] const bool registered = (custom_def(), true);

bool tracked_by_any_frame(const std::vector<Tensor>& xs, bool tapes_only = false) {
  for (autodiff::Frame* f : autodiff::active_frames()) {
    if (tapes_only && f->kind() == autodiff::Frame::Kind::Symbolic) continue;
    for (const Tensor& x : xs)
      if (autodiff::find_entry(x, f->uid())) return true;
  }
  return false;
}

// A fresh handle on a forward output for the tapes to track as the node's output. It keeps the
// output's entries in the frames at or below `depth` (the trace that recorded the forward), so
// the trace still knows it; tapes above add their own when they record the node.
Tensor node_output(const Tensor& y, int depth) {
  Tensor a = autodiff::fresh_alias(y);
  const auto frames = autodiff::active_frames();
  for (int d = 0; d <= depth; ++d)
    if (const auto* e = autodiff::find_entry(y, frames[static_cast<size_t>(d)]->uid())) autodiff::add_entry(a, *e);
  return a;
}

// The depth of the innermost active symbolic trace, or -1.
int symbolic_depth() {
  const auto frames = autodiff::active_frames();
  for (size_t d = frames.size(); d-- > 0;)
    if (frames[d]->kind() == autodiff::Frame::Kind::Symbolic) return static_cast<int>(d);
  return -1;
}

// Tensors that `fn` uses without receiving them (captured by its closure) and that an open frame
// tracks: a weight a checkpointed block closes over must still get its gradient. Found by one
// symbolic trace of fn; the generator is rewound so the trace draws nothing.
std::vector<Tensor> tracked_captures(const TreeFn1& fn, const TensorTree& x) {
  Generator& gen = default_generator();
  const uint64_t seed = gen.seed(), offset = gen.offset();
  transforms::SymbolicTrace st("captures", true);
  st.allow_state();  // in-place writes (BatchNorm statistics) are traced, not made
  try {
    autodiff::FrameGuard open(&st);
    auto leaves = x.leaves();
    for (auto& l : leaves) l = st.input(runtime::type_of(l));
    (void)fn(x.with_leaves(leaves));
  } catch (const Error& e) {
    gen.set_state(seed, offset);
    throw Error(detail::cat("[custom_vjp/checkpoint] the function is traced once on types to find the tensors it "
                            "captures, and that trace failed: ", e.what(), ". Inside checkpoint and custom_vjp, branch "
                            "with cond/where rather than on values read in C++ (item())"));
  }
  gen.set_state(seed, offset);
  std::vector<Tensor> out;
  for (const Tensor& c : st.captured())
    if (tracked_by_any_frame({c}, true)) out.push_back(c);
  return out;
}

}  // namespace

TreeFn1 custom_vjp(ForwardWithResiduals fwd, CustomBackward bwd) {
  return [fwd = std::move(fwd), bwd = std::move(bwd)](const TensorTree& x) -> TensorTree {
    auto x_leaves = x.leaves();
    if (!tracked_by_any_frame(x_leaves)) return fwd(x).first;
    const auto frames = autodiff::active_frames();
    for (autodiff::Frame* f : frames)
      SPORE_CHECK(f->kind() != autodiff::Frame::Kind::Forward, "[custom_vjp] forward mode (jvp) cannot go through a "
                  "function with a custom backward; give it no custom rule, or differentiate it in reverse mode");
    // Under the innermost symbolic trace (jit, vmap) only tapes opened inside it can record the
    // custom node. With none, the forward is just traced, which is right only when no tape
    // outside the trace differentiates its result: under vmap inside grad the backward would be
    // lost silently, so that is an error until the custom node is a batchable graph node.
    const int depth = symbolic_depth();
    bool tape_inside = false, tape_outside = false;
    for (int d = 0; d < static_cast<int>(frames.size()); ++d) {
      if (frames[static_cast<size_t>(d)]->kind() != autodiff::Frame::Kind::Tape) continue;
      (d > depth ? tape_inside : tape_outside) = true;
    }
    if (depth >= 0 && !tape_inside) {
      SPORE_CHECK(!tape_outside, "[custom_vjp] a function with a custom backward is called inside vmap (or jit) that a "
                  "grad outside differentiates; its custom backward cannot be batched yet and would be lost: put grad "
                  "inside vmap (vmap(grad(f))) instead");
      return fwd(x).first;
    }
    auto caps = tracked_captures([&fwd](const TensorTree& t) { return fwd(t).first; }, x);
    SPORE_CHECK(caps.empty(), "[custom_vjp] the forward uses ", caps.size(), " tensor(s) that grad tracks without "
                "receiving them as inputs (e.g. a captured weight of shape ", shape_str(caps.empty() ? Shape{} : caps[0].shape()),
                "); the custom backward could not return their gradients: pass them as inputs");
    std::pair<TensorTree, TensorTree> r;
    {
      autodiff::SuspendAbove tapes_aside(depth + 1);  // no tape records the forward's own ops
      r = fwd(x);
    }
    auto y_leaves = r.first.leaves();
    for (auto& y : y_leaves) y = node_output(y, depth);
    auto call = std::make_shared<CustomCall>();
    call->bwd = bwd;
    call->residuals = r.second;
    call->out_structure = r.first;
    call->in_structure = x;
    CustomVjpAttrs attrs{call};
    autodiff::record_eager(custom_def(), &attrs, x_leaves, y_leaves);
    return r.first.with_leaves(y_leaves);
  };
}

TreeFn1 checkpoint(TreeFn1 fn) {
  return [fn](const TensorTree& x) -> TensorTree {
    // Under jit the function is traced inline: recomputation is graph mode's business.
    if (autodiff::innermost(autodiff::Frame::Kind::Symbolic)) return fn(x);
    auto x_leaves = x.leaves();
    if (autodiff::active_frames().empty()) return fn(x);
    for (autodiff::Frame* f : autodiff::active_frames())
      SPORE_CHECK(f->kind() != autodiff::Frame::Kind::Forward, "[checkpoint] forward mode (jvp) through a checkpoint is "
                  "not supported; call the function directly under jvp");
    // The node's inputs: the arguments and the tracked tensors fn closes over.
    std::vector<Tensor> inputs = x_leaves;
    auto caps = tracked_captures(fn, x);
    inputs.insert(inputs.end(), caps.begin(), caps.end());
    if (!tracked_by_any_frame(inputs)) return fn(x);
    Generator& gen = default_generator();
    const uint64_t seed = gen.seed(), offset = gen.offset();
    TensorTree y;
    {
      autodiff::SuspendAbove none(0);  // keep nothing but the inputs
      y = fn(x);
    }
    auto y_leaves = y.leaves();
    for (auto& l : y_leaves) l = autodiff::fresh_alias(l);
    auto call = std::make_shared<CustomCall>();
    // The backward recomputes fn under its own tape, with the generator rewound so random ops
    // (dropout) draw exactly what the forward drew.
    call->bwd = [fn, x, caps, seed, offset](const TensorTree&, const TensorTree& ct) {
      Generator& g = default_generator();
      const uint64_t s0 = g.seed(), o0 = g.offset();
      g.set_state(seed, offset);
      // The forward already updated running statistics; the recomputation must not again.
      runtime::StatisticsFrozen frozen;
      autodiff::Tape tape;
      std::vector<int64_t> wanted;
      std::vector<TensorType> types;
      TensorTree out;
      {
        autodiff::FrameGuard open(&tape);
        auto xs = x.leaves();
        for (auto& l : xs) {
          l = tape.track(l);
          wanted.push_back(tape.id_of(l));
          types.push_back(runtime::type_of(l));
        }
        for (const Tensor& c : caps) {
          wanted.push_back(tape.track_in_place(c));
          types.push_back(runtime::type_of(c));
        }
        try {
          out = fn(x.with_leaves(xs));
        } catch (...) {
          for (const Tensor& c : caps) autodiff::remove_entry(c, tape.uid());
          g.set_state(s0, o0);
          throw;
        }
      }
      for (const Tensor& c : caps) autodiff::remove_entry(c, tape.uid());
      g.set_state(s0, o0);
      std::vector<int64_t> roots;
      for (const Tensor& o : out.leaves()) roots.push_back(tape.id_of(o));
      auto cts = ct.leaves();
      return TensorTree(tape.backward(roots, cts, wanted, types, true));
    };
    call->out_structure = y;
    call->in_structure = TensorTree(inputs);
    CustomVjpAttrs attrs{call};
    autodiff::record_eager(custom_def(), &attrs, inputs, y_leaves);
    return y.with_leaves(y_leaves);
  };
}

}  // namespace spore
