// SPDX-License-Identifier: Apache-2.0
#pragma once
// ONNX operators whose output shape a run-time input holds (Reshape's shape, Expand's shape,
// ConstantOfShape, Range's limits, Tile's repeats, Slice's starts and ends, Split's sizes,
// OneHot's depth, the window generators' size). The shape arithmetic of each is traced as
// integer tensor ops, and the resulting sizes become value symbols (ops::with_sizes, shape.h)
// that the graph interpreter binds when the graph runs; the kernels check them then. Each
// mapping calls its run_time_* variant when the input is not known at import time.
#include "io/onnx/op_context.h"

namespace spore::io::onnx_detail {

/// x's sizes as an int64 1-D tensor: constants where static, a dim_value node (the symbol's
/// value when the graph runs) where symbolic.
Tensor shape_tensor(const Tensor& x);
/// A constant holding symbolic sizes (an ONNX Shape of a traced batch, and arithmetic on it) as
/// the values they take when the graph runs: a dim_value node per symbolic element.
Tensor run_time_values(const Tensor& t);
/// x, checked when the graph runs: `ok` (a bool tensor, every element) must hold, else the run
/// fails naming the node and `rule`. Known at import time, it is checked here.
Tensor checked(const OpContext& c, const Tensor& x, const Tensor& ok, const std::string& rule);
/// 0, 1, ..., n - 1 (int64) for a 0-d integer `n` known only when the graph runs, and its length
/// (a value symbol).
std::pair<Tensor, Dim> iota(const Tensor& n);

std::vector<Tensor> run_time_reshape(const OpContext& c);
std::vector<Tensor> run_time_expand(const OpContext& c);
std::vector<Tensor> run_time_constant_of_shape(const OpContext& c, const Tensor& value);
std::vector<Tensor> run_time_range(const OpContext& c);
std::vector<Tensor> run_time_tile(const OpContext& c);
std::vector<Tensor> run_time_slice(const OpContext& c);
std::vector<Tensor> run_time_split(const OpContext& c, int64_t axis);
/// Pad with run-time pads; `mode` is "constant", "edge" or "reflect"; `value` a 0-d tensor.
std::vector<Tensor> run_time_pad(const OpContext& c, const std::string& mode, const Tensor& value);
/// Window k = 0..n-1 for a run-time size, as `formula(k, d)` with d = n (periodic) or n - 1.
Tensor run_time_window_positions(const OpContext& c, Tensor& d);

}  // namespace spore::io::onnx_detail
