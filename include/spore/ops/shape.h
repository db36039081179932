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

// Copies. Data-movement ops accept every dtype and any input strides (stride 0 included);
// index inputs are int64 or int32, and an index out of range is an error naming the op, the
// index, the axis and its size.
/// Joins along an existing `axis`; dtypes promote like torch.cat, and 1-D empty tensors are
/// skipped (PyTorch's legacy rule). Always a new tensor.
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0);
/// Joins equal-shaped tensors along a new `axis` (unsqueeze + concat).
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0);
/// Pieces of the given sizes along `axis` (views); the sizes must add up to the axis size.
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis = 0);
/// PyTorch's chunk: pieces of ceil(n / chunks) along `axis` (views), the last one smaller, so
/// there may be fewer than `chunks` pieces.
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t axis = 0);
/// Constant pads with `value`; Reflect mirrors without repeating the edge (pads must be smaller
/// than the axis); Replicate repeats the edge.
enum class PadMode { Constant, Reflect, Replicate };
/// `pads` as in PyTorch: (left, right) of the last axis first, then the axis before, ...
/// Negative pads crop (constant mode only).
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, PadMode mode = PadMode::Constant, double value = 0);
/// Reverses the order of elements along each of `axes` (a copy).
Tensor flip(const Tensor& x, const std::vector<int64_t>& axes);
/// Rotates elements by shifts[i] along axes[i]; with no axes, rolls the flattened tensor by
/// shifts[0] (PyTorch's rule).
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& axes);
/// Repeats the whole tensor reps[i] times along axis i (torch.tile: missing reps or dims are
/// taken as leading 1s).
Tensor tile(const Tensor& x, const std::vector<int64_t>& reps);
/// Repeats each element `repeats` times along `axis` (a 0-d input is treated as 1-D).
Tensor repeat_interleave(const Tensor& x, int64_t repeats, int64_t axis);
/// out[i][j] = x[index[i][j]][j] for axis 0 (and so on): out has the index's shape, the index
/// has x's rank and no larger size on the other axes.
Tensor gather(const Tensor& x, int64_t axis, const Tensor& index);
/// A copy of x with out[index[i][j]][j] = src[i][j] (axis 0). Duplicate indices: the last in
/// row-major order wins (deterministic; PyTorch leaves this unspecified).
Tensor scatter(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src);
/// Like scatter but adds src into x; duplicates sum in row-major index order.
Tensor scatter_add(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src);
/// The slices x[..., index[k], ...] of `axis` for a 1-D index, stacked along `axis`.
Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index);
/// torch.take_along_dim / numpy.take_along_axis: gather after broadcasting x and index
/// against each other on every axis but `axis`.
Tensor take_along_axis(const Tensor& x, const Tensor& index, int64_t axis);
/// x where mask (bool, broadcastable to x) is false, `value` (converted to x's dtype) where true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
/// int64 tensor of shape index.shape + (num_classes,); num_classes = -1 uses max(index) + 1
/// (eager only: that reads the values).
Tensor one_hot(const Tensor& index, int64_t num_classes = -1);
/// (values, indices) of the k largest (or smallest) along `axis`, sorted. NaN counts as the
/// largest value; equal values go to the lower index.
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t axis = -1, bool largest = true);
/// topk with k from a tensor (one integer): under a trace k is a value symbol, bound when the
/// graph runs (with_sizes), so the output's size along `axis` is known only then.
std::pair<Tensor, Tensor> topk(const Tensor& x, const Tensor& k, int64_t axis = -1, bool largest = true);
/// (values, indices), stable; NaN sorts last ascending and first descending, like PyTorch.
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t axis = -1, bool descending = false);
/// The indices of sort(x, axis, descending).
Tensor argsort(const Tensor& x, int64_t axis = -1, bool descending = false);
/// Lower triangle of the last two axes: keeps (i, j) with j - i <= diagonal, zeroes the rest.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
/// Upper triangle of the last two axes: keeps (i, j) with j - i >= diagonal, zeroes the rest.
Tensor triu(const Tensor& x, int64_t diagonal = 0);
/// Indices of non-zero elements (NaN counts), shape (count, rank), int64, row-major order.
/// Traced (jit), the count is a value symbol (shape.h) that the graph interpreter binds when the
/// node runs; such graphs are interpreted, not lowered to a plan. vmap refuses it (the count
/// differs per batch element).
Tensor nonzero(const Tensor& x);

/// x with sizes read from the values of `sizes` (an integer tensor, 0-d or 1-D, each >= 0), for
/// an op whose output shape a tensor's values give (a reshape to a shape held in a tensor). When
/// `sizes` has values (eagerly, or a constant in a trace) they are returned with x itself. Under
/// a trace, where they are known only when the graph runs, x comes back through a bind_sizes
/// node, with one value symbol (shape.h) per element: use the symbols as sizes of ops on the
/// returned tensor or on tensors computed from it, which orders the binding before them. Kernels
/// check such sizes when they run, since a trace cannot.
struct SizedTensor {
  Tensor x;
  Shape sizes;
};
SizedTensor with_sizes(const Tensor& x, const Tensor& sizes);

/// The same values, as a constant for every transform: no gradient or tangent flows through.
Tensor stop_gradient(const Tensor& x);

}  // namespace spore::ops
