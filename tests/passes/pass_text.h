// SPDX-License-Identifier: Apache-2.0
#pragma once
// Text IR in -> text IR out, for the pass unit tests: graphs are written in the text form
// (docs/mindir.md), run through one pass, and compared as printed text. The expected text is
// parsed and printed too, so it may be written with any value names.
#include <string>

#include "ir/graph.h"
#include "ir/op_info.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "transforms/ir_bridge.h"

namespace spore::passes::testing {

/// Registers the primitives, plus the test ops the primitives lack: `tstate` (effect state,
/// any types) and `tprint` (effect io: a token in, a token out).
inline void register_ops() {
  transforms::register_ir_ops();
  static const bool once = [] {
    ir::register_op("tstate", {ir::Effect::State, {}, {}, {}, {}});
    ir::register_op("tprint", {ir::Effect::IO, {}, {}, {}, {}});
    return true;
  }();
  (void)once;
}

/// Parses `text` (registering the ops first).
inline ir::GraphPtr parse(const std::string& text) {
  register_ops();
  return ir::parse_graph(text);
}

/// `text` parsed and printed back: the canonical form to compare with.
inline std::string canonical(const std::string& text) { return ir::print_graph(*parse(text)); }

/// The printed result of `pass` on the graph `text`.
template <class Pass>
std::string run_pass(Pass pass, const std::string& text) {
  return ir::print_graph(*pass(parse(text)));
}

}  // namespace spore::passes::testing
