// SPDX-License-Identifier: Apache-2.0
// custom_vjp and checkpoint (spore/custom_vjp.h): the forward runs with every transform frame
// set aside, then one node is recorded on the open tapes; its vjp rule is the user's backward.
#include <memory>

#include "autodiff/frames.h"
#include "autodiff/rules.h"
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

bool tracked_by_any_frame(const std::vector<Tensor>& xs) {
  for (autodiff::Frame* f : autodiff::active_frames())
    for (const Tensor& x : xs)
      if (autodiff::find_entry(x, f->uid())) return true;
  return false;
}

}  // namespace

TreeFn1 custom_vjp(ForwardWithResiduals fwd, CustomBackward bwd) {
  return [fwd = std::move(fwd), bwd = std::move(bwd)](const TensorTree& x) -> TensorTree {
    auto x_leaves = x.leaves();
    if (!tracked_by_any_frame(x_leaves)) return fwd(x).first;
    // Under a symbolic trace (jit, vmap) with no transform inside it, the forward is just traced.
    auto frames = autodiff::active_frames();
    bool after_symbolic = false, tape_inside_trace = false;
    for (autodiff::Frame* f : frames) {
      if (f->kind() == autodiff::Frame::Kind::Symbolic) after_symbolic = true;
      else if (after_symbolic) tape_inside_trace = true;
    }
    if (after_symbolic && !tape_inside_trace && frames.back()->kind() == autodiff::Frame::Kind::Symbolic) return fwd(x).first;
    for (autodiff::Frame* f : frames) {
      SPORE_CHECK(f->kind() != autodiff::Frame::Kind::Forward, "[custom_vjp] forward mode (jvp) cannot go through a "
                  "function with a custom backward; give it no custom rule, or differentiate it in reverse mode");
      SPORE_CHECK(f->kind() != autodiff::Frame::Kind::Symbolic, "[custom_vjp] a custom backward under jit with grad "
                  "inside is not supported yet; call grad outside jit");
    }
    std::pair<TensorTree, TensorTree> r;
    {
      autodiff::SuspendAbove none(0);  // the forward's own ops are not recorded
      r = fwd(x);
    }
    auto y_leaves = r.first.leaves();
    for (auto& y : y_leaves) y = autodiff::fresh_alias(y);
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
  auto fwd = [fn](const TensorTree& x) {
    // Residuals: the inputs and the generator position, so recomputation draws the same keys.
    Generator& g = default_generator();
    TensorTree res{x, TensorTree::leaf(static_cast<int64_t>(g.seed())), TensorTree::leaf(static_cast<int64_t>(g.offset()))};
    return std::make_pair(fn(x), res);
  };
  auto bwd = [fn](const TensorTree& res, const TensorTree& ct) {
    Generator& g = default_generator();
    const uint64_t seed = g.seed(), offset = g.offset();
    g.set_state(static_cast<uint64_t>(std::get<int64_t>(res[1].static_value())),
                static_cast<uint64_t>(std::get<int64_t>(res[2].static_value())));
    autodiff::TreeFn f = [&fn](const std::vector<TensorTree>& a) { return fn(a[0]); };
    auto r = autodiff::vjp("checkpoint", f, {res[0]}, {0}, false, false);
    g.set_state(seed, offset);
    return r.pullback(ct)[0];
  };
  auto inner = custom_vjp(fwd, bwd);
  return [inner, fn](const TensorTree& x) {
    // Under jit the function is traced inline: recomputation is graph mode's business.
    if (autodiff::innermost(autodiff::Frame::Kind::Symbolic)) return fn(x);
    return inner(x);
  };
}

}  // namespace spore
