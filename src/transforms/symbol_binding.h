// SPDX-License-Identifier: Apache-2.0
#pragma once
// A graph with symbolic input dimensions (an ONNX file's batch, a jit function's dynamic
// dimensions) runs at each call's sizes: its symbols are bound from the inputs, and substituted
// into the shape attributes of its nodes. The interpreter and the plan lowering both do this.
#include <map>
#include <memory>
#include <span>

#include "core/primitive.h"
#include "ir/graph.h"
#include "spore/tensor.h"

namespace spore::transforms {

/// Symbol -> the size the call gives it.
using SymbolSizes = std::map<Dim, int64_t>;

/// The sizes `inputs` give `g`'s symbolic parameter dimensions. Throws spore::Error (naming
/// `who`) when one symbol gets two sizes.
SymbolSizes bind_symbols(const ir::Graph& g, std::span<const Tensor> inputs, const char* who);

/// The sizes bound by the graph whose control-flow node is running on this thread (the
/// interpreter's; null outside one): what a body sees beside its own parameters' symbols.
const SymbolSizes* enclosing_sizes();

/// `attrs` of `p` with the bound sizes substituted; null when there is nothing to substitute
/// (no symbols bound, no attributes, or no dimension of them names a bound symbol).
std::shared_ptr<const void> bind_attrs(const Primitive& p, const void* attrs, const SymbolSizes& sizes);

}  // namespace spore::transforms
