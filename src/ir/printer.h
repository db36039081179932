// SPDX-License-Identifier: Apache-2.0
#pragma once
// The text form of a graph (docs/mindir.md). parse_graph(print_graph(g)) equals g, and printing
// that again gives the same text.
#include <string>

#include "ir/graph.h"

namespace spore::ir {

/// Prints `g` with sub-graphs nested in their nodes; values are renumbered %0, %1, ... in
/// definition order (parameters first), so equal graphs print identically.
std::string print_graph(const Graph& g);

}  // namespace spore::ir
