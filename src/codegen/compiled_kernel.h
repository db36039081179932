// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fused node's compiled kernel: requested from the host compiler (compiler.h) with the other
// fused nodes of its plan when the plan is lowered (one translation unit per graph), else on the
// node's first call; built in the background, and used for every call after it is ready; until then,
// and for ever when the program cannot be emitted or no compiler is present, the caller runs
// the loop interpreter.
#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "codegen/emit_cpp.h"
#include "codegen/loop_program.h"
#include "core/primitive.h"

namespace spore::codegen {

/// Elements per work item of an emitted kernel (a chunk of a row, or of a block of rows).
inline constexpr int64_t kEmitTile = 1024;
/// Rows per work item when an input is read across the rows (a transposed view): 16 floats are
/// one cache line. Divides kEmitTile.
inline constexpr int64_t kEmitBlockRows = 16;

class CompiledKernel;
/// One kernel to build in a shared translation unit: a fused node's program and its kernel slot.
struct UnitKernel {
  const LoopProgram* program = nullptr;
  CompiledKernel* kernel = nullptr;
};

/// Requests one translation unit, compiled in the background, for every kernel of `kernels`
/// that was not requested yet and can be emitted: a compiled plan's fused nodes cost one host
/// compiler run per graph, not one per node (identical programs share one kernel). Kernels not
/// listed here request their own unit on their first call.
void request_unit(std::span<const UnitKernel> kernels);

class CompiledKernel {
 public:
  /// Runs `p` with the compiled kernel when it is ready and returns true; else returns false
  /// (the caller interprets), requesting the compile on the first call.
  bool try_run(const LoopProgram& p, std::span<const Buffer> in, std::span<const Buffer> out);
  /// The compiled function, or null while there is none.
  KernelFn fn() const { return fn_->load(std::memory_order_acquire); }

 private:
  friend void request_unit(std::span<const UnitKernel> kernels);
  std::once_flag requested_;
  // Shared with the background compile, which may finish after the node is gone.
  std::shared_ptr<std::atomic<KernelFn>> fn_ = std::make_shared<std::atomic<KernelFn>>(nullptr);
};

/// Builds `p` now (synchronously, through the cache) and returns its function, or null with
/// `why` set (not emittable, no compiler, compile error). For tests and benchmarks.
KernelFn compile_now(const LoopProgram& p, std::string* why);

/// Runs `p` with its compiled function `fn` (the interpreter's calling convention and checks).
void run_compiled(KernelFn fn, const LoopProgram& p, std::span<const Buffer> in, std::span<const Buffer> out);

}  // namespace spore::codegen
