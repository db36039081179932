// SPDX-License-Identifier: Apache-2.0
#pragma once
// A fused node's compiled kernel: requested from the host compiler (compiler.h) on the node's
// first call, built in the background, and used for every call after it is ready; until then,
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

class CompiledKernel {
 public:
  /// Runs `p` with the compiled kernel when it is ready and returns true; else returns false
  /// (the caller interprets), requesting the compile on the first call.
  bool try_run(const LoopProgram& p, std::span<const Buffer> in, std::span<const Buffer> out);
  /// The compiled function, or null while there is none.
  KernelFn fn() const { return fn_->load(std::memory_order_acquire); }

 private:
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
