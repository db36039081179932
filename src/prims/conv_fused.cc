// SPDX-License-Identifier: Apache-2.0
// The conv_fused primitive: type inference and the reference kernel (the conv, then the
// epilogue through the unfused primitives' own kernels, prims/epilogue.h). oneDNN kernel
// (post-ops): src/backends/cpu/onednn_conv.cc.
#include "prims/conv_fused.h"

namespace spore::prims {
namespace {

void infer_conv_fused(const ConvFusedAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  const PostOpList p = a.post_list();
  (void)resolve_epilogue(p);
  const size_t nconv = a.first_operand();
  SPORE_CHECK(in.size() == nconv + p.num_operands(), "[conv_fused] takes x, w", a.has_bias ? ", bias" : "", " and ",
              p.num_operands(), " post-op operands, got ", in.size(), " inputs");
  const ConvAttrs c = a.conv();
  conv_primitive().infer(&c, in.first(nconv), out);
  check_post_operands(p, in, out.t[0].shape, in[0].dtype);
}

const Primitive& conv_fused_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<ConvFusedAttrs> spec;
    spec.name = kConvFusedOp;
    spec.compiler_made = true;
    spec.fusion = FusionClass::Conv;
    spec.infer = infer_conv_fused;
    spec.cost = [](const ConvFusedAttrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
      const ConvAttrs c = a.conv();
      return epilogue_cost(conv_primitive().cost(&c, in.first(a.first_operand()), out), a.post_list(), in, out[0]);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "reference",
                  .run = [](const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out,
                            const KernelContext& ctx) {
                    const auto& a = *static_cast<const ConvFusedAttrs*>(attrs);
                    conv_reference(a.conv(), in.first(a.first_operand()), out);
                    run_epilogue(a.post_list(), resolve_epilogue(a.post_list()), 0, in, out[0], ctx);
                  }});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (conv_fused_def(), true);

}  // namespace

PostOpList ConvFusedAttrs::post_list() const {
  return {kConvFusedOp, post_kind, post_ops, post_a, post_b, first_operand()};
}

const Primitive& conv_fused_primitive() { return conv_fused_def(); }

}  // namespace spore::prims
