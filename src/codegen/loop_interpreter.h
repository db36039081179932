// SPDX-License-Identifier: Apache-2.0
#pragma once
// The loop program's interpreter: the reference for generated kernels and the fallback when no
// host compiler is present (shared/ARCHITECTURE.md, "Kernel generation"). It walks the output in
// tiles (schedule.h); per tile each instruction is one vectorized loop over the whole tile
// (tile_ops.h), so dispatch costs once per tile, not per element.
#include <span>

#include "codegen/loop_program.h"
#include "codegen/schedule.h"
#include "core/primitive.h"

namespace spore::codegen {

/// Runs `p` under `s`. `in[i]` has dtype p.inputs[i] and any strides, broadcast (right-aligned)
/// to the output shape; every `out[j]` is contiguous, of dtype p.outputs[j], with that shape.
/// A row program's `out[j]` has the iteration shape, or (p.row_output[j]) that shape with the
/// row dims 1; both contiguous (row-major).
void run_loop_program(const LoopProgram& p, const Schedule& s, std::span<const Buffer> in, std::span<const Buffer> out);

namespace detail {
/// run_loop_program for row programs (row_interpreter.cc).
void run_row_program(const LoopProgram& p, const Schedule& s, std::span<const Buffer> in, std::span<const Buffer> out);
}  // namespace detail

}  // namespace spore::codegen
