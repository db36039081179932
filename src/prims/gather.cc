// SPDX-License-Identifier: Apache-2.0
#include "prims/gather.h"

#include <atomic>
#include <limits>

#include "prims/index_map.h"
#include "runtime/parallel.h"

namespace spore::prims {

void throw_index_error(const char* op, int64_t index, int64_t axis, int64_t size) {
  throw Error(detail::cat("[", op, "] index ", index, " is out of range for axis ", axis, " of size ", size,
                          "; indices must be in [0, ", size, ")"));
}

namespace {

void check_index_shape(const char* op, const Shape& idx, const Shape& other, const char* other_name, int64_t axis,
                       bool include_axis) {
  bool ok = idx.size() == other.size();
  for (size_t d = 0; ok && d < idx.size(); ++d)
    ok = (!include_axis && static_cast<int64_t>(d) == axis) || is_symbolic(idx[d]) || is_symbolic(other[d]) ||
         idx[d] <= other[d];
  SPORE_CHECK(ok, "[", op, "] index of shape ", shape_str(idx), " does not fit ", other_name, " of shape ",
              shape_str(other), include_axis ? "" : " outside axis ", include_axis ? "" : std::to_string(axis),
              "; the index must have the same rank and no larger sizes");
}

void infer_gather(const GatherAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  SPORE_ASSERT(in[1].dtype == DType::Int64, "gather index must be int64");
  check_index_shape("gather", in[1].shape, in[0].shape, "the input", a.axis, false);
  out.add(in[0].dtype, in[1].shape);
}

void infer_scatter(const ScatterAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  const char* op = a.add ? "scatter_add" : "scatter";
  SPORE_ASSERT(in[1].dtype == DType::Int64 && in[2].dtype == in[0].dtype, "scatter operand dtypes");
  check_index_shape(op, in[1].shape, in[0].shape, "the input", a.axis, false);
  check_index_shape(op, in[1].shape, in[2].shape, "src", a.axis, true);
  out.add(in[0].dtype, in[0].shape);
}

template <class W>
void gather_rows(const Buffer& x, const Buffer& idx, const Buffer& o, int axis, std::atomic<int64_t>& bad) {
  const int nd = o.ndim;
  const int64_t n = o.numel();
  if (n == 0) return;
  const int64_t inner = nd == 0 ? 1 : o.shape[nd - 1];
  const int64_t rows = n / inner;
  const int64_t size = x.shape[axis], xs_ax = x.strides[axis];
  const int64_t xs_last = axis == nd - 1 ? 0 : x.strides[nd - 1], is_last = idx.strides[nd - 1];
  const W* xp = static_cast<const W*>(x.data);
  const int64_t* ip = static_cast<const int64_t*>(idx.data);
  W* op = static_cast<W*>(o.data);
  runtime::parallel_for(rows, std::max<int64_t>(1, runtime::kParallelGrain / inner), [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      int64_t xoff = 0, ioff = 0, rem = r;
      for (int d = nd - 2; d >= 0; --d) {
        int64_t c = rem % o.shape[d];
        rem /= o.shape[d];
        if (d != axis) xoff += c * x.strides[d];
        ioff += c * idx.strides[d];
      }
      W* orow = op + r * inner;
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t k = ip[ioff + j * is_last];
        if (k < 0 || k >= size) [[unlikely]] {
          int64_t pos = r * inner + j, cur = bad.load();
          while (pos < cur && !bad.compare_exchange_weak(cur, pos)) {}
          break;
        }
        std::memcpy(orow + j, xp + xoff + j * xs_last + k * xs_ax, sizeof(W));
      }
    }
  });
}

void run_gather(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const int axis = static_cast<int>(static_cast<const GatherAttrs*>(attrs)->axis);
  std::atomic<int64_t> bad{std::numeric_limits<int64_t>::max()};
  switch (dtype_size(in[0].dtype)) {
    case 1: gather_rows<uint8_t>(in[0], in[1], out[0], axis, bad); break;
    case 2: gather_rows<uint16_t>(in[0], in[1], out[0], axis, bad); break;
    case 4: gather_rows<uint32_t>(in[0], in[1], out[0], axis, bad); break;
    default: gather_rows<uint64_t>(in[0], in[1], out[0], axis, bad); break;
  }
  // Reported after the parallel loop (an exception must not leave an OpenMP region), and for
  // the first bad position in row-major order so the message does not depend on threads.
  if (int64_t pos = bad.load(); pos != std::numeric_limits<int64_t>::max())
    throw_index_error("gather", static_cast<const int64_t*>(in[1].data)[strided_offset(in[1], pos)], axis,
                      in[0].shape[axis]);
}

// The common case (max pooling's backward): everything contiguous, idx and src of one shape that
// matches the output but along the last axis, which the indices address. Same order and same
// sums as the general loop, without its per-element coordinate arithmetic.
template <class T>
bool scatter_rows(const ScatterAttrs& a, const Buffer& idx, const Buffer& src, const Buffer& o, const T* sp, T* op) {
  const int nd = idx.ndim;
  if (nd == 0 || a.axis != nd - 1 || !idx.contiguous() || !src.contiguous() || !o.contiguous() || src.ndim != nd)
    return false;
  for (int d = 0; d < nd; ++d)
    if (src.shape[d] != idx.shape[d] || (d != nd - 1 && o.shape[d] != idx.shape[d])) return false;
  const int64_t inner = idx.shape[nd - 1], size = o.shape[nd - 1], rows = inner > 0 ? idx.numel() / inner : 0;
  const int64_t* ip = static_cast<const int64_t*>(idx.data);
  // Rows write disjoint output rows, so they run in parallel; within a row the order stays
  // serial (duplicates resolve, and sums add, in index order). A bad index is reported after the
  // loop (no exception may leave it), the first in row-major order whatever the threads.
  std::atomic<int64_t> bad{std::numeric_limits<int64_t>::max()};
  runtime::parallel_for(rows, std::max<int64_t>(1, runtime::kParallelGrain / std::max<int64_t>(1, inner)),
                        [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      T* orow = op + r * size;
      for (int64_t j = r * inner, e = j + inner; j < e; ++j) {
        const int64_t k = ip[j];
        if (k < 0 || k >= size) [[unlikely]] {
          for (int64_t cur = bad.load(); j < cur && !bad.compare_exchange_weak(cur, j);) {
          }
          break;
        }
        T& dst = orow[k];
        if (!a.add) dst = sp[j];
        else if constexpr (std::is_same_v<T, bool>) dst = dst || sp[j];
        else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
          dst = T(static_cast<float>(dst) + static_cast<float>(sp[j]));
        else dst = static_cast<T>(dst + sp[j]);
      }
    }
  });
  if (const int64_t pos = bad.load(); pos != std::numeric_limits<int64_t>::max())
    throw_index_error(a.add ? "scatter_add" : "scatter", ip[pos], nd - 1, size);
  return true;
}

template <class T>
void scatter_typed(const ScatterAttrs& a, const Buffer& x, const Buffer& idx, const Buffer& src, const Buffer& o) {
  table_copy(x.data, o.data, o.strides, o.shape, o.ndim, sizeof(T), identity_tables(x), nullptr);
  const int nd = idx.ndim, axis = static_cast<int>(a.axis);
  const int64_t n = idx.numel(), size = o.shape[axis];
  const int64_t* ip = static_cast<const int64_t*>(idx.data);
  const T* sp = static_cast<const T*>(src.data);
  T* op = static_cast<T*>(o.data);
  // The general loop is serial on purpose: duplicate indices then resolve in one fixed order
  // (PyTorch leaves duplicates unspecified for scatter; scatter_add sums in index order).
  if (scatter_rows(a, idx, src, o, sp, op)) return;
  std::vector<int64_t> c(static_cast<size_t>(nd), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t ioff = 0, soff = 0, ooff = 0;
    for (int d = 0; d < nd; ++d) {
      ioff += c[d] * idx.strides[d];
      soff += c[d] * src.strides[d];
      if (d != axis) ooff += c[d] * o.strides[d];
    }
    const int64_t k = ip[ioff];
    if (k < 0 || k >= size) throw_index_error(a.add ? "scatter_add" : "scatter", k, axis, size);
    T& dst = op[ooff + k * o.strides[axis]];
    if (!a.add) dst = sp[soff];
    else if constexpr (std::is_same_v<T, bool>) dst = dst || sp[soff];
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      dst = T(static_cast<float>(dst) + static_cast<float>(sp[soff]));
    else dst = static_cast<T>(dst + sp[soff]);
    for (int d = nd - 1; d >= 0; --d) {
      if (++c[d] < idx.shape[d]) break;
      c[d] = 0;
    }
  }
}

void run_scatter(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const ScatterAttrs*>(attrs);
  visit_dtype(in[0].dtype, [&](auto tag) { scatter_typed<decltype(tag)>(a, in[0], in[1], in[2], out[0]); });
}

const Primitive& gather_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<GatherAttrs> spec;
    spec.name = "gather";
    spec.fusion = FusionClass::Injective;
    spec.num_inputs = 2;
    spec.infer = infer_gather;
    spec.cost = [](const GatherAttrs&, std::span<const TensorType>, std::span<const TensorType> out) {
      return move_cost(out);
    };
    spec.residuals = {.inputs = 0b10};  // the vjp scatters the cotangent back through the index
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run_gather});
    return q;
  }();
  return p;
}

const Primitive& scatter_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<ScatterAttrs> spec;
    spec.name = "scatter";
    spec.num_inputs = 3;
    spec.infer = infer_scatter;
    spec.cost = [](const ScatterAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return move_cost(out);
    };
    spec.residuals = {.inputs = 0b10};
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run_scatter});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (gather_def(), scatter_def(), true);

}  // namespace

const Primitive& gather_primitive() { return gather_def(); }
const Primitive& scatter_primitive() { return scatter_def(); }

}  // namespace spore::prims
