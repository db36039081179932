// SPDX-License-Identifier: Apache-2.0
#pragma once
// vmap: the vectorizing map. `vmap(f)(xs)` is f applied to every slice of xs along the batch
// axis, stacked — computed as one batched program, not a loop. f takes Tensor or TensorTree
// arguments and returns a Tensor, a TensorTree or a std::vector<Tensor>; the result has f's type
// with a batch axis on every tensor leaf.
//
//   auto per_example_grads = vmap(grad(loss), {-1, 0, 0});  // params shared, (x, y) batched
//   Tensor g = per_example_grads(params, xs, ys);
//
// How it works (shared/ARCHITECTURE.md, "Nesting"): vmap traces f once on per-example types
// (symbolic tensors, nothing runs), then runs that graph with each primitive's batching rule,
// which emits ordinary ops on the whole batch. So it composes with every transform, in any
// order: vmap(grad(f)) gives per-example gradients, grad(vmap(f)) and jit(vmap(f)) record the
// batched ops, vmap(vmap(f)) batches twice. Since f is traced, reading a value inside it
// (item(), to_vector(), a C++ `if` on a tensor) is an error: use cond, switch_case, while_loop
// and scan (spore/control_flow.h), which vmap batches — with a batched predicate both branches
// run and each lane selects its own; a while loop runs until every lane is done, and reverse
// mode through it (vmap of grad) gives each lane the gradient of its own trip count.
// f is traced on every call (closures are read then, random ops draw fresh keys); jit(vmap(f))
// traces once per signature and skips the batching work on later calls.
//
// Randomness: random ops draw the same numbers in every lane (the key is part of the traced
// op, as JAX with an unbatched key). For independent lanes, draw outside vmap with the batch
// shape and pass the draws in as a batched argument.
//
// Tensors f uses without taking them as arguments (captured) are shared by every lane. In-place
// updates (copy_, add_, ...) are functionalized: a batched argument written in place is
// updated lane by lane after the call; a shared tensor may only be written with a value every
// lane agrees on (else a clear error).
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

#include "spore/autodiff.h"

namespace spore {

/// Batch axes: one per argument (in_axes) or per output leaf (out_axes), or one value for all.
/// -1 means "not batched": an argument shared by every lane, or an output that is the same in
/// every lane (an error if it depends on a batched argument).
///
/// Per-leaf axes are TensorTrees: for in_axes one tree per argument, for out_axes one tree for
/// the whole output. A static int leaf gives the axis of every tensor leaf beneath it (None:
/// -1); lists and dicts mirror the value's structure, e.g. a parameter dict whose weights are
/// shared and whose biases are batched:
///   vmap(f, {TensorTree::dict({{"w", TensorTree::leaf(int64_t{-1})}, {"b", TensorTree::leaf(int64_t{0})}}),
///            TensorTree::leaf(int64_t{0})})
class VmapAxes {
 public:
  VmapAxes(int axis) : axes_{axis}, all_(true) {}  // NOLINT: one axis for every argument
  VmapAxes(std::initializer_list<int> axes) : axes_(axes) {}
  VmapAxes(std::vector<int> axes) : axes_(std::move(axes)) {}  // NOLINT
  VmapAxes(std::initializer_list<TensorTree> trees) : trees_(trees) {}
  VmapAxes(std::vector<TensorTree> trees) : trees_(std::move(trees)) {}  // NOLINT
  /// True when one value applies to every entry.
  bool all() const { return all_; }
  /// True when given as trees (per-leaf axes).
  bool per_leaf() const { return !trees_.empty(); }
  /// The axis of entry i (the one value when all()); not for per-leaf trees.
  int at(size_t i) const { return all_ ? axes_[0] : axes_[i]; }
  size_t size() const { return trees_.empty() ? axes_.size() : trees_.size(); }
  /// The axis of every tensor leaf of `value`, entry i's (`what` names in_axes or out_axes in
  /// messages; a tree that does not fit the value's structure is an error).
  std::vector<int> leaf_axes(size_t i, const TensorTree& value, const char* what) const;

 private:
  std::vector<int> axes_;
  std::vector<TensorTree> trees_;
  bool all_ = false;
};

namespace transforms {
/// The type-erased vmap: args are f's arguments; in_axes one per argument (applies to every
/// tensor leaf of it), out_axes one per output leaf.
TensorTree vmap_call(const autodiff::TreeFn& f, const std::vector<TensorTree>& args, const VmapAxes& in_axes,
                     const VmapAxes& out_axes);
}  // namespace transforms

namespace vmap_detail {
template <class R>
R from_tree(const TensorTree& t) {
  if constexpr (std::is_same_v<R, Tensor>) return t.tensor();
  else if constexpr (std::is_same_v<R, std::vector<Tensor>>) return t.leaves();
  else return t;
}
}  // namespace vmap_detail

/// f mapped over the batch axis `in_axes` of its arguments (default: axis 0 of every argument;
/// -1 = not batched), its outputs stacked along `out_axes` (default 0). Every batched argument
/// must have the same batch size. An output that no batched argument reaches is broadcast to
/// the batch (it is the same in every lane).
template <class F>
auto vmap(F f, VmapAxes in_axes = 0, VmapAxes out_axes = 0) {
  return [f = std::move(f), in_axes = std::move(in_axes), out_axes = std::move(out_axes),
          core = std::make_shared<transforms::JitCore>("vmap")](const auto&... args) {
    using R = std::decay_t<std::invoke_result_t<const F&, const decltype(args)&...>>;
    static_assert(std::is_same_v<R, Tensor> || std::is_same_v<R, TensorTree> || std::is_same_v<R, std::vector<Tensor>>,
                  "vmap: f must return a Tensor, a TensorTree or a std::vector<Tensor>");
    auto tf = [f](const std::vector<TensorTree>& t) {
      return TensorTree(autodiff_detail::call_tree<F, decltype(args)...>(f, t, std::index_sequence_for<decltype(args)...>{}));
    };
    static_assert(((std::is_same_v<autodiff_detail::arg_t<decltype(args)>, Tensor> ||
                    std::is_same_v<autodiff_detail::arg_t<decltype(args)>, TensorTree>) && ...),
                  "vmap: f takes Tensor or TensorTree arguments");
    autodiff::TreeFn run = [&](const std::vector<TensorTree>& a) { return transforms::vmap_call(tf, a, in_axes, out_axes); };
    TensorTree out = transforms::run_in_mode(core, run, {TensorTree(args)...});
    return vmap_detail::from_tree<R>(out);
  };
}

}  // namespace spore
