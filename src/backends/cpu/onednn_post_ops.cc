// SPDX-License-Identifier: Apache-2.0
#include "backends/cpu/onednn_post_ops.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace spore::cpu::onednn {
namespace {

using prims::PostKind;
using alg = dnnl::algorithm;

struct Eltwise {
  alg kind;
  float alpha = 0, beta = 0;
};

// Unary ops as oneDNN eltwise. ReLU, leaky ReLU and ReLU6 round as ours do, but oneDNN's ReLU and
// clip are max/min instructions, which turn a NaN into the bound (ours propagate it): the
// documented O2 deviation (conv_epilogue.h). The smooth ones use oneDNN's own approximations,
// within the O2 tolerance of ours.
std::optional<Eltwise> unary_eltwise(UnaryOp op, double a) {
  switch (op) {
    case UnaryOp::relu: return Eltwise{alg::eltwise_relu};
    case UnaryOp::leaky_relu: return Eltwise{alg::eltwise_relu, static_cast<float>(a)};
    case UnaryOp::relu6: return Eltwise{alg::eltwise_clip, 0.f, 6.f};
    case UnaryOp::sigmoid: return Eltwise{alg::eltwise_logistic};
    case UnaryOp::tanh: return Eltwise{alg::eltwise_tanh};
    case UnaryOp::gelu: return Eltwise{alg::eltwise_gelu_erf};
    case UnaryOp::gelu_tanh: return Eltwise{alg::eltwise_gelu_tanh};
    case UnaryOp::silu: return Eltwise{alg::eltwise_swish, 1.f};
    case UnaryOp::hardswish: return Eltwise{alg::eltwise_hardswish};
    case UnaryOp::elu: return Eltwise{alg::eltwise_elu, static_cast<float>(a)};
    default: return std::nullopt;
  }
}

constexpr float kInf = std::numeric_limits<float>::infinity();

// v op s (or s op v when swapped) for a literal s, as clip or linear.
std::optional<Eltwise> scalar_eltwise(BinaryOp op, double s, bool swapped) {
  const auto v = static_cast<float>(s);
  switch (op) {
    case BinaryOp::maximum: return Eltwise{alg::eltwise_clip, v, kInf};
    case BinaryOp::minimum: return Eltwise{alg::eltwise_clip, -kInf, v};
    case BinaryOp::add: return Eltwise{alg::eltwise_linear, 1.f, v};
    case BinaryOp::mul: return Eltwise{alg::eltwise_linear, v, 0.f};
    case BinaryOp::sub: return swapped ? Eltwise{alg::eltwise_linear, -1.f, v} : Eltwise{alg::eltwise_linear, 1.f, -v};
    default: return std::nullopt;
  }
}

std::optional<alg> binary_alg(BinaryOp op, bool swapped) {
  switch (op) {
    case BinaryOp::add: return alg::binary_add;
    case BinaryOp::mul: return alg::binary_mul;
    case BinaryOp::maximum: return alg::binary_max;
    case BinaryOp::minimum: return alg::binary_min;
    case BinaryOp::sub: return swapped ? std::nullopt : std::optional(alg::binary_sub);
    case BinaryOp::div: return swapped ? std::nullopt : std::optional(alg::binary_div);
    default: return std::nullopt;
  }
}

// The operand's dims right-aligned to the result's rank, 1 where it broadcasts.
std::vector<int64_t> aligned_dims(const TensorType& operand, const TensorType& out) {
  std::vector<int64_t> d(out.shape.size(), 1);
  const size_t off = out.shape.size() - operand.shape.size();
  for (size_t i = 0; i < operand.shape.size(); ++i) d[off + i] = operand.shape[i];
  return d;
}

}  // namespace

PostOpPlan map_post_ops(const prims::PostOpList& a, const prims::Epilogue& ep, std::span<const TensorType> in,
                        const TensorType& out, size_t limit, bool allow_sum) {
  PostOpPlan p;
  size_t operand = a.first_operand;
  int index = 0;  // oneDNN's post-op index (consecutive clips share one)
  std::optional<Eltwise> pending;  // the last eltwise, appended when the next post-op comes
  auto flush = [&] {
    if (pending) p.ops.append_eltwise(1.f, pending->kind, pending->alpha, pending->beta), ++index;
    pending.reset();
  };
  for (size_t i = 0; i < std::min(limit, a.size()); ++i) {
    std::optional<Eltwise> e;
    const double pa = a.a[i], pb = a.b[i];
    switch (a.kind(i)) {
      case PostKind::Unary:
        e = unary_eltwise(static_cast<UnaryOp>(ep.steps[i].code), pa);
        break;
      case PostKind::BinaryScalar:
        // The unfused graph holds the literal in the conv's dtype: round it as that does.
        e = scalar_eltwise(static_cast<BinaryOp>(ep.steps[i].code),
                           out.dtype == DType::BFloat16 ? static_cast<float>(BFloat16(static_cast<float>(pa))) : pa,
                           pb == 1);
        break;
      case PostKind::Binary: {
        const std::optional<alg> b = binary_alg(static_cast<BinaryOp>(ep.steps[i].code), pa == 1);
        if (!b) return flush(), p;
        flush();
        const TensorType& ot = in[operand];
        if (allow_sum && *b == alg::binary_add && p.sum_input < 0 && ot.shape == out.shape) {
          p.ops.append_sum(1.f);
          p.sum_input = static_cast<int>(operand++);
          ++index;
          p.mapped = i + 1;
          continue;
        }
        p.ops.append_binary(*b, ot.channels_last ? type_desc(ot) : plain_desc(aligned_dims(ot, out), ot.dtype));
        p.operands.push_back({index++, operand++, ot.channels_last});
        p.mapped = i + 1;
        continue;
      }
    }
    if (!e) return flush(), p;
    if (pending && pending->kind == e->kind) {
      // oneDNN 2.6 computes two consecutive eltwise post-ops of one kind wrongly here (a clip
      // after a clip gave values off by 2.0): a clip of a clip with overlapping ranges is one
      // clip (ReLU6, ONNX Clip); any other such pair stops the mapping.
      if (e->kind != alg::eltwise_clip || e->alpha > pending->beta || pending->alpha > e->beta) return flush(), p;
      pending->alpha = std::max(pending->alpha, e->alpha);
      pending->beta = std::min(pending->beta, e->beta);
    } else {
      flush();
      pending = e;
    }
    p.mapped = i + 1;
  }
  flush();
  return p;
}

bool operand_matches(const PostOpPlan::Operand& o, std::span<const Buffer> in) {
  const Buffer& b = in[o.input];
  return o.channels_last ? is_channels_last(b) : b.contiguous();
}

bool operands_match(const PostOpPlan& p, std::span<const Buffer> in) {
  for (const PostOpPlan::Operand& o : p.operands)
    if (!operand_matches(o, in)) return false;
  return true;
}

}  // namespace spore::cpu::onednn
