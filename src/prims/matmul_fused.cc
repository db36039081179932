// SPDX-License-Identifier: Apache-2.0
// The matmul_fused primitive: type inference and the reference kernel (the product, then the
// epilogue through the unfused primitives' own kernels, prims/epilogue.h). oneDNN kernel
// (post-ops): src/backends/cpu/onednn_matmul.cc.
#include "prims/matmul_fused.h"

namespace spore::prims {
namespace {

void infer_matmul_fused(const MatmulFusedAttrs& a, std::span<const TensorType> in, OutTypes& out) {
  const PostOpList p = a.post_list();
  (void)resolve_epilogue(p);
  const size_t nmm = a.first_operand();
  SPORE_CHECK(in.size() == nmm + p.num_operands(), "[matmul_fused] takes a, b", a.has_bias ? ", bias" : "", " and ",
              p.num_operands(), " post-op operands, got ", in.size(), " inputs");
  const MatmulAttrs m = a.matmul();
  try {
    matmul_primitive().infer(&m, in.first(nmm), out);
  } catch (const Error& e) {  // the product's errors, under this op's name
    std::string msg = e.what();
    if (msg.starts_with("[matmul]")) msg.replace(0, 8, "[matmul_fused]");
    throw Error(msg);
  }
  SPORE_CHECK(out.t[0].shape.size() <= static_cast<size_t>(kMaxEpilogueRank), "[matmul_fused] result ", shape_str(out.t[0].shape),
              " has rank ", out.t[0].shape.size(), "; the epilogue takes at most ", kMaxEpilogueRank,
              " dims (leave the product unfused)");
  SPORE_CHECK(is_floating(out.t[0].dtype), "[matmul_fused] computes in a float ",
              "dtype; got ", dtype_name(out.t[0].dtype), " operands (leave integer products unfused)");
  check_post_operands(p, in, out.t[0].shape, out.t[0].dtype);
}

const Primitive& matmul_fused_def() {
  static const Primitive& p = [&]() -> const Primitive& {
    PrimitiveSpec<MatmulFusedAttrs> spec;
    spec.name = kMatmulFusedOp;
    spec.compiler_made = true;
    spec.fusion = FusionClass::Matmul;
    spec.infer = infer_matmul_fused;
    spec.cost = [](const MatmulFusedAttrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
      const MatmulAttrs m = a.matmul();
      return epilogue_cost(matmul_primitive().cost(&m, in.first(a.first_operand()), out), a.post_list(), in, out[0]);
    };
    Primitive& q = define_primitive(spec);
    q.add_kernel({.device = DeviceType::CPU, .name = "reference",
                  .run = [](const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out,
                            const KernelContext& ctx) {
                    const auto& a = *static_cast<const MatmulFusedAttrs*>(attrs);
                    matmul_reference(a.matmul(), in.first(a.first_operand()), out);
                    run_epilogue(a.post_list(), resolve_epilogue(a.post_list()), 0, in, out[0], ctx);
                  }});
    return q;
  }();
  return p;
}

[[maybe_unused]] const bool registered = (matmul_fused_def(), true);

}  // namespace

PostOpList MatmulFusedAttrs::post_list() const {
  return {kMatmulFusedOp, post_kind, post_ops, post_a, post_b, first_operand()};
}

const Primitive& matmul_fused_primitive() { return matmul_fused_def(); }

}  // namespace spore::prims
