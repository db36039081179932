// SPDX-License-Identifier: Apache-2.0
#pragma once
// Dynamic dimensions for jit (automatic, as PyTorch's compiler does them): when a function
// traced at one size of its inputs is called at another, and its two traces are the same graph
// but for sizes, the graph is generalized over one symbolic dimension and serves every later
// size without tracing again; plans are lowered per size from it (symbol_binding.h).
//
// The generalization compares the two traces node by node rather than tracing with a symbol:
// no op ever sees a symbolic size, so a size folded into a value (a mean's 1/N as a literal)
// shows up as two different literals and the traces stay per size.
#include "ir/graph.h"

namespace spore::transforms {

/// One graph over a symbolic dimension `name` covering traces `a` and `b` of one function at
/// two sizes: every dimension (of a type or an attribute) equal in both stays; one that differs
/// becomes k * name + c, when the parameters' differing dimensions are all one pair of sizes
/// (A in `a`, B in `b`) and the value is k * A + c in `a` and k * B + c in `b` for integers
/// k >= 1, c >= 0. Null when the traces differ otherwise (ops, inputs, literals, sub-graphs,
/// another dimension pattern) or in no size at all.
ir::GraphPtr generalize_traces(const ir::Graph& a, const ir::Graph& b, const std::string& name);

}  // namespace spore::transforms
