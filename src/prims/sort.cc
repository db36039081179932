// SPDX-License-Identifier: Apache-2.0
#include "prims/sort.h"
#include "prims/elementwise_infer.h"

#include <algorithm>
#include <cmath>

#include "prims/index_map.h"

namespace spore::prims {
namespace {

template <class C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

/// Orders (value, index) pairs; equal values fall back to the index, which makes any sort
/// stable and any partial sort deterministic.
template <class C>
struct Order {
  bool descending;
  bool operator()(const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) const {
    const bool na = is_nan(a.first), nb = is_nan(b.first);
    if (na || nb) {
      if (na && nb) return a.second < b.second;
      return descending ? na : nb;  // NaN is the largest value
    }
    if (a.first != b.first) return descending ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  }
};

/// Calls f(row_pairs, values_out_row, indices_out_row, out_stride) for every row along `axis`;
/// `keep` is how many sorted entries the output holds per row.
template <class T>
void sort_rows(const Buffer& x, const Buffer& vals, const Buffer& idxs, int axis, int64_t keep, bool descending,
               bool partial) {
  using C = compute_t<T>;
  const int nd = x.ndim;
  const int64_t n = x.shape[axis];
  int64_t rows = 1, after = 1;
  for (int d = 0; d < nd; ++d)
    if (d != axis) rows *= x.shape[d];
  for (int d = axis + 1; d < nd; ++d) after *= x.shape[d];
  if (rows == 0 || keep == 0) return;
  const T* xp = static_cast<const T*>(x.data);
  T* vp = static_cast<T*>(vals.data);
  int64_t* ip = static_cast<int64_t*>(idxs.data);
  const int64_t cost = std::max<int64_t>(1, n * 8);
  runtime::parallel_for(rows, std::max<int64_t>(1, runtime::kParallelGrain / cost), [&](int64_t rb, int64_t re) {
    std::vector<std::pair<C, int64_t>> buf(static_cast<size_t>(n));
    for (int64_t r = rb; r < re; ++r) {
      int64_t xoff = 0, rem = r;
      for (int d = nd - 1; d >= 0; --d) {
        if (d == axis) continue;
        xoff += (rem % x.shape[d]) * x.strides[d];
        rem /= x.shape[d];
      }
      for (int64_t i = 0; i < n; ++i)
        buf[static_cast<size_t>(i)] = {static_cast<C>(xp[xoff + i * x.strides[axis]]), i};
      Order<C> ord{descending};
      if (partial) std::partial_sort(buf.begin(), buf.begin() + keep, buf.end(), ord);
      else std::sort(buf.begin(), buf.end(), ord);
      // Output is contiguous: row r starts at (r / after) * keep * after + r % after.
      const int64_t obase = (r / after) * keep * after + r % after;
      for (int64_t i = 0; i < keep; ++i) {
        vp[obase + i * after] = static_cast<T>(buf[static_cast<size_t>(i)].first);
        ip[obase + i * after] = buf[static_cast<size_t>(i)].second;
      }
    }
  });
}

void infer_sort(const SortAttrs&, std::span<const TensorType> in, OutTypes& out) {
  out.add(in[0].dtype, in[0].shape);
  out.add(DType::Int64, in[0].shape);
}

void infer_topk(const TopkAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  Shape s = in[0].shape;
  // A k that a tensor holds (a value symbol) is checked when the call sees it bound.
  SPORE_CHECK(is_value_size(a.k) || (a.k >= 0 && (is_symbolic(s[a.axis]) || a.k <= s[a.axis])), "[topk] k = ", dim_str(a.k), " is out of range for axis ", a.axis, " of size ",
              dim_str(s[a.axis]), "; k must be in [0, ", dim_str(s[a.axis]), "]");
  s[a.axis] = a.k;
  out.add(in[0].dtype, s);
  out.add(DType::Int64, s);
}

void run_sort(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const SortAttrs*>(attrs);
  visit_dtype(in[0].dtype, [&](auto tag) {
    sort_rows<decltype(tag)>(in[0], out[0], out[1], static_cast<int>(a.axis), in[0].shape[a.axis], a.descending, false);
  });
}

void run_topk(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const TopkAttrs*>(attrs);
  visit_dtype(in[0].dtype, [&](auto tag) {
    sort_rows<decltype(tag)>(in[0], out[0], out[1], static_cast<int>(a.axis), a.k, a.largest, true);
  });
}

template <class Attrs>
const Primitive& define_sort(const char* name, void (*infer)(const Attrs&, std::span<const TensorType>, OutTypes&),
                             KernelRunFn run) {
  PrimitiveSpec<Attrs> spec;
  spec.name = name;
  spec.num_inputs = 1;
  spec.infer = infer;
  spec.cost = [](const Attrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    const double n = cost_numel(in[0].shape);
    return Cost{n * 8, n * static_cast<double>(dtype_size(in[0].dtype)) + move_cost(out).bytes};
  };
  spec.residuals = {.outputs = 0b10};  // the vjp scatters the cotangent through the indices
  Primitive& q = define_primitive(spec);
  q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run});
  return q;
}

const Primitive& sort_def() {
  static const Primitive& p = define_sort<SortAttrs>("sort", infer_sort, run_sort);
  return p;
}
const Primitive& topk_def() {
  static const Primitive& p = define_sort<TopkAttrs>("topk", infer_topk, run_topk);
  return p;
}

[[maybe_unused]] const bool registered = (sort_def(), topk_def(), true);

}  // namespace

const Primitive& sort_primitive() { return sort_def(); }
const Primitive& topk_primitive() { return topk_def(); }

}  // namespace spore::prims
