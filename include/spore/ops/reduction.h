// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reductions, with PyTorch's semantics. Axes may be negative; an empty list means every axis;
// listing an axis twice is an error. `keepdims` keeps reduced axes as size 1. 16-bit floats
// accumulate in float32. Results never depend on the thread count (fixed chunks combined in a
// fixed order).
#include <vector>

#include "spore/tensor.h"

namespace spore::ops {

/// Axes to reduce; empty means all axes.
using Axes = std::vector<int64_t>;

/// Sum; bool and integer inputs sum in int64 (as PyTorch). The sum of nothing is 0.
Tensor sum(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
/// Arithmetic mean; floating-point inputs only (as PyTorch). The mean of nothing is NaN.
Tensor mean(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
/// Product; bool and integer inputs multiply in int64. The product of nothing is 1.
Tensor prod(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
/// Maximum, NaN-propagating. Reducing a zero-size extent into a non-empty result is an error.
Tensor amax(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
/// Minimum, NaN-propagating; same empty rule as amax.
Tensor amin(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
/// Index of the first maximum along `axis` (int64); a NaN counts as the maximum. Not for bool.
Tensor argmax(const Tensor& x, int64_t axis, bool keepdims = false);
/// Index of the first maximum of the flattened tensor (a 0-d int64); `x` must be non-empty.
Tensor argmax(const Tensor& x);
/// Index of the first minimum along `axis` (int64); a NaN counts as the minimum. Not for bool.
Tensor argmin(const Tensor& x, int64_t axis, bool keepdims = false);
/// Index of the first minimum of the flattened tensor (a 0-d int64); `x` must be non-empty.
Tensor argmin(const Tensor& x);
/// Variance with Bessel-style `correction` (1 = unbiased): sum((x - mean)^2) / max(0, n - correction),
/// computed in two passes for accuracy. Floating-point inputs only.
Tensor var(const Tensor& x, const Axes& axes = {}, int64_t correction = 1, bool keepdims = false);
/// Standard deviation: sqrt(var(x, axes, correction)).
Tensor std(const Tensor& x, const Axes& axes = {}, int64_t correction = 1, bool keepdims = false);
/// log(sum(exp(x))) computed stably (shifted by the maximum); integers and bool give float32.
Tensor logsumexp(const Tensor& x, const Axes& axes, bool keepdims = false);
/// True where every element is non-zero (bool result for every input dtype).
Tensor all(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
/// True where some element is non-zero (bool result for every input dtype).
Tensor any(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
/// Inclusive running sum along `axis`; integers and bool give int64.
Tensor cumsum(const Tensor& x, int64_t axis);
/// Inclusive running product along `axis`; integers and bool give int64.
Tensor cumprod(const Tensor& x, int64_t axis);
/// Vector p-norm over `axes`, p in {1, 2, inf} (use INFINITY for inf); floating-point inputs only.
Tensor norm(const Tensor& x, double p = 2.0, const Axes& axes = {}, bool keepdims = false);

}  // namespace spore::ops
