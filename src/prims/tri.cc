// SPDX-License-Identifier: Apache-2.0
#include "prims/tri.h"

#include "backends/cpu/elementwise_loop.h"
#include "prims/index_map.h"

namespace spore::prims {
namespace {

template <class W>
void tri_rows(const TriAttrs& a, const Buffer& x, const Buffer& o) {
  const int nd = o.ndim;
  const int64_t rows_m = o.shape[nd - 2], cols = o.shape[nd - 1];
  const int64_t n = o.numel();
  if (n == 0) return;
  const int64_t rows = n / cols;
  const W* xp = static_cast<const W*>(x.data);
  W* op = static_cast<W*>(o.data);
  runtime::parallel_for(rows, std::max<int64_t>(1, runtime::kParallelGrain / cols), [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      int64_t xoff = 0, rem = r;
      for (int d = nd - 2; d >= 0; --d) {
        xoff += (rem % o.shape[d]) * x.strides[d];
        rem /= o.shape[d];
      }
      const int64_t i = r % rows_m;
      // Kept columns form one range [lo, hi).
      const int64_t lo = a.upper ? std::clamp<int64_t>(i + a.diagonal, 0, cols) : 0;
      const int64_t hi = a.upper ? cols : std::clamp<int64_t>(i + a.diagonal + 1, 0, cols);
      W* orow = op + r * cols;
      for (int64_t j = 0; j < cols; ++j) orow[j] = (j >= lo && j < hi) ? xp[xoff + j * x.strides[nd - 1]] : W{};
    }
  });
}

void run_tri(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const TriAttrs*>(attrs);
  // Zero bits are zero for every dtype (0, +0.0, false), so the copy can be by size.
  switch (dtype_size(in[0].dtype)) {
    case 1: tri_rows<uint8_t>(a, in[0], out[0]); break;
    case 2: tri_rows<uint16_t>(a, in[0], out[0]); break;
    case 4: tri_rows<uint32_t>(a, in[0], out[0]); break;
    default: tri_rows<uint64_t>(a, in[0], out[0]); break;
  }
}

template <class W>
void fill_masked(std::span<const Buffer> in, const Buffer& o, const void* value) {
  W v;
  std::memcpy(&v, value, sizeof(W));
  cpu::elementwise_loop<2>(in, o, [&](const char* const* p, char* y, int64_t n) {
    const W* x = reinterpret_cast<const W*>(p[0]);
    const bool* m = reinterpret_cast<const bool*>(p[1]);
    W* out = reinterpret_cast<W*>(y);
    for (int64_t j = 0; j < n; ++j) out[j] = m[j] ? v : x[j];
  });
}

void run_masked_fill(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const MaskedFillAttrs*>(attrs);
  alignas(8) char v[8];
  scalar_bytes(out[0].dtype, a.value, a.int_value, v);
  switch (dtype_size(in[0].dtype)) {
    case 1: fill_masked<uint8_t>(in, out[0], v); break;
    case 2: fill_masked<uint16_t>(in, out[0], v); break;
    case 4: fill_masked<uint32_t>(in, out[0], v); break;
    default: fill_masked<uint64_t>(in, out[0], v); break;
  }
}

const Primitive& tri_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<TriAttrs> spec;
    spec.name = "tri";
    spec.fusion = FusionClass::Injective;
    spec.num_inputs = 1;
    spec.infer = [](const TriAttrs&, std::span<const TensorType> in, OutTypes& out) {
      SPORE_CHECK(in[0].shape.size() >= 2, "[tril/triu] needs a tensor of rank >= 2, got ", shape_str(in[0].shape));
      out.add(in[0].dtype, in[0].shape).weak = in[0].weak;
    };
    spec.cost = [](const TriAttrs&, std::span<const TensorType>, std::span<const TensorType> out) { return move_cost(out); };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run_tri});
    return q;
  }();
  return p;
}

const Primitive& masked_fill_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<MaskedFillAttrs> spec;
    spec.name = "masked_fill";
    spec.fusion = FusionClass::Elementwise;
    spec.num_inputs = 2;
    spec.infer = [](const MaskedFillAttrs&, std::span<const TensorType> in, OutTypes& out) {
      SPORE_CHECK(in[1].dtype == DType::Bool, "[masked_fill] mask must be bool, got ", dtype_name(in[1].dtype),
                  "; compare to get a bool mask");
      Shape s = broadcast_shapes(in[0].shape, in[1].shape, "masked_fill");
      SPORE_CHECK(s == in[0].shape, "[masked_fill] mask of shape ", shape_str(in[1].shape),
                  " does not broadcast to the input's shape ", shape_str(in[0].shape));
      out.add(in[0].dtype, in[0].shape).weak = in[0].weak;
    };
    spec.cost = [](const MaskedFillAttrs&, std::span<const TensorType>, std::span<const TensorType> out) {
      return move_cost(out);
    };
    spec.residuals = {.inputs = 0b10};  // the vjp zeroes the filled positions
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run_masked_fill});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (tri_def(), masked_fill_def(), true);

}  // namespace

const Primitive& tri_primitive() { return tri_def(); }
const Primitive& masked_fill_primitive() { return masked_fill_def(); }

}  // namespace spore::prims
