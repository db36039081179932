// SPDX-License-Identifier: Apache-2.0
#pragma once
#include "ir/graph.h"

namespace spore::passes {

/// Rematerialization (shared/ARCHITECTURE.md, "The compiler": memory planning). A training
/// step's backward reads many forward activations long after the forward made them, and holds
/// each across the step's peak. Where such a value is a cheap elementwise function of values
/// the graph keeps alive until then anyway, its late readers get a recomputed copy made right
/// before the first of them, and the original dies after its forward readers. In a ResNet
/// block, relu(batch_norm(conv(x))) is recomputed from the conv's result, the batch
/// statistics and the affine parameters, all of which BatchNorm's backward reads later; the
/// block's output relu(bn(..) + shortcut) likewise, through its shortcut's recipe when that
/// was recomputed too.
///
/// A value qualifies when it is at least 1 MiB, not a graph output, has readers both before
/// and after a gap of at least 32 nodes, and its recipe is made of:
///   - relu, leaky_relu, neg, clamp, add, sub, mul, maximum, minimum nodes (at most 8);
///   - training batch_norm results (float32/float64), recomputed as (x - mean) * (weight /
///     sqrt(var + eps)) + bias from its mean and variance outputs: the forward kernel's formula
///     (its per-channel scale bitwise; the generated kernel may round the multiply-add apart
///     from the forward's fused one, by an ulp, within the O2 tolerance);
///   - leaves: parameters, literals and values read at or after the point of recompute, of
///     which at most 3 the value's size (each is one more full read).
/// Level 2: the fusion pass after it makes each recipe one generated kernel (one read of each
/// leaf, one write). Top level only; returns `g` itself when nothing qualified, or when
/// SPORE_REMAT=0.
ir::GraphPtr rematerialize(const ir::GraphPtr& g);

}  // namespace spore::passes
