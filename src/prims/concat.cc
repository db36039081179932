// SPDX-License-Identifier: Apache-2.0
#include "prims/concat.h"

#include "prims/index_map.h"

namespace spore::prims {
namespace {

void infer_concat(const ConcatAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  SPORE_CHECK(!in.empty(), "[concat] needs at least one tensor");
  Shape s = in[0].shape;
  const size_t ax = static_cast<size_t>(a.axis);
  SPORE_ASSERT(ax < s.size(), "concat axis ", a.axis, " for rank ", s.size());
  bool weak = in[0].weak;
  for (size_t i = 1; i < in.size(); ++i) {
    const Shape& t = in[i].shape;
    bool ok = t.size() == s.size() && in[i].dtype == in[0].dtype;
    for (size_t d = 0; ok && d < t.size(); ++d) ok = d == ax || t[d] == in[0].shape[d];
    SPORE_CHECK(ok, "[concat] tensors must have the same shape except on axis ", a.axis, ": input 0 is ",
                shape_str(in[0].shape), " and input ", i, " is ", shape_str(t),
                "; reshape or broadcast them to agree on the other axes");
    s[ax] = dim_add(s[ax], t[ax]);
    weak = weak && in[i].weak;
  }
  out.add(in[0].dtype, std::move(s)).weak = weak;
}

void run_concat(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const ConcatAttrs*>(attrs);
  const Buffer& o = out[0];
  const size_t esz = dtype_size(o.dtype);
  int64_t pos = 0;
  for (const Buffer& b : in) {
    // Each input is a strided copy into its window of the output.
    char* dst = static_cast<char*>(o.data) + pos * o.strides[a.axis] * static_cast<int64_t>(esz);
    table_copy(b.data, dst, o.strides, b.shape, b.ndim, esz, identity_tables(b), nullptr);
    pos += b.shape[a.axis];
  }
}

const Primitive& concat_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<ConcatAttrs> spec;
    spec.name = "concat";
    spec.fusion = FusionClass::Injective;
    spec.num_inputs = -1;
    spec.infer = infer_concat;
    spec.cost = [](const ConcatAttrs&, std::span<const TensorType>, std::span<const TensorType> out) {
      return move_cost(out);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run_concat});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (concat_def(), true);

}  // namespace

const Primitive& concat_primitive() { return concat_def(); }

}  // namespace spore::prims
