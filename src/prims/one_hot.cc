// SPDX-License-Identifier: Apache-2.0
#include "prims/one_hot.h"

#include "prims/index_map.h"

namespace spore::prims {

namespace {

/// Calls f(flat_position, is_nonzero) for each element in row-major order.
template <class F>
void for_each_truth(const Buffer& x, F&& f) {
  visit_dtype(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(x.data);
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = p[strided_offset(x, i)];
      bool nz;
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) nz = static_cast<float>(v) != 0.0f;
      else nz = v != T(0);
      f(i, nz);
    }
  });
}

void run_one_hot(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const int64_t c = static_cast<const OneHotAttrs*>(attrs)->num_classes;
  const Buffer& idx = in[0];
  int64_t* o = static_cast<int64_t*>(out[0].data);
  const int64_t n = idx.numel();
  std::memset(o, 0, static_cast<size_t>(n * c) * sizeof(int64_t));
  const int64_t* ip = static_cast<const int64_t*>(idx.data);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = ip[strided_offset(idx, i)];
    if (k < 0 || k >= c)
      throw Error(detail::cat("[one_hot] class index ", k, " is out of range for num_classes ", c,
                              "; class indices must be in [0, ", c, ")"));
    o[i * c + k] = 1;
  }
}

void run_nonzero(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const int64_t count = static_cast<const NonzeroAttrs*>(attrs)->count;
  const Buffer& x = in[0];
  int64_t* o = static_cast<int64_t*>(out[0].data);
  const int nd = x.ndim;
  int64_t row = 0;
  for_each_truth(x, [&](int64_t i, bool nz) {
    if (!nz) return;
    SPORE_ASSERT(row < count, "nonzero count changed between counting and writing");
    for (int d = nd - 1; d >= 0; --d) {
      o[row * nd + d] = i % x.shape[d];
      i /= x.shape[d];
    }
    ++row;
  });
  SPORE_ASSERT(row == count, "nonzero count changed between counting and writing");
}

const Primitive& one_hot_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<OneHotAttrs> spec;
    spec.name = "one_hot";
    spec.num_inputs = 1;
    spec.infer = [](const OneHotAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      SPORE_ASSERT(in[0].dtype == DType::Int64, "one_hot index must be int64");
      Shape s = in[0].shape;
      s.push_back(a.num_classes);
      out.add(DType::Int64, std::move(s));
    };
    spec.cost = [](const OneHotAttrs&, std::span<const TensorType>, std::span<const TensorType> out) { return move_cost(out); };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run_one_hot});
    return q;
  }();
  return p;
}

const Primitive& nonzero_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<NonzeroAttrs> spec;
    spec.name = "nonzero";
    spec.num_inputs = 1;
    spec.infer = [](const NonzeroAttrs& a, std::span<const TensorType> in, OutTypes& out) {
      out.add(DType::Int64, Shape{a.count, static_cast<Dim>(in[0].shape.size())});
    };
    spec.cost = [](const NonzeroAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
      return move_cost(out);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run_nonzero});
    q.value_sizes = [](const void* attrs, std::span<const Tensor> in, std::vector<std::pair<Dim, int64_t>>& sizes) {
      const Dim count = static_cast<const NonzeroAttrs*>(attrs)->count;
      if (!is_symbolic(count)) return;
      const Tensor& x = in[0];
      SPORE_CHECK(x.defined(), "[nonzero] under vmap the count of non-zero elements may differ per lane, and a "
                  "size is one per graph; call nonzero outside vmap, or loop over the batch");
      sizes.emplace_back(count, count_nonzero(x));
    };
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (one_hot_def(), nonzero_def(), true);

}  // namespace

int64_t count_nonzero(const Tensor& t) {
  Buffer x;
  x.data = t.data_ptr();
  x.dtype = t.dtype();
  x.ndim = static_cast<int>(t.dim());
  x.shape = t.shape().data();
  x.strides = t.strides().data();
  int64_t c = 0;
  for_each_truth(x, [&](int64_t, bool nz) { c += nz; });
  return c;
}

const Primitive& one_hot_primitive() { return one_hot_def(); }
const Primitive& nonzero_primitive() { return nonzero_def(); }

}  // namespace spore::prims
