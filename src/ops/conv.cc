// SPDX-License-Identifier: Apache-2.0
// Public convolution ops: conv1d/2d/3d and conv_transpose2d. They expand per-dim options,
// resolve padding='same', promote, and call the conv / conv_transpose primitives.
#include "ops/promote.h"
#include "prims/conv.h"
#include "runtime/dispatch.h"
#include "spore/ops/nn.h"
#include "spore/ops/shape.h"

namespace spore::ops {
namespace {

using prims::IntList;

// One value per spatial dim: a single value repeats (like PyTorch's int arguments).
IntList per_dim(const char* op, const char* what, const std::vector<int64_t>& v, int64_t nsp, int64_t min) {
  SPORE_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == nsp, "[", op, "] ", what, " needs 1 or ", nsp,
              " values, got ", v.size());
  IntList r;
  for (int64_t i = 0; i < nsp; ++i) {
    int64_t x = v.size() == 1 ? v[0] : v[i];
    SPORE_CHECK(x >= min, "[", op, "] ", what, " must be >= ", min, ", got ", x);
    r.push_back(x);
  }
  return r;
}

struct Prepared {
  Tensor x, w, bias;
  bool unbatched = false;
};

// Checks ranks and dtypes, adds the batch dim to an unbatched input, promotes.
Prepared prepare(const char* op, const Tensor& x, const Tensor& w, const Tensor& bias, int64_t nsp) {
  SPORE_CHECK(x.defined() && w.defined(), "[", op, "] x and w must be defined tensors");
  SPORE_CHECK(w.dim() == nsp + 2, "[", op, "] weight must have rank ", nsp + 2, ", got ", shape_str(w.shape()));
  SPORE_CHECK(x.dim() == nsp + 2 || x.dim() == nsp + 1, "[", op, "] input must have rank ", nsp + 2, " (batched) or ",
              nsp + 1, " (unbatched), got ", shape_str(x.shape()));
  DType t = bias.defined() ? result_type({&x, &w, &bias}) : result_type(x, w);
  SPORE_CHECK(is_floating(t), "[", op, "] needs floating tensors, got ", dtype_name(x.dtype()), " and ",
              dtype_name(w.dtype()), "; cast to float32 first");
  Prepared p;
  p.unbatched = x.dim() == nsp + 1;
  p.x = to_dtype(p.unbatched ? unsqueeze(x, 0) : x, t);
  p.w = to_dtype(w, t);
  // The bias is tiny: make it contiguous so library kernels can take it as is.
  if (bias.defined()) p.bias = to_dtype(bias, t).contiguous();
  return p;
}

Tensor finish(Tensor y, bool unbatched) { return unbatched ? squeeze(y, 0) : y; }

Tensor conv_nd(const char* op, const Tensor& x, const Tensor& w, const Tensor& bias, const ConvOptions& o, int64_t nsp) {
  Prepared p = prepare(op, x, w, bias, nsp);
  const Shape &xs = p.x.shape(), &ws = p.w.shape();
  SPORE_CHECK(o.groups >= 1, "[", op, "] groups must be >= 1, got ", o.groups);
  SPORE_CHECK(xs[1] == ws[1] * o.groups && ws[0] % o.groups == 0, "[", op, "] input ", shape_str(xs), " has ", xs[1],
              " channels but weight ", shape_str(ws), " with groups=", o.groups, " expects ", ws[1] * o.groups,
              " (weight is (out, in/groups, *kernel)); out channels ", ws[0], " must also divide by groups");
  prims::ConvAttrs a;
  a.groups = o.groups;
  a.stride = per_dim(op, "stride", o.stride, nsp, 1);
  a.dilation = per_dim(op, "dilation", o.dilation, nsp, 1);
  if (o.same) {
    for (int64_t s : a.stride)
      SPORE_CHECK(s == 1, "[", op, "] padding='same' needs stride 1, got stride ", s);
    for (int64_t i = 0; i < nsp; ++i) {  // PyTorch puts the odd element of padding on the right
      int64_t total = a.dilation[i] * (ws[i + 2] - 1);
      a.pad_l.push_back(total / 2);
      a.pad_r.push_back(total - total / 2);
    }
  } else {
    a.pad_l = a.pad_r = per_dim(op, "padding", o.padding, nsp, 0);
  }
  for (int64_t i = 0; i < nsp; ++i)
    SPORE_CHECK(xs[i + 2] + a.pad_l[i] + a.pad_r[i] >= a.dilation[i] * (ws[i + 2] - 1) + 1, "[", op, "] input ",
                shape_str(xs), " (padded by ", a.pad_l[i] + a.pad_r[i], ") is smaller than the kernel ", shape_str(ws),
                " (dilation ", a.dilation[i], ") in spatial dim ", i);
  if (bias.defined())
    SPORE_CHECK(p.bias.dim() == 1 && p.bias.shape()[0] == ws[0], "[", op, "] bias must have shape (", ws[0],
                "), got ", shape_str(p.bias.shape()));
  Tensor y = p.bias.defined() ? runtime::call(prims::conv_primitive(), a, {p.x, p.w, p.bias})
                              : runtime::call(prims::conv_primitive(), a, {p.x, p.w});
  return finish(y, p.unbatched);
}

}  // namespace

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvOptions& o) {
  return conv_nd("conv1d", x, w, bias, o, 1);
}
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvOptions& o) {
  return conv_nd("conv2d", x, w, bias, o, 2);
}
Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvOptions& o) {
  return conv_nd("conv3d", x, w, bias, o, 3);
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvOptions& o,
                        std::vector<int64_t> output_padding) {
  const char* op = "conv_transpose2d";
  Prepared p = prepare(op, x, w, bias, 2);
  const Shape &xs = p.x.shape(), &ws = p.w.shape();
  SPORE_CHECK(!o.same, "[", op, "] padding='same' is not supported for transposed convolution");
  SPORE_CHECK(o.groups >= 1 && ws[0] % o.groups == 0 && xs[1] == ws[0], "[", op, "] input ", shape_str(xs), " has ",
              xs[1], " channels but weight ", shape_str(ws), " (in, out/groups, *kernel) with groups=", o.groups,
              " expects ", ws[0], " input channels divisible by groups");
  prims::ConvTransposeAttrs a;
  a.groups = o.groups;
  a.stride = per_dim(op, "stride", o.stride, 2, 1);
  a.padding = per_dim(op, "padding", o.padding, 2, 0);
  a.dilation = per_dim(op, "dilation", o.dilation, 2, 1);
  a.output_padding = per_dim(op, "output_padding", output_padding, 2, 0);
  for (int i = 0; i < 2; ++i)
    SPORE_CHECK(a.output_padding[i] < std::max(a.stride[i], a.dilation[i]), "[", op, "] output_padding ",
                a.output_padding[i], " must be smaller than stride ", a.stride[i], " or dilation ", a.dilation[i]);
  if (bias.defined())
    SPORE_CHECK(p.bias.dim() == 1 && p.bias.shape()[0] == ws[1] * o.groups, "[", op, "] bias must have shape (",
                ws[1] * o.groups, "), got ", shape_str(p.bias.shape()));
  Tensor y = p.bias.defined() ? runtime::call(prims::conv_transpose_primitive(), a, {p.x, p.w, p.bias})
                              : runtime::call(prims::conv_transpose_primitive(), a, {p.x, p.w});
  return finish(y, p.unbatched);
}

}  // namespace spore::ops
