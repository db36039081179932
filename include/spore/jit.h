// SPDX-License-Identifier: Apache-2.0
#pragma once
// Graph mode: jit(f) traces f symbolically once per input signature (shapes, dtypes, the tree
// structure and static leaves), keeps the graph and runs it on later calls. The same f runs
// eagerly without jit: nothing in the model code changes. Inside a transform (grad, jvp, vmap)
// jit passes through, so transforms see only primitives; transforms inside jit are traced into
// the graph. SPORE_LOG=jit says when and why a call traced.
//
// Captured tensors (used by f but not passed as arguments) enter the graph by reference: the
// graph reads the captured tensor object's current data on each call. A lambda that rebinds a
// captured variable to a new tensor object needs a new jit.
#include <memory>
#include <string>

#include "spore/autodiff.h"
#include "spore/mode.h"

namespace spore {

/// A function traced once per signature and run as a graph.
template <class F>
class JitFunction {
 public:
  JitFunction(F f, std::string name) : f_(std::move(f)), core_(std::make_shared<transforms::JitCore>(std::move(name))) {}

  template <class... Args>
  auto operator()(const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    TensorTree out = core_->call(autodiff_detail::tree_fn<Args...>(f_), {TensorTree(args)...});
    return autodiff_detail::from_tree<R>(out);
  }
  const transforms::JitCore& core() const { return *core_; }

 private:
  F f_;
  std::shared_ptr<transforms::JitCore> core_;
};

/// `auto fast = jit(f); fast(x, y);` — f takes Tensor or TensorTree arguments and returns a
/// Tensor or a TensorTree.
template <class F>
JitFunction<F> jit(F f, std::string name = "main") {
  return JitFunction<F>(std::move(f), std::move(name));
}

}  // namespace spore
