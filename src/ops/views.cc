// SPDX-License-Identifier: Apache-2.0
// Public view ops: reshape/view, transpose/permute, slice/select, squeeze/unsqueeze,
// expand/broadcast_to, flatten, diagonal. All are views of the input (reshape copies only when
// the strides do not allow a view).
#include <algorithm>

#include "core/attrs.h"
#include "ops/promote.h"
#include "prims/views.h"
#include "runtime/dispatch.h"
#include "spore/ops/elementwise.h"
#include "spore/ops/shape.h"

namespace spore::ops {

namespace {
Shape infer_reshape(const Tensor& x, const Shape& shape, const char* op) {
  Shape s = shape;
  int infer = -1;
  Dim known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      SPORE_CHECK(infer < 0, "[", op, "] only one dimension can be -1, got ", shape_str(shape));
      infer = static_cast<int>(i);
    } else {
      // Symbolic sizes come only from traced tensors' shapes, never as arbitrary huge negatives.
      SPORE_CHECK(s[i] >= 0 || is_symbol_id(s[i]), "[", op, "] invalid size ", s[i], " in ", shape_str(shape));
      known = dim_mul(known, s[i]);
    }
  }
  const Dim n = numel_of(x.shape());
  if (infer >= 0 && (is_symbolic(n) || is_symbolic(known))) {
    // A traced tensor with a symbolic size: -1 is the symbolic quotient (batch * 512 // 512 is batch).
    SPORE_CHECK(known != 0, "[", op, "] cannot infer -1 in ", shape_str(shape), " with a zero-size dimension");
    s[infer] = dim_floordiv(n, known);
  } else if (infer >= 0) {
    SPORE_CHECK(known != 0 && n % known == 0, "[", op, "] cannot reshape ", shape_str(x.shape()), " (", n,
                " elements) to ", shape_str(shape));
    s[infer] = n / known;
  }
  return s;
}
}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  Shape s = infer_reshape(x, shape, "reshape");
  Dim n = 1;
  for (Dim d : s) n = dim_mul(n, d);
  // A size that a tensor's values give (a value symbol) is checked by the kernel call.
  SPORE_CHECK(n == numel_of(x.shape()) || is_value_size(n) || is_value_size(numel_of(x.shape())),
              "[reshape] cannot reshape ", shape_str(x.shape()), " (",
              dim_str(numel_of(x.shape())), " elements) to ", shape_str(shape), " (", dim_str(n), " elements)");
  // Symbolic sizes (a traced batch, a value symbol) cannot be multiplied out to compare strides:
  // such a traced value views as any shape when it is contiguous (its strides count a symbolic
  // size as 1, contiguous_strides), and is copied first when it is not.
  const bool symbolic = std::any_of(x.shape().begin(), x.shape().end(), is_symbolic) || std::any_of(s.begin(), s.end(), is_symbolic);
  const bool viewable = symbolic ? x.strides() == contiguous_strides(x.shape()) : prims::view_strides(x.shape(), x.strides(), s).has_value();
  if (!viewable) return runtime::call(prims::reshape_primitive(), prims::ReshapeAttrs{s}, {copy(x)});
  return runtime::call(prims::reshape_primitive(), prims::ReshapeAttrs{s}, {x});
}

Tensor view(const Tensor& x, const Shape& shape) {
  Shape s = infer_reshape(x, shape, "view");
  SPORE_CHECK(x.device().type == DeviceType::Meta || prims::view_strides(x.shape(), x.strides(), s).has_value(),
              "[view] cannot view a tensor of shape ", shape_str(x.shape()), " and strides ", shape_str(x.strides()),
              " as ", shape_str(s), "; call reshape() (copies) or contiguous() first");
  return runtime::call(prims::reshape_primitive(), prims::ReshapeAttrs{s}, {x});
}

Tensor flatten(const Tensor& x, int64_t start, int64_t end) {
  if (x.dim() == 0) return reshape(x, {1});
  int s = normalize_axis(start, x.dim(), "flatten"), e = normalize_axis(end, x.dim(), "flatten");
  SPORE_CHECK(s <= e, "[flatten] start axis ", start, " comes after end axis ", end);
  Shape out;
  for (int i = 0; i < s; ++i) out.push_back(x.shape()[i]);
  Dim m = 1;
  for (int i = s; i <= e; ++i) m *= x.shape()[i];
  out.push_back(m);
  for (int i = e + 1; i < x.dim(); ++i) out.push_back(x.shape()[i]);
  return reshape(x, out);
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& axes) {
  SPORE_CHECK(static_cast<int64_t>(axes.size()) == x.dim(), "[permute] got ", axes.size(), " axes for a tensor of rank ",
              x.dim(), "; give one axis per dimension");
  prims::PermuteAttrs a;
  std::vector<bool> seen(axes.size(), false);
  for (int64_t ax : axes) {
    int n = normalize_axis(ax, x.dim(), "permute");
    SPORE_CHECK(!seen[n], "[permute] axis ", ax, " appears twice; axes must be a permutation");
    seen[n] = true;
    a.axes.push_back(n);
  }
  return runtime::call(prims::permute_primitive(), a, {x});
}

Tensor transpose(const Tensor& x, int64_t a, int64_t b) {
  if (x.dim() < 2 && (a == 0 || a == -1) && (b == 0 || b == -1)) return x;
  std::vector<int64_t> axes(static_cast<size_t>(x.dim()));
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  std::swap(axes[normalize_axis(a, x.dim(), "transpose")], axes[normalize_axis(b, x.dim(), "transpose")]);
  return permute(x, axes);
}

Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step) {
  SPORE_CHECK(x.dim() > 0, "[slice] cannot slice a 0-d tensor");
  int ax = normalize_axis(axis, x.dim(), "slice");
  SPORE_CHECK(step > 0, "[slice] step must be positive, got ", step, "; use flip() to reverse");
  const int64_t n = x.shape()[ax];
  auto clampi = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  prims::SliceAttrs a;
  for (int64_t i = 0; i < x.dim(); ++i) {
    a.starts.push_back(i == ax ? clampi(start) : 0);
    a.stops.push_back(i == ax ? std::max(clampi(stop), clampi(start)) : x.shape()[i]);
    a.steps.push_back(i == ax ? step : 1);
  }
  return runtime::call(prims::slice_primitive(), a, {x});
}

Tensor select(const Tensor& x, int64_t axis, int64_t i) {
  SPORE_CHECK(x.dim() > 0, "[select] cannot index a 0-d tensor");
  int ax = normalize_axis(axis, x.dim(), "select");
  const int64_t n = x.shape()[ax];
  SPORE_CHECK(i >= -n && i < n, "[select] index ", i, " is out of range for axis ", axis, " of size ", n);
  if (i < 0) i += n;
  Tensor s = slice(x, ax, i, i + 1);
  Shape out;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != ax) out.push_back(x.shape()[d]);
  return view(s, out);
}

Tensor squeeze(const Tensor& x, int64_t axis) {
  if (x.dim() == 0) return x;
  int ax = normalize_axis(axis, x.dim(), "squeeze");
  if (x.shape()[ax] != 1) return x;
  Shape out;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != ax) out.push_back(x.shape()[d]);
  return view(x, out);
}

Tensor squeeze(const Tensor& x) {
  Shape out;
  for (Dim d : x.shape())
    if (d != 1) out.push_back(d);
  return out.size() == x.shape().size() ? x : view(x, out);
}

Tensor unsqueeze(const Tensor& x, int64_t axis) {
  int ax = normalize_axis(axis, x.dim() + 1, "unsqueeze");
  Shape out = x.shape();
  out.insert(static_cast<size_t>(ax), 1);
  return view(x, out);
}

Tensor expand(const Tensor& x, const Shape& shape) {
  Shape s = shape;
  size_t off = s.size() >= x.shape().size() ? s.size() - x.shape().size() : 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == -1) {
      SPORE_CHECK(i >= off, "[expand] -1 is not allowed for the new leading dimension ", i);
      s[i] = x.shape()[i - off];
    }
  return broadcast_to(x, s);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  return runtime::call(prims::broadcast_to_primitive(), prims::BroadcastAttrs{shape}, {x});
}

Tensor stop_gradient(const Tensor& x) {
  return runtime::call(prims::stop_gradient_primitive(), NoAttrs{}, {x});
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t axis1, int64_t axis2) {
  SPORE_CHECK(x.dim() >= 2, "[diagonal] needs a tensor of rank >= 2, got ", shape_str(x.shape()));
  int a1 = normalize_axis(axis1, x.dim(), "diagonal"), a2 = normalize_axis(axis2, x.dim(), "diagonal");
  SPORE_CHECK(a1 != a2, "[diagonal] axis1 and axis2 must differ, both are ", a1);
  return runtime::call(prims::diagonal_primitive(), prims::DiagonalAttrs{offset, a1, a2}, {x});
}

}  // namespace spore::ops
