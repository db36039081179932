// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Folds into each float32/bfloat16 matmul (alpha = 1, its bias, if any, at beta = 1: what
/// matmul_bias leaves) the chain of elementwise ops that alone reads its result, as one
/// matmul_fused node (prims/matmul_fused.h) whose oneDNN kernel runs the chain as the GEMM's
/// post-ops: a linear layer's ReLU or GELU, a transformer's residual add, a scale by a literal.
/// The links are conv_epilogue's (passes/epilogue_chain.h) without BatchNorm. A chain keeps
/// only the post-ops the CPU kernel applies inside the product (KernelDef::fused_post_ops:
/// oneDNN's brgemm kernels, AVX-512 and up); its gemm-based matmul would run them after the
/// GEMM one pass per op, slower than the one kernel fusion makes of them, so on CPUs without
/// AVX-512 the pass forms nothing (SPORE_MATMUL_POST_OPS=always forces the post-ops). Where the
/// fusion pass would do as well or better the chain stops too, or is not formed:
///   - when only ops the fusion pass takes read its end (attention's scale before a softmax, a
///     residual add before a layer norm): the fusion group that reads the value takes the
///     links at no cost, where post-ops cost the GEMM time (measured on AVX-512);
///   - before an op whose other operand an elementwise op computes (the momentum term of an
///     optimizer update: fusion makes the update one kernel that streams every operand once,
///     where a post-op would split it in two);
///   - before an op whose result is a state update (an optimizer's new parameter): the executor
///     writes an elementwise update in place, which it cannot do for a matmul's result.
/// Level 2 (a fusion): oneDNN's smooth activations round differently from ours, within the O2
/// tolerance, and its ReLU/clip turn a NaN into the bound (as conv_epilogue.h says). Sub-graphs
/// are rewritten too. Returns `g` itself when nothing matched.
ir::GraphPtr matmul_epilogue(const ir::GraphPtr& g);

}  // namespace spore::passes
