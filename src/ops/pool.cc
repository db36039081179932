// SPDX-License-Identifier: Apache-2.0
// Public 2-D pooling ops: max_pool2d (with or without indices), avg_pool2d,
// adaptive_avg_pool2d. (C, H, W) inputs are treated as a batch of one, as in PyTorch.
#include "ops/promote.h"
#include "prims/pool.h"
#include "runtime/dispatch.h"
#include "spore/ops/nn.h"
#include "spore/ops/shape.h"

namespace spore::ops {
namespace {

prims::IntList two(const char* op, const char* what, const std::vector<int64_t>& v, int64_t min) {
  SPORE_CHECK(v.size() == 1 || v.size() == 2, "[", op, "] ", what, " needs 1 or 2 values, got ", v.size());
  prims::IntList r = {v[0], v.size() == 2 ? v[1] : v[0]};
  for (int64_t x : r) SPORE_CHECK(x >= min, "[", op, "] ", what, " must be >= ", min, ", got ", x);
  return r;
}

Tensor batched(const char* op, const Tensor& x) {
  SPORE_CHECK(x.defined(), "[", op, "] input is an undefined tensor");
  SPORE_CHECK(x.dim() == 3 || x.dim() == 4, "[", op, "] needs a (N, C, H, W) or (C, H, W) input, got ",
              shape_str(x.shape()));
  SPORE_CHECK(is_floating(x.dtype()), "[", op, "] needs a floating tensor, got ", dtype_name(x.dtype()),
              "; cast to float32 first");
  return x.dim() == 3 ? unsqueeze(x, 0) : x;
}

prims::Pool2dAttrs pool_attrs(const char* op, const Tensor& x, const PoolOptions& o, prims::PoolKind kind) {
  prims::Pool2dAttrs a;
  a.kind = kind;
  a.kernel = two(op, "kernel", o.kernel, 1);
  a.stride = o.stride.empty() ? a.kernel : two(op, "stride", o.stride, 1);
  a.padding = two(op, "padding", o.padding, 0);
  a.ceil_mode = o.ceil_mode;
  a.count_include_pad = o.count_include_pad;
  for (int i = 0; i < 2; ++i) {
    SPORE_CHECK(2 * a.padding[i] <= a.kernel[i], "[", op, "] padding ", a.padding[i],
                " must be at most half the kernel size ", a.kernel[i]);
    SPORE_CHECK(prims::pool_out_size(x.shape()[x.dim() - 2 + i], a.kernel[i], a.stride[i], a.padding[i],
                                     a.ceil_mode) >= 1,
                "[", op, "] input ", shape_str(x.shape()), " is too small for kernel ", a.kernel[0], "x", a.kernel[1],
                " with padding ", a.padding[i]);
  }
  return a;
}

std::pair<Tensor, Tensor> pool(const char* op, const Tensor& x, const PoolOptions& o, prims::PoolKind kind,
                               bool indices) {
  Tensor xb = batched(op, x);
  // As in PyTorch only the batch may be empty: a window over nothing has no max (and padding
  // would make one up from -inf or 0), so empty channels or spatial dims are refused.
  for (int64_t d = x.dim() - 3; d < x.dim(); ++d)
    SPORE_CHECK(x.shape()[d] != 0, "[", op, "] input ", shape_str(x.shape()), " is empty on dim ", d,
                "; only the batch dim of a (N, C, H, W) input may be 0");
  prims::Pool2dAttrs a = pool_attrs(op, xb, o, kind);
  a.with_indices = indices;
  auto out = runtime::call_multi(prims::pool2d_primitive(), a, {xb});
  if (x.dim() == 3) return {squeeze(out[0], 0), indices ? squeeze(out[1], 0) : Tensor()};
  return {out[0], out[1]};
}

}  // namespace

Tensor max_pool2d(const Tensor& x, const PoolOptions& o) {
  return pool("max_pool2d", x, o, prims::PoolKind::Max, false).first;
}
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const PoolOptions& o) {
  return pool("max_pool2d_with_indices", x, o, prims::PoolKind::Max, true);
}
Tensor avg_pool2d(const Tensor& x, const PoolOptions& o) {
  return pool("avg_pool2d", x, o, prims::PoolKind::Avg, false).first;
}

Tensor adaptive_avg_pool2d(const Tensor& x, std::array<int64_t, 2> output_size) {
  const char* op = "adaptive_avg_pool2d";
  Tensor xb = batched(op, x);
  SPORE_CHECK(output_size[0] >= 1 && output_size[1] >= 1, "[", op, "] output_size must be positive, got (",
              output_size[0], ", ", output_size[1], ")");
  // Averaging an empty window gives 0/0; PyTorch refuses it (empty batch or channels are fine).
  for (int64_t d = x.dim() - 2; d < x.dim(); ++d)
    SPORE_CHECK(x.shape()[d] != 0, "[", op, "] input ", shape_str(x.shape()), " is empty on dim ", d,
                "; H and W must be non-zero to average over");
  Tensor y = runtime::call(prims::adaptive_avg_pool2d_primitive(),
                           prims::AdaptivePool2dAttrs{{output_size[0], output_size[1]}}, {xb});
  return x.dim() == 3 ? squeeze(y, 0) : y;
}

}  // namespace spore::ops
