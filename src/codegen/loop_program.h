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
#include <optional>
#include <span>
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
  // Row programs only (below):
  Reduce,     // accumulator[slot] = ReduceCode(code)(accumulator[slot], a over this tile's elements)
  Result,     // dst = accumulator[slot] (a row segment: this row's finished reduction)
  Splat,      // dst = row register a, the same for every element of this row's tile
};

/// What a Reduce instruction folds its row into (reduce_mean divides the sum by the row length
/// when the row is finished).
enum class ReduceCode : uint8_t { sum, mean, max, min };

/// A row's reduction folds chunks of this many elements, each by the unfused reductions' vector
/// loop, combined in order: the unfused reduce_sum's order on a contiguous row (its kChunk), so
/// fused and unfused sums agree bit for bit.
inline constexpr int64_t kRowFoldChunk = 8192;

/// A row program's straight-line pieces, run in order for each row (see LoopProgram).
struct Segment {
  bool per_row = false;  // true: once per row (row registers); false: over the row's elements
  int32_t begin = 0, end = 0;  // instruction range in LoopProgram::code
};

/// One register instruction. Registers are indices into the program's register file.
struct Instr {
  InstrKind kind = InstrKind::Load;
  uint8_t code = 0;
  int32_t dst = -1;
  int32_t a = -1, b = -1, c = -1;
  int32_t slot = -1;    // Load: input index; Store: output index; Reduce, Result: accumulator
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
  /// (never reused either), then the body in the sub-graph's order, then the stores. (A row
  /// program orders and reuses registers per segment instead: see row_dims.)
  std::vector<Instr> code;
  int32_t num_registers = 0;
  /// Relative arithmetic cost of one element (1 per simple op, more for transcendental ones),
  /// for the schedule's threading threshold.
  int32_t cost = 0;

  /// A row program (row_dims > 0) holds reductions over the iteration shape's last row_dims
  /// dims (keepdims), read back by later ops: softmax, layer_norm and their gradients in one
  /// pass over memory. The iteration shape S is the inputs' broadcast shape, a row its last
  /// row_dims dims; values are either per element or per row (shape S with the row dims 1).
  /// For each row the segments run in order: a per-row segment computes row values (loads of
  /// per-row inputs, literals, ops on them, finished reductions as Result, stores of per-row
  /// outputs), an element segment walks the row in tiles (loads, ops, row values as Splat,
  /// Reduce into accumulators, stores of per-element outputs). An element value a later
  /// segment needs is computed again there (from the inputs, which are still in cache), so
  /// element registers never outlive their segment; row registers do. Row outputs have shape S
  /// with the row dims 1. 0 is an elementwise program: one element segment, no segments listed.
  int32_t row_dims = 0;
  std::vector<Segment> segments;
  int32_t num_accumulators = 0;
  std::vector<ReduceCode> accumulators;  // per accumulator
  std::vector<bool> row_output;          // per output: stored once per row

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
/// A sub-graph with a row reduction (row_reduction_dims) lowers to a row program.
LoopProgram lower(const ir::Graph& g);

/// The number of trailing dims node `n` reduces when it is a reduction a row program can hold
/// (reduce_sum / reduce_mean / reduce_max / reduce_min over the last dims of a float operand,
/// keepdims, not all of them of size 1), else 0.
int row_reduction_dims(const ir::Node& n, std::span<const ir::Type> input_types);

namespace detail {
/// Node k of `g` as an instruction (registers unset; its cost added to *cost), or nullopt when
/// it is an alias of its first operand (copy, casts that keep the value). Throws when the loop
/// program cannot express it.
std::optional<Instr> op_instr(const ir::Graph& g, size_t k, int32_t* cost);
/// lower() for a sub-graph holding row reductions (row_program.cc).
LoopProgram lower_rows(const ir::Graph& g);
}  // namespace detail

}  // namespace spore::codegen
