// SPDX-License-Identifier: Apache-2.0
#pragma once
// The `fused` primitive: one node running a group of elementwise ops as one kernel. Like a
// control-flow node it holds a closed sub-graph (the fused ops; printed nested, parsed back) and
// takes the group's external inputs as operands; its outputs are the group's values used
// outside it. Its CPU kernel runs the sub-graph's loop program (lowered once, kept in the
// attributes) compiled to machine code by the host compiler once that is ready, and on the loop
// interpreter until then (or when no compiler is present).
//
// Operands: (inputs...) -> (outputs...), the sub-graph's parameters and results, all of one
// iteration shape (the inputs broadcast to it).
#include <memory>
#include <mutex>

#include "codegen/compiled_kernel.h"
#include "codegen/loop_program.h"
#include "core/primitive.h"
#include "ir/graph.h"

namespace spore::codegen {

/// A parsed node's binding to its sub-graph, made when the node is type-checked (parse_graph
/// verifies every node): the text form keeps the sub-graph beside the attributes, which the
/// parser reads first.
struct FusedBinding {
  std::mutex mutex;
  ir::GraphPtr graph;
  std::shared_ptr<const LoopProgram> program;
};

/// A fused node's attributes. The sub-graph is also the node's one sub-graph; the text form keeps
/// it there (no printed fields), so a parsed node's attributes start empty and are bound by the
/// type check (or bind_fused()).
struct FusedAttrs {
  ir::GraphPtr graph;
  std::shared_ptr<const LoopProgram> program;  // lowered from `graph`
  std::shared_ptr<FusedBinding> binding = std::make_shared<FusedBinding>();
  /// The program compiled by the host compiler, once ready (compiled_kernel.h).
  std::shared_ptr<CompiledKernel> compiled = std::make_shared<CompiledKernel>();
  static constexpr auto fields() { return std::tuple<>(); }
};

inline constexpr const char* kFusedOp = "fused";

/// What a fused node's kernel ran, as SPORE_PROFILE=plan labels it: the compiled kernel, or the
/// loop interpreter (before the background compile is done, or without a compiler).
inline constexpr const char* kCompiledVariant = "compiled";
inline constexpr const char* kInterpretedVariant = "interpreted";

/// Whether a fused node's outputs may be written into buffers of its inputs of the same shape
/// (in-place state updates): every element of every output is stored after all of its inputs'
/// elements at the same index were read. True unless an output is an input passed through
/// (a store of a loaded register, which the interpreter reads from the input's memory after an
/// earlier store may have overwritten it).
bool fused_in_place_safe(const void* attrs);

const Primitive& fused_primitive();

/// Requests the compiled kernels of these fused nodes (their attributes) as one translation
/// unit (compiled_kernel.h, request_unit): what lower_plan does for a plan's fused steps.
void request_compiles(std::span<const void* const> fused_attrs);

/// The attributes of a fused node over `g`, its loop program lowered (throws spore::Error naming
/// the node the loop program cannot express).
std::shared_ptr<const FusedAttrs> fused_attrs(const ir::GraphPtr& g);

/// Registers the IR ops (transforms::register_ir_ops) with `fused`'s own type check: exactly one
/// sub-graph, whose parameters and results match the node's operand and output types, every op
/// of it in the loop program's table, and the attributes (when bound) holding that same graph.
/// Idempotent; the fusion pass calls it, and so should code that parses fused nodes first.
void register_fused_ir_op();

/// `n` with attributes bound to its sub-graph, or `n` itself when it is not a fused node or is
/// bound already. A parsed fused node must be bound before it runs.
ir::NodePtr bind_fused(const ir::NodePtr& n);
/// `g` with every fused node bound, sub-graphs included; `g` itself when nothing changed.
ir::GraphPtr bind_fused_nodes(const ir::GraphPtr& g);

}  // namespace spore::codegen
