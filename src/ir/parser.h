// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads the text form written by print_graph (docs/mindir.md).
#include <string_view>

#include "ir/graph.h"

namespace spore::ir {

/// Parses and verifies one graph. Any malformed text, truncated or garbled, throws ir::Error
/// with the line number; attributes are parsed by the op's registered parse_attrs.
GraphPtr parse_graph(std::string_view text);

}  // namespace spore::ir
