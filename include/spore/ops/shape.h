// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <vector>

#include "spore/tensor.h"

namespace spore::ops {

// Views (no copy).
/// A view when the strides allow it, else a copy; one dimension may be -1.
Tensor reshape(const Tensor& x, const Shape& shape);
/// Like reshape but never copies: fails clearly if the strides do not allow a view.
Tensor view(const Tensor& x, const Shape& shape);
Tensor flatten(const Tensor& x, int64_t start_axis = 0, int64_t end_axis = -1);
Tensor transpose(const Tensor& x, int64_t a, int64_t b);
Tensor permute(const Tensor& x, const std::vector<int64_t>& axes);
/// start/stop clamp like Python slices; step > 0.
Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step = 1);
/// Index `i` of `axis`, removing that axis.
Tensor select(const Tensor& x, int64_t axis, int64_t i);
Tensor squeeze(const Tensor& x, int64_t axis);
Tensor squeeze(const Tensor& x);
Tensor unsqueeze(const Tensor& x, int64_t axis);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);

// Copies.
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0);
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0);
/// Pieces of the given sizes along `axis` (views).
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t axis = 0);
enum class PadMode { Constant, Reflect, Replicate };
/// `pads` as in PyTorch: (left, right) of the last axis first, then the axis before, ...
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, PadMode mode = PadMode::Constant, double value = 0);
Tensor flip(const Tensor& x, const std::vector<int64_t>& axes);
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& axes);
Tensor tile(const Tensor& x, const std::vector<int64_t>& reps);
Tensor repeat_interleave(const Tensor& x, int64_t repeats, int64_t axis);
Tensor gather(const Tensor& x, int64_t axis, const Tensor& index);
Tensor scatter(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);
Tensor take_along_axis(const Tensor& x, const Tensor& index, int64_t axis);
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
Tensor one_hot(const Tensor& index, int64_t num_classes);
/// (values, indices) of the k largest (or smallest) along `axis`, sorted.
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t axis = -1, bool largest = true);
/// (values, indices), stable.
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t axis = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t axis = -1, bool descending = false);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
/// Indices of non-zero elements, shape (count, rank). Eager only: the count depends on values.
Tensor nonzero(const Tensor& x);

}  // namespace spore::ops
