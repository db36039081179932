// SPDX-License-Identifier: Apache-2.0
#pragma once
// Automatic differentiation as function transforms, modelled on MindSpore's functional API:
// grad, value_and_grad, vjp, jvp, jacrev, jacfwd, hessian, hvp and stop_gradient. They take any
// C++ callable whose arguments are Tensors or TensorTrees and return a Tensor (or a TensorTree
// for vjp/jvp); a callable returning std::pair<Tensor, TensorTree> has an auxiliary output
// (MindSpore's has_aux), which is returned beside the gradients and never differentiated.
// Transforms compose to any order: grad(grad(f)), jvp of grad, grad inside a closure over an
// outer grad's variable.
#include <functional>
#include <initializer_list>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "spore/mode.h"
#include "spore/ops/shape.h"
#include "spore/tensor.h"
#include "spore/tree.h"

namespace spore {

using ops::stop_gradient;
/// stop_gradient on every tensor leaf.
TensorTree stop_gradient(const TensorTree& t);

namespace autodiff {
struct VjpResult {
  TensorTree out;
  TensorTree aux;
  /// Cotangents of the differentiated arguments, one tree per position, for a cotangent of
  /// `out` (same structure, shapes and dtypes). Can be called many times when `retain`.
  std::function<std::vector<TensorTree>(const TensorTree& cotangent)> pullback;
};
/// Runs f on args under a tape. With has_aux, f returns [out, aux].
VjpResult vjp(const char* api, const TreeFn& f, const std::vector<TensorTree>& args,
              const std::vector<int>& argnums, bool has_aux, bool retain);

struct ValueAndGrad {
  Tensor value;
  std::vector<TensorTree> grads;  // one per position
  TensorTree aux;
};
/// f must return a one-element floating tensor (or [it, aux]).
ValueAndGrad value_and_grad(const char* api, const TreeFn& f, const std::vector<TensorTree>& args,
                            const std::vector<int>& argnums, bool has_aux);

/// Forward mode: outputs and their tangents given one tangent tree per argument (None = zero).
std::pair<TensorTree, TensorTree> jvp(const char* api, const TreeFn& f, const std::vector<TensorTree>& args,
                                      const std::vector<TensorTree>& tangents);

/// Full Jacobian of a tensor function of one tensor: shape out.shape + x.shape.
Tensor jacrev(const std::function<Tensor(const Tensor&)>& f, const Tensor& x);
Tensor jacfwd(const std::function<Tensor(const Tensor&)>& f, const Tensor& x);
}  // namespace autodiff

namespace autodiff_detail {
template <class T>
inline constexpr bool is_pair_v = false;
template <class A, class B>
inline constexpr bool is_pair_v<std::pair<A, B>> = true;

template <class T>
using arg_t = std::decay_t<T>;

template <class T>
T from_tree(const TensorTree& t) {
  if constexpr (std::is_same_v<T, Tensor>) return t.tensor();
  else if constexpr (std::is_same_v<T, std::vector<Tensor>>) return t.leaves();
  else return t;
}

template <class R>
TensorTree result_tree(R&& r) {
  if constexpr (is_pair_v<std::decay_t<R>>) return TensorTree{TensorTree(r.first), TensorTree(r.second)};
  else return TensorTree(std::forward<R>(r));
}

template <class F, class... Args, size_t... I>
auto call_tree(const F& f, const std::vector<TensorTree>& t, std::index_sequence<I...>) {
  return f(from_tree<arg_t<Args>>(t[I])...);
}

template <class... Args, class F>
autodiff::TreeFn tree_fn(F f) {
  static_assert(((std::is_same_v<arg_t<Args>, Tensor> || std::is_same_v<arg_t<Args>, TensorTree>) && ...),
                "transformed functions take Tensor or TensorTree arguments");
  return [f](const std::vector<TensorTree>& t) {
    return result_tree(call_tree<F, Args...>(f, t, std::index_sequence_for<Args...>{}));
  };
}

/// The gradient's type: a Tensor when one position is asked and every argument is a Tensor.
template <class... Args>
inline constexpr bool all_tensors_v = (std::is_same_v<arg_t<Args>, Tensor> && ...);

template <class... Args>
auto one_grad(std::vector<TensorTree>&& g) {
  if constexpr (all_tensors_v<Args...>) return g[0].tensor();
  else return std::move(g[0]);
}
template <class... Args>
auto many_grads(std::vector<TensorTree>&& g) {
  if constexpr (all_tensors_v<Args...>) {
    std::vector<Tensor> out;
    for (auto& t : g) out.push_back(t.tensor());
    return out;
  } else {
    return std::move(g);
  }
}

// The one implementation behind grad and value_and_grad: kMany picks the gradient type (one
// position or a list), kValue whether the value is returned; an aux output rides along.
template <bool kMany, bool kValue, class F>
auto grad_fn(F f, std::vector<int> argnums) {
  constexpr const char* name = kValue ? "value_and_grad" : "grad";
  return [f = std::move(f), argnums = std::move(argnums),
          core = std::make_shared<transforms::JitCore>(name)](const auto&... args) {
    using R = std::decay_t<std::invoke_result_t<const F&, const decltype(args)&...>>;
    constexpr bool aux = is_pair_v<R>;
    // [value, [gradients...], aux] as one tree, so Graph mode can compile the whole call.
    autodiff::TreeFn run = [&](const std::vector<TensorTree>& a) {
      auto r = autodiff::value_and_grad(name, tree_fn<decltype(args)...>(f), a, argnums, aux);
      return TensorTree(std::vector<TensorTree>{TensorTree(r.value), TensorTree(r.grads), r.aux});
    };
    const TensorTree out = transforms::run_in_mode(core, run, {TensorTree(args)...});
    std::vector<TensorTree> grads;
    for (size_t i = 0; i < out[1].size(); ++i) grads.push_back(out[1][i]);
    auto g = [&] {
      if constexpr (kMany) return many_grads<decltype(args)...>(std::move(grads));
      else return one_grad<decltype(args)...>(std::move(grads));
    }();
    if constexpr (kValue && aux) return std::make_tuple(out[0].tensor(), std::move(g), out[2]);
    else if constexpr (kValue) return std::make_pair(out[0].tensor(), std::move(g));
    else if constexpr (aux) return std::make_pair(std::move(g), out[2]);
    else return g;
  };
}
}  // namespace autodiff_detail

/// The gradient of a scalar function with respect to argument `argnum` (MindSpore's
/// grad_position): `grad(f)(x)`, `grad(f, 1)(x, y)`. The gradient has the argument's type
/// (a Tensor when every argument is a Tensor, else a TensorTree). When f returns
/// std::pair<Tensor, TensorTree>, the result is std::pair<gradient, aux>.
template <class F>
auto grad(F f, int argnum = 0) {
  return autodiff_detail::grad_fn<false, false>(std::move(f), {argnum});
}
/// Gradients with respect to several arguments: a std::vector<Tensor> (every argument a Tensor)
/// or a std::vector<TensorTree>, one per position.
template <class F>
auto grad(F f, std::vector<int> argnums) {
  return autodiff_detail::grad_fn<true, false>(std::move(f), std::move(argnums));
}
/// The value and the gradient: std::pair<Tensor, G> (G as for grad), or
/// std::tuple<Tensor, G, TensorTree aux> when f has an auxiliary output.
template <class F>
auto value_and_grad(F f, int argnum = 0) {
  return autodiff_detail::grad_fn<false, true>(std::move(f), {argnum});
}
template <class F>
auto value_and_grad(F f, std::vector<int> argnums) {
  return autodiff_detail::grad_fn<true, true>(std::move(f), std::move(argnums));
}

/// f's output and a pullback: `auto [y, pb] = vjp(f, x); auto dx = pb(dy);` The pullback takes a
/// cotangent of y's type and returns the arguments' cotangents (a Tensor for one Tensor
/// argument, else a std::vector<TensorTree>); it may be called many times.
template <class F, class... Args>
auto vjp(F f, const Args&... args) {
  using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
  std::vector<int> all;
  for (int i = 0; i < static_cast<int>(sizeof...(Args)); ++i) all.push_back(i);
  auto r = autodiff::vjp("vjp", autodiff_detail::tree_fn<Args...>(f), {TensorTree(args)...}, all, false, true);
  auto pb = [p = std::move(r.pullback)](const R& ct) {
    auto g = p(TensorTree(ct));
    if constexpr (sizeof...(Args) == 1 && autodiff_detail::all_tensors_v<Args...>) return g[0].tensor();
    else return g;
  };
  return std::make_pair(autodiff_detail::from_tree<R>(r.out), std::move(pb));
}

/// Forward mode: (f(x), the directional derivative of f at x along t). x and t are a Tensor or
/// a TensorTree of the same structure; f returns a Tensor or a TensorTree.
template <class F, class X>
auto jvp(F f, const X& x, const X& t) {
  using R = std::decay_t<std::invoke_result_t<const F&, const X&>>;
  auto [y, ty] = autodiff::jvp("jvp", autodiff_detail::tree_fn<X>(f), {TensorTree(x)}, {TensorTree(t)});
  return std::make_pair(autodiff_detail::from_tree<R>(y), autodiff_detail::from_tree<R>(ty));
}

/// The Jacobian of a Tensor -> Tensor function, by reverse mode (one pullback per output
/// element) or forward mode (one jvp per input element): shape f(x).shape + x.shape.
template <class F>
auto jacrev(F f) {
  return [f, core = std::make_shared<transforms::JitCore>("jacrev")](const Tensor& x) {
    return transforms::run_in_mode(core, [&](const std::vector<TensorTree>& a) { return TensorTree(autodiff::jacrev(f, a[0].tensor())); },
                                   {TensorTree(x)})
        .tensor();
  };
}
template <class F>
auto jacfwd(F f) {
  return [f, core = std::make_shared<transforms::JitCore>("jacfwd")](const Tensor& x) {
    return transforms::run_in_mode(core, [&](const std::vector<TensorTree>& a) { return TensorTree(autodiff::jacfwd(f, a[0].tensor())); },
                                   {TensorTree(x)})
        .tensor();
  };
}
/// The Hessian of a scalar function of one tensor: jacfwd(jacrev(f)), shape x.shape + x.shape.
template <class F>
auto hessian(F f) {
  return jacfwd([f](const Tensor& x) { return autodiff::jacrev(f, x).reshape(x.shape()); });
}
/// The Hessian-vector product H(x)·v of a scalar function, by forward-over-reverse (jvp of grad):
/// never forms H.
template <class F>
Tensor hvp(F f, const Tensor& x, const Tensor& v) {
  return jvp(grad(f), x, v).second;
}

}  // namespace spore
