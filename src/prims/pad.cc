// SPDX-License-Identifier: Apache-2.0
#include "prims/pad.h"

#include "prims/index_map.h"

namespace spore::prims {
namespace {

template <class Attrs>
Primitive& define_move(const char* name, void (*infer)(const Attrs&, std::span<const TensorType>, OutTypes&),
                       KernelRunFn run) {
  PrimitiveSpec<Attrs> spec;
  spec.name = name;
  spec.fusion = FusionClass::Injective;
  spec.num_inputs = 1;
  spec.infer = infer;
  spec.cost = [](const Attrs&, std::span<const TensorType>, std::span<const TensorType> out) { return move_cost(out); };
  Primitive& q = define_primitive(spec);
  q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run});
  return q;
}

void infer_pad(const PadAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  Shape s = in[0].shape;
  SPORE_ASSERT(a.before.size() == s.size() && a.after.size() == s.size(), "pad attrs rank");
  for (size_t d = 0; d < s.size(); ++d) {
    if (a.mode == PadKind::Reflect && !is_symbolic(s[d]) && (a.before[d] > 0 || a.after[d] > 0))
      SPORE_CHECK(a.before[d] < s[d] && a.after[d] < s[d], "[pad] reflect padding (", a.before[d], ", ", a.after[d],
                  ") of axis ", d, " must be smaller than its size ", dim_str(s[d]),
                  "; use replicate or constant padding, or pad less");
    if (a.mode == PadKind::Replicate && !is_symbolic(s[d]) && (a.before[d] > 0 || a.after[d] > 0))
      SPORE_CHECK(s[d] > 0, "[pad] replicate padding of axis ", d, " needs a non-empty axis, got size 0");
    s[d] = dim_add(s[d], a.before[d] + a.after[d]);
  }
  out.add(in[0].dtype, std::move(s)).weak = in[0].weak;
}

void run_pad(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const PadAttrs*>(attrs);
  const Buffer &x = in[0], &o = out[0];
  AxisTables tab(static_cast<size_t>(o.ndim));
  for (int d = 0; d < o.ndim; ++d) {
    const int64_t n = x.shape[d], st = x.strides[d], b = a.before[d];
    auto& t = tab[static_cast<size_t>(d)];
    t.resize(static_cast<size_t>(o.shape[d]));
    for (int64_t i = 0; i < o.shape[d]; ++i) {
      int64_t s = i - b;
      if (s < 0 || s >= n) {
        if (a.mode == PadKind::Constant) {
          t[static_cast<size_t>(i)] = kFillOffset;
          continue;
        }
        if (a.mode == PadKind::Reflect) s = s < 0 ? -s : 2 * (n - 1) - s;
        else s = s < 0 ? 0 : n - 1;
      }
      t[static_cast<size_t>(i)] = s * st;
    }
  }
  alignas(8) char fill[8];
  scalar_bytes(o.dtype, a.value, a.int_value, fill);
  table_copy(x.data, o.data, o.strides, o.shape, o.ndim, dtype_size(o.dtype), tab, fill);
}

void run_flip(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const FlipAttrs*>(attrs);
  const Buffer &x = in[0], &o = out[0];
  AxisTables tab = identity_tables(x);
  for (int64_t ax : a.axes) {
    auto& t = tab[static_cast<size_t>(ax)];
    std::reverse(t.begin(), t.end());
  }
  table_copy(x.data, o.data, o.strides, o.shape, o.ndim, dtype_size(o.dtype), tab, nullptr);
}

void run_roll(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const RollAttrs*>(attrs);
  const Buffer &x = in[0], &o = out[0];
  AxisTables tab(static_cast<size_t>(o.ndim));
  for (int d = 0; d < o.ndim; ++d) {
    const int64_t n = x.shape[d];
    auto& t = tab[static_cast<size_t>(d)];
    t.resize(static_cast<size_t>(n));
    const int64_t sh = n == 0 ? 0 : ((a.shifts[d] % n) + n) % n;
    for (int64_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = ((i - sh + n) % n) * x.strides[d];
  }
  table_copy(x.data, o.data, o.strides, o.shape, o.ndim, dtype_size(o.dtype), tab, nullptr);
}

void infer_same_type(std::span<const TensorType> in, OutTypes& out) { out.add(in[0].dtype, in[0].shape).weak = in[0].weak; }

const Primitive& pad_def() {
  static const Primitive& p = define_move<PadAttrs>("pad", infer_pad, run_pad);
  return p;
}
const Primitive& flip_def() {
  static const Primitive& p = define_move<FlipAttrs>(
      "flip", [](const FlipAttrs&, std::span<const TensorType> in, OutTypes& out) { infer_same_type(in, out); }, run_flip);
  return p;
}
const Primitive& roll_def() {
  static const Primitive& p = define_move<RollAttrs>(
      "roll", [](const RollAttrs&, std::span<const TensorType> in, OutTypes& out) { infer_same_type(in, out); }, run_roll);
  return p;
}

[[maybe_unused]] const bool registered = (pad_def(), flip_def(), roll_def(), true);

}  // namespace

const Primitive& pad_primitive() { return pad_def(); }
const Primitive& flip_primitive() { return flip_def(); }
const Primitive& roll_primitive() { return roll_def(); }

}  // namespace spore::prims
