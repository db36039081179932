// SPDX-License-Identifier: Apache-2.0
#pragma once
// The execution mode and the jit cache behind it. PyNative (the default) runs every call
// eagerly; in Graph mode the outermost call of a transform (grad, value_and_grad, vmap, jacrev,
// jacfwd, hessian) made outside any trace is traced once per input signature into a graph,
// optimized and run compiled, with no change to the model code (nested transforms pass
// through into that graph). jit(f) compiles in either mode.
//
// As with jit, tensors a transformed function captures are bound by reference to the tensor
// object: rebinding a captured variable to a new tensor needs a new transformed function. A
// temporary, `grad(f)(x)` written inline, owns a fresh cache and traces on every call: keep the
// transformed function (`auto g = grad(f);`) to reuse its graph. vjp, jvp and hvp are direct
// calls with no function object to own a cache, and run eagerly.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "spore/tree.h"

namespace spore {

/// How the outermost calls run: eagerly (PyNative, the default) or compiled (Graph).
enum class Mode : uint8_t { PyNative, Graph };
void set_context(Mode mode);
Mode get_mode();

namespace autodiff {
/// The type-erased function every transform works on: arguments and result as trees.
using TreeFn = std::function<TensorTree(const std::vector<TensorTree>&)>;
}  // namespace autodiff

namespace transforms {
/// The type-erased cache behind jit: one traced graph per signature.
class JitCore {
 public:
  explicit JitCore(std::string name);
  ~JitCore();
  TensorTree call(const autodiff::TreeFn& f, const std::vector<TensorTree>& args);
  /// Number of traces so far (one per distinct signature).
  int traces() const;
  /// Number of times the pass pipeline ran: once per signature, except that sizes served by a
  /// graph over a symbolic dimension (a dynamic batch) share its one run.
  int optimizations() const;
  /// The text form of the graph run for the last call's signature: traced, then optimized by
  /// the pass pipeline (SPORE_OPT_LEVEL; 0 shows the trace as it is).
  std::string last_graph_text() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// True in Graph mode when no trace or tape is open in this thread: a transform called now is
/// an outermost call and runs compiled.
bool compiles_here();
/// Traces made by every jit cache of the process (Graph-mode transforms included).
int64_t total_traces();
/// True while a trace (jit, a Graph-mode transform, a control-flow body) records on this
/// thread: ops then add graph nodes instead of computing.
bool tracing();

/// Runs `run` on `args`: through `core` (traced once per signature, compiled) when
/// compiles_here(), else eagerly.
inline TensorTree run_in_mode(const std::shared_ptr<JitCore>& core, const autodiff::TreeFn& run,
                              const std::vector<TensorTree>& args) {
  return compiles_here() ? core->call(run, args) : run(args);
}
}  // namespace transforms

}  // namespace spore
