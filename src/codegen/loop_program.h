// SPDX-License-Identifier: Apache-2.0
#pragma once
// The loop program of a fused group: the *what* of a generated kernel (shared/ARCHITECTURE.md,
// "Kernel generation"). The iteration space is the output shape (every output of a group has
// it); for each element, a straight-line sequence of register instructions: load an input (its
// broadcast strides are bound when the kernel runs, so one program serves every shape), a
// literal, an elementwise op, a store. How the elements are walked (tiles, vector width,
// threads) is the schedule (schedule.h), kept apart so that the interpreter and a C++ emitter
// consume the same program.
//
// Registers hold the compute dtype (float32 or float64); boolean values live in it as 0 and 1.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/tile_ops.h"
#include "ir/graph.h"
#include "spore/dtype.h"

namespace spore::codegen {

enum class InstrKind : uint8_t {
  Load,       // dst = input[slot] at this element (bool inputs become 0/1)
  Const,      // dst = imm, the same for every element (hoisted out of the tile loop)
  Unary,      // dst = cpu::UnaryOp(code)(a; pa, pb)
  Binary,     // dst = cpu::BinaryOp(code)(a, b)
  Compare,    // dst = CompareCode(code)(a, b) ? 1 : 0
  Logical,    // dst = LogicalCode(code)(a != 0, b != 0) ? 1 : 0
  Predicate,  // dst = PredicateCode(code)(a) ? 1 : 0
  Where,      // dst = a != 0 ? b : c
  Clamp,      // dst = clamp(a, b, c)
  Lerp,       // dst = lerp(a, b, c)
  Store,      // output[slot] at this element = a (as 0/1 for a bool output)
};

/// One register instruction. Registers are indices into the program's register file.
struct Instr {
  InstrKind kind = InstrKind::Load;
  uint8_t code = 0;
  int32_t dst = -1;
  int32_t a = -1, b = -1, c = -1;
  int32_t slot = -1;    // Load: input index; Store: output index
  double imm = 0;       // Const
  double pa = 0, pb = 0;  // Unary parameters (leaky_relu slope, elu alpha, softplus beta/threshold)
  /// The sub-graph node the instruction comes from (-1: a parameter or an output), for messages.
  int32_t node = -1;
};

struct LoopProgram {
  DType dtype = DType::Float32;  // the compute (register) type
  std::vector<DType> inputs;     // per input: dtype (the compute type or Bool)
  std::vector<DType> outputs;    // per output: dtype (the compute type or Bool)
  /// Loads first (one register each, never reused: the interpreter may point a load's register
  /// straight at the input, or fill it once when the input is a broadcast scalar), then literals
  /// (never reused either), then the body in the sub-graph's order, then the stores.
  std::vector<Instr> code;
  int32_t num_registers = 0;
  /// Relative arithmetic cost of one element (1 per simple op, more for transcendental ones),
  /// for the schedule's threading threshold.
  int32_t cost = 0;

  /// Readable listing, one instruction a line (tests, SPORE_DUMP_KERNELS later).
  std::string str() const;
};

/// True when `op` (an IR op name) is in the loop program's op table.
bool is_fusable_op(std::string_view op);

/// Why node `n` (with these input types) cannot be lowered, or empty when it can: the op is in
/// the table and its operands and result are float32/float64 (one of them) or bool, as the op
/// allows. Used by the fusion pass to choose nodes and by lower() to report errors.
std::string lowering_problem(const ir::Node& n, std::span<const ir::Type> input_types);

/// The float dtype (Float32 or Float64) node `n` computes in, or Bool when it touches only bools.
DType compute_dtype_of(const ir::Node& n, std::span<const ir::Type> input_types);

/// Lowers a fused group's closed sub-graph. Throws spore::Error naming the node and op that the
/// loop program cannot express (and saying which ops it can), or a graph mixing float dtypes.
LoopProgram lower(const ir::Graph& g);

}  // namespace spore::codegen
