// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <vector>

#include "spore/tensor.h"

namespace spore::ops {

/// Axes to reduce; empty means all axes.
using Axes = std::vector<int64_t>;

/// Sum; bool and integer inputs sum in int64 (as PyTorch).
Tensor sum(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
Tensor mean(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
Tensor prod(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
Tensor amax(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
Tensor amin(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
/// Index of the first maximum along `axis` (int64); over the flattened tensor when axis is absent.
Tensor argmax(const Tensor& x, int64_t axis, bool keepdims = false);
Tensor argmax(const Tensor& x);
Tensor argmin(const Tensor& x, int64_t axis, bool keepdims = false);
Tensor argmin(const Tensor& x);
/// Variance with Bessel-style `correction` (1 = unbiased).
Tensor var(const Tensor& x, const Axes& axes = {}, int64_t correction = 1, bool keepdims = false);
Tensor std(const Tensor& x, const Axes& axes = {}, int64_t correction = 1, bool keepdims = false);
Tensor logsumexp(const Tensor& x, const Axes& axes, bool keepdims = false);
Tensor all(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
Tensor any(const Tensor& x, const Axes& axes = {}, bool keepdims = false);
Tensor cumsum(const Tensor& x, int64_t axis);
Tensor cumprod(const Tensor& x, int64_t axis);
/// Vector p-norm, p in {1, 2, inf} (use INFINITY for inf).
Tensor norm(const Tensor& x, double p = 2.0, const Axes& axes = {}, bool keepdims = false);

}  // namespace spore::ops
