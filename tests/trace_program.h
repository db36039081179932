// SPDX-License-Identifier: Apache-2.0
#pragma once
// Tests' one way to turn a C++ function of tensors into a graph: a top-level symbolic trace with
// every argument a data input and state allowed (BatchNorm statistics become state outputs).
#include <functional>
#include <vector>

#include "autodiff/frames.h"
#include "runtime/dispatch.h"
#include "spore/spore.h"
#include "transforms/trace.h"

namespace spore::testing {

using ProgramFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct TracedProgram {
  ir::GraphPtr graph;
  std::vector<Tensor> inputs;  // what to run the graph on: the arguments, then the captured tensors
};

inline TracedProgram trace_program(const ProgramFn& f, const std::vector<Tensor>& inputs) {
  transforms::SymbolicTrace st("main");
  st.allow_state();
  std::vector<Tensor> outs;
  {
    autodiff::FrameGuard open(&st);
    std::vector<Tensor> sym;
    for (const Tensor& x : inputs) sym.push_back(st.input(runtime::type_of(x)));
    outs = f(sym);
  }
  TracedProgram t{st.finish(outs), inputs};
  t.inputs.insert(t.inputs.end(), st.captured().begin(), st.captured().end());
  return t;
}

}  // namespace spore::testing
