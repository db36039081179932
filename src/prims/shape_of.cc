// SPDX-License-Identifier: Apache-2.0
#include "prims/shape_of.h"

namespace spore::prims {

namespace {

void run_shape_of(const void*, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  int64_t* o = static_cast<int64_t*>(out[0].data);
  for (int d = 0; d < in[0].ndim; ++d) o[d] = in[0].shape[d];
}

const Primitive& shape_of_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<NoAttrs> spec;
    spec.name = "shape_of";
    spec.num_inputs = 1;
    spec.infer = [](const NoAttrs&, std::span<const TensorType> in, OutTypes& out) {
      out.add(DType::Int64, Shape{static_cast<Dim>(in[0].shape.size())});
    };
    spec.cost = [](const NoAttrs&, std::span<const TensorType>, std::span<const TensorType> out) {
      return Cost{0, static_cast<double>(8 * numel_of(out[0].shape))};
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "cpu", .run = run_shape_of});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (shape_of_def(), true);

}  // namespace

const Primitive& shape_of_primitive() { return shape_of_def(); }

}  // namespace spore::prims
