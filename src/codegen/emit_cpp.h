// SPDX-License-Identifier: Apache-2.0
#pragma once
// The C++ emitter: a loop program (loop_program.h) becomes one C++ function with no #include,
// for the host compiler (compiler.h). The function walks "work items" (a row of the merged
// iteration space cut into chunks of `tile` elements); extents and strides are arguments, so one
// kernel serves every shape. Per chunk, inputs whose inner stride is not 1 (broadcasts, bools,
// strided views) are first staged into a contiguous buffer, like the interpreter's gather; the
// arithmetic is then one plain loop over restrict pointers, which g++ -O2 -march=native
// vectorizes. Transcendental functions are emitted as source: the same xsimd 8.1 algorithms
// (constants, fma placement) the interpreter's tile ops run, so results stay within the loop
// interpreter test's bound. Ops without a faithful port make the whole program fall back to the
// interpreter (emit_problem says which), never different math.
#include <cstdint>
#include <span>
#include <string>

#include "codegen/loop_program.h"

namespace spore::codegen {

/// Bumped whenever the emitted text or its calling convention changes (part of the cache key).
inline constexpr int kGeneratorVersion = 7;

/// Calls whose float outputs total at least this many bytes write them with non-temporal
/// (streaming) stores on AVX2/AVX-512 machines: such results are far larger than the caches, and
/// a streaming store skips reading each output line before writing it (PERF-NOTES: triad 27-31
/// GB/s plain, 36-44 GB/s streaming, 2 threads). Smaller results stay in cache for their reader.
inline constexpr long kStreamingStoreBytes = 32L << 20;

/// The emitted kernel's signature: work items [begin, end) of the merged iteration space
/// `shape[0..ndim)` (ndim >= 1), input k's element strides at strides[k * ndim + d], inputs and
/// contiguous outputs as untyped pointers, and `rows` (a divisor of the kernel's tile): the rows
/// (along dim ndim - 2) one work item covers. Item w is chunk w % chunks of row block w / chunks,
/// chunks = ceil(shape[ndim-1] / (tile / rows)), row blocks = ceil(shape[ndim-2] / rows) per
/// index of the outer dims. An output may be the same buffer as an input read at the same
/// element (an in-place update); no other overlap is allowed.
///
/// A row program's kernel (loop_program.h) takes the same arguments with other meanings: work
/// items are rows; `shape[0..ndim-1)` are the iteration shape's leading dims and shape[ndim-1]
/// its row dims merged (each input's strides must merge over them, else the interpreter runs the
/// call); `rows` is the row length; in[inputs] is the table of fold loops (compiled_kernel.cc's
/// RowFolds: the unfused reductions' vector loops). Per-row outputs hold one element per row. No
/// input may be an output.
using KernelFn = void (*)(int64_t begin, int64_t end, const int64_t* shape, int64_t ndim, const int64_t* strides,
                          const void* const* in, void* const* out, int64_t rows);

/// Why `p` cannot be emitted (the first op without a faithful port), or empty when it can.
std::string emit_problem(const LoopProgram& p);
/// Whether instruction `i` has a faithful port (the fusion pass keeps ops without one out of row
/// groups, which would otherwise stay on the interpreter for good).
bool emits(const Instr& i);

/// One kernel of a translation unit.
struct KernelDecl {
  const LoopProgram* program = nullptr;
  std::string symbol;  // the extern "C" name
  int64_t tile = 0;    // elements per work item (chunk of a row)
};

/// One translation unit holding every kernel (each must have an empty emit_problem): the math
/// helpers they use, then each kernel's body loop and entry point. No #include.
std::string emit_unit(std::span<const KernelDecl> kernels);

}  // namespace spore::codegen
