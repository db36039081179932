// SPDX-License-Identifier: Apache-2.0
// Public indexing ops: gather/scatter family, index_select, take_along_axis, masked_fill,
// one_hot, sort/argsort/topk, nonzero. Index tensors are int64; int32 is accepted and cast.
#include <cmath>
#include <string>

#include "ops/promote.h"
#include "prims/bind_sizes.h"
#include "prims/gather.h"
#include "prims/one_hot.h"
#include "prims/sort.h"
#include "prims/tri.h"
#include "runtime/dispatch.h"
#include "spore/ops/elementwise.h"
#include "spore/ops/shape.h"

namespace spore::ops {

namespace {

Tensor as_index(const Tensor& index, const char* op) {
  SPORE_CHECK(index.defined(), "[", op, "] index is an undefined tensor");
  SPORE_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, "[", op,
              "] index must be int64 or int32, got ", dtype_name(index.dtype()), "; cast it with .to(DType::Int64)");
  return index.dtype() == DType::Int64 ? index : cast(index, DType::Int64);
}

/// Values of an eager CPU tensor are readable; under a symbolic trace they are not.
void require_values(const Tensor& t, const char* op) {
  SPORE_CHECK(t.device().type != DeviceType::Meta, "[", op,
              "] needs the tensor's values (its output shape depends on them) and runs eagerly only; "
              "it cannot be traced by jit or vmap");
}

/// Runs a gather on behalf of `op`, so its errors name the op the user called.
template <class F>
Tensor as_op(const char* op, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    const std::string m = e.what();
    if (m.rfind("[gather]", 0) == 0) throw Error("[" + std::string(op) + "]" + m.substr(8));
    throw;
  }
}

/// Treats 0-d operands as 1-element vectors, the way PyTorch's gather/scatter/sort do.
Tensor vec1(const Tensor& t) { return t.dim() == 0 ? reshape(t, {1}) : t; }

Tensor scatter_impl(const Tensor& x, int64_t axis, const Tensor& index_in, const Tensor& src_in, bool add) {
  const char* op = add ? "scatter_add" : "scatter";
  SPORE_CHECK(x.defined() && src_in.defined(), "[", op, "] an input is an undefined tensor");
  // PyTorch refuses a src of another dtype rather than casting it (a float src would be
  // truncated into an integer input without a word).
  SPORE_CHECK(src_in.dtype() == x.dtype(), "[", op, "] src has dtype ", dtype_name(src_in.dtype()),
              " but the input has dtype ", dtype_name(x.dtype()), "; they must match: cast src to ",
              dtype_name(x.dtype()), " first");
  Tensor index = as_index(index_in, op);
  SPORE_CHECK(index.dim() == x.dim() && src_in.dim() == x.dim(), "[", op, "] input ", shape_str(x.shape()), ", index ",
              shape_str(index.shape()), " and src ", shape_str(src_in.shape()), " must have the same rank");
  const int ax = normalize_axis(axis, std::max<int64_t>(x.dim(), 1), op);
  Tensor out = runtime::call(prims::scatter_primitive(), prims::ScatterAttrs{ax, add}, {vec1(x), vec1(index), vec1(src_in)});
  return x.dim() == 0 ? reshape(out, {}) : out;
}

}  // namespace

Tensor gather(const Tensor& x, int64_t axis, const Tensor& index_in) {
  Tensor index = as_index(index_in, "gather");
  SPORE_CHECK(index.dim() == x.dim(), "[gather] index has rank ", index.dim(), " but the input has rank ", x.dim(),
              "; they must have the same rank");
  const int ax = normalize_axis(axis, std::max<int64_t>(x.dim(), 1), "gather");
  Tensor out = runtime::call(prims::gather_primitive(), prims::GatherAttrs{ax}, {vec1(x), vec1(index)});
  return x.dim() == 0 ? reshape(out, {}) : out;
}

Tensor scatter(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src) {
  return scatter_impl(x, axis, index, src, false);
}

Tensor scatter_add(const Tensor& x, int64_t axis, const Tensor& index, const Tensor& src) {
  return scatter_impl(x, axis, index, src, true);
}

Tensor index_select(const Tensor& x, int64_t axis, const Tensor& index_in) {
  Tensor index = as_index(index_in, "index_select");
  SPORE_CHECK(index.dim() <= 1, "[index_select] index must be 1-D, got shape ", shape_str(index.shape()));
  SPORE_CHECK(x.dim() >= 1, "[index_select] needs a tensor of rank >= 1, got a 0-d tensor");
  const int ax = normalize_axis(axis, x.dim(), "index_select");
  // A gather whose index is the 1-D index broadcast (stride 0) over the other axes.
  const int64_t m = index.numel();
  Shape ishape(static_cast<size_t>(x.dim()), 1), oshape = x.shape();
  ishape[ax] = m;
  oshape[ax] = m;
  return as_op("index_select", [&] { return gather(x, ax, broadcast_to(reshape(index, ishape), oshape)); });
}

Tensor take_along_axis(const Tensor& x, const Tensor& index_in, int64_t axis) {
  Tensor index = as_index(index_in, "take_along_axis");
  SPORE_CHECK(index.dim() == x.dim(), "[take_along_axis] index has rank ", index.dim(), " but the input has rank ",
              x.dim(), "; they must have the same rank");
  if (x.dim() == 0) return as_op("take_along_axis", [&] { return gather(x, 0, index); });
  const int ax = normalize_axis(axis, x.dim(), "take_along_axis");
  // Both broadcast against each other on every axis but `axis` (NumPy / torch.take_along_dim).
  Shape xs = x.shape(), is = index.shape();
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == ax) continue;
    SPORE_CHECK(xs[d] == is[d] || xs[d] == 1 || is[d] == 1, "[take_along_axis] input ", shape_str(x.shape()),
                " and index ", shape_str(index.shape()), " do not broadcast on axis ", d);
    xs[d] = is[d] = std::max(xs[d], is[d]);
    if (x.shape()[d] == 0 || index.shape()[d] == 0) xs[d] = is[d] = 0;
  }
  return as_op("take_along_axis", [&] { return gather(broadcast_to(x, xs), ax, broadcast_to(index, is)); });
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  SPORE_CHECK(x.defined() && mask.defined(), "[masked_fill] an input is an undefined tensor");
  check_scalar_fits(value, x.dtype(), "masked_fill");
  prims::MaskedFillAttrs a;
  a.value = value.to_double();
  // Only read for integer dtypes, where the value was just checked to fit: converting a float
  // beyond int64 (a 1e30 fill of a float tensor) would be undefined behaviour.
  a.int_value = is_integral(x.dtype(), true) && std::isfinite(a.value) ? value.to_int() : 0;
  return runtime::call(prims::masked_fill_primitive(), a, {x, mask});
}

Tensor one_hot(const Tensor& index_in, int64_t num_classes) {
  Tensor index = as_index(index_in, "one_hot");
  SPORE_CHECK(num_classes >= -1, "[one_hot] num_classes must be -1 (infer) or non-negative, got ", num_classes);
  if (num_classes == -1) {
    require_values(index, "one_hot");
    SPORE_CHECK(index.numel() > 0, "[one_hot] cannot infer num_classes from an empty index; pass num_classes");
    auto v = index.to_vector<int64_t>();
    num_classes = *std::max_element(v.begin(), v.end()) + 1;
  }
  return runtime::call(prims::one_hot_primitive(), prims::OneHotAttrs{num_classes}, {index});
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t axis, bool largest) {
  SPORE_CHECK(x.defined(), "[topk] input is an undefined tensor");
  const int ax = normalize_axis(axis, std::max<int64_t>(x.dim(), 1), "topk");
  auto out = runtime::call_multi(prims::topk_primitive(), prims::TopkAttrs{k, ax, largest}, {vec1(x)});
  if (x.dim() == 0) return {reshape(out[0], {}), reshape(out[1], {})};
  return {out[0], out[1]};
}

std::pair<Tensor, Tensor> topk(const Tensor& x, const Tensor& k, int64_t axis, bool largest) {
  SPORE_CHECK(k.defined(), "[topk] k is an undefined tensor");
  SPORE_CHECK(is_integral(k.dtype()) && k.numel() == 1 && k.dim() <= 1, "[topk] k must hold one integer, got ",
              dtype_name(k.dtype()), shape_str(k.shape()));
  auto [bound, sizes] = with_sizes(x, reshape(k, {}));
  return topk(bound, sizes[0], axis, largest);
}

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t axis, bool descending) {
  SPORE_CHECK(x.defined(), "[sort] input is an undefined tensor");
  const int ax = normalize_axis(axis, std::max<int64_t>(x.dim(), 1), "sort");
  auto out = runtime::call_multi(prims::sort_primitive(), prims::SortAttrs{ax, descending}, {vec1(x)});
  if (x.dim() == 0) return {reshape(out[0], {}), reshape(out[1], {})};
  return {out[0], out[1]};
}

Tensor argsort(const Tensor& x, int64_t axis, bool descending) { return sort(x, axis, descending).second; }

SizedTensor with_sizes(const Tensor& x, const Tensor& sizes) {
  SPORE_CHECK(x.defined() && sizes.defined(), "[with_sizes] an input is an undefined tensor");
  SPORE_CHECK(is_integral(sizes.dtype()) && sizes.dim() <= 1, "[with_sizes] sizes must be a 0-d or 1-D integer tensor, got ",
              dtype_name(sizes.dtype()), shape_str(sizes.shape()));
  SPORE_CHECK(!is_symbolic(sizes.numel()), "[with_sizes] the number of sizes must be known, got shape ",
              shape_str(sizes.shape()));
  SizedTensor r{x, {}};
  if (sizes.device().type != DeviceType::Meta) {
    for (int64_t v : sizes.to(DType::Int64).to_vector<int64_t>()) {
      SPORE_CHECK(v >= 0, "[with_sizes] size ", v, " is negative; a size must be >= 0");
      r.sizes.push_back(v);
    }
    return r;
  }
  prims::BindSizesAttrs a;
  for (int64_t i = 0; i < sizes.numel(); ++i) a.sizes.push_back(new_value_symbol());
  r.sizes.assign(a.sizes.begin(), a.sizes.end());
  r.x = runtime::call(prims::bind_sizes_primitive(), a, {x, sizes});
  return r;
}

Tensor nonzero(const Tensor& x) {
  SPORE_CHECK(x.defined(), "[nonzero] input is an undefined tensor");
  // Traced: the count is a value symbol, which the graph interpreter binds when the node runs.
  if (x.device().type == DeviceType::Meta)
    return runtime::call(prims::nonzero_primitive(), prims::NonzeroAttrs{new_value_symbol()}, {x});
  return runtime::call(prims::nonzero_primitive(), prims::NonzeroAttrs{prims::count_nonzero(x)}, {x});
}

}  // namespace spore::ops
