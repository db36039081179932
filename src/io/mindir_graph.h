// SPDX-License-Identifier: Apache-2.0
#pragma once
// The IR graph in the MindIR protobuf: one message per graph, node, type and dimension, with
// attributes kept as the op's own text (OpInfo::print_attrs / parse_attrs, exact floats). Reading
// checks every reference and count before it is used, so a hostile message fails with a clear
// error instead of reaching out of bounds; the rebuilt graph then passes ir::verify.
#include <cstdint>
#include <string_view>

#include "io/mindir.pb.h"
#include "ir/graph.h"

namespace spore::io {

/// The schema version of an op's attribute text and operand layout that this build writes and
/// reads. Every primitive is at 1; bump an op's entry when its attributes change meaning, and
/// teach graph_from_proto to read the older version.
uint32_t op_schema_version(std::string_view op);

/// Writes `g` (sub-graphs nested in their nodes) into `out`.
void graph_to_proto(const ir::Graph& g, mindir::Graph* out);

/// Rebuilds and verifies a graph; throws ir::Error (or spore::Error) saying what is wrong and
/// where ("graph @main, node 3 (add): ...").
ir::GraphPtr graph_from_proto(const mindir::Graph& p);

/// ir::Type to and from its message (used for the metadata's input and output types too).
void type_to_proto(const ir::Type& t, mindir::Type* out);
ir::Type type_from_proto(const mindir::Type& p);

}  // namespace spore::io
