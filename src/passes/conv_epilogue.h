// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Folds into each convolution the chain of elementwise ops that alone reads its result, as
/// one conv_fused node (prims/conv_fused.h) whose oneDNN kernel runs the chain as post-ops: the
/// conv writes its result once, already activated, instead of every op reading and writing the
/// whole tensor again. A link of the chain is, reading the running value v of the conv's shape
/// and dtype and making another:
///   - a unary float op (relu, relu6, leaky_relu, sigmoid, silu, gelu, hardswish, ...);
///   - add/sub/mul/div/maximum/minimum of v and a literal, or of v and an operand that
///     broadcasts to v without growing it (a bias (C, 1, 1), a residual of v's shape);
///   - inference batch_norm of v (float32/float64), folded into v * scale + shift with the
///     per-channel scale = weight / sqrt(running_var + eps) and shift = bias - running_mean *
///     scale computed by small new nodes (C elements each, every call; the fusion pass after
///     this one groups them);
///   - clamp of v by literal bounds (as maximum then minimum).
/// The chain stops at a value with another use or that is a graph output. Sub-graphs are
/// rewritten too. Level 2 (it is fusion): the BatchNorm fold and oneDNN's smooth activations
/// round differently from the unfused kernels, within the O2 tolerance; and oneDNN's ReLU, clip,
/// min and max are max/min instructions, so at O2 a NaN reaching them becomes the bound (0 for
/// ReLU) where O1 and PyNative propagate it, as the fused convs of ONNX Runtime and of PyTorch's
/// oneDNN path do. Returns `g` itself when nothing matched.
ir::GraphPtr conv_epilogue(const ir::GraphPtr& g);

}  // namespace spore::passes
