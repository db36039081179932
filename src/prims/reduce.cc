// SPDX-License-Identifier: Apache-2.0
// The reduction primitives (reduce.h): one per ReduceOp, all run by the chunked engine of
// reduce_engine.h with the element rules of reduce_ops.h. 16-bit floats accumulate in float32,
// integers and bool in int64. Two-pass kinds (var/std: mean then squared deviations; logsumexp:
// max then sum of exp) run the engine twice with the first pass as a per-output parameter.
#include "prims/reduce.h"
#include "prims/elementwise_infer.h"

#include <array>
#include <cmath>
#include <vector>

#include "backends/cpu/elementwise_loop.h"
#include "prims/reduce_engine.h"
#include "prims/reduce_ops.h"

namespace spore::prims {
namespace {

using namespace reduce_detail;

constexpr bool float_only(ReduceOp op) {
  return op == ReduceOp::Mean || op == ReduceOp::Norm1 || op == ReduceOp::Norm2 || op == ReduceOp::NormInf ||
         op == ReduceOp::LogSumExp || op == ReduceOp::Var || op == ReduceOp::Std;
}

template <class V>
void write_out(const Buffer& y, const V* v, int64_t n) {
  visit_dtype(y.dtype, [&](auto tag) {
    using Out = decltype(tag);
    cpu::convert_n(v, y.ptr<Out>(), n);
  });
}

template <ReduceOp Op, class In, class C>
void run_typed(const ReduceAttrs& a, const Geometry& g, const In* x, const Buffer& y) {
  const int64_t M = g.M, R = g.R;
  if constexpr (Op == ReduceOp::All || Op == ReduceOp::Any) {
    std::vector<uint8_t> acc_bytes(static_cast<size_t>(M));  // vector<bool> is packed
    bool* acc = reinterpret_cast<bool*>(acc_bytes.data());
    if constexpr (Op == ReduceOp::All) reduce_to_acc<AllK<C>, In, C>(g, x, nullptr, acc);
    else reduce_to_acc<AnyK<C>, In, C>(g, x, nullptr, acc);
    write_out(y, acc, M);
  } else {
    std::vector<C> acc(static_cast<size_t>(M));
    C* v = acc.data();
    if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Mean) {
      reduce_to_acc<SumK<C>, In, C>(g, x, nullptr, v);
      if constexpr (Op == ReduceOp::Mean)
        for (int64_t o = 0; o < M; ++o) v[o] /= static_cast<C>(R);
    } else if constexpr (Op == ReduceOp::Prod) {
      reduce_to_acc<ProdK<C>, In, C>(g, x, nullptr, v);
    } else if constexpr (Op == ReduceOp::Max) {
      reduce_to_acc<MaxK<C>, In, C>(g, x, nullptr, v);
    } else if constexpr (Op == ReduceOp::Min) {
      reduce_to_acc<MinK<C>, In, C>(g, x, nullptr, v);
    } else if constexpr (Op == ReduceOp::Norm1) {
      reduce_to_acc<AbsSumK<C>, In, C>(g, x, nullptr, v);
    } else if constexpr (Op == ReduceOp::Norm2) {
      reduce_to_acc<SqDevK<C>, In, C>(g, x, nullptr, v);
      for (int64_t o = 0; o < M; ++o) v[o] = std::sqrt(v[o]);
    } else if constexpr (Op == ReduceOp::NormInf) {
      reduce_to_acc<AbsMaxK<C>, In, C>(g, x, nullptr, v);
    } else if constexpr (Op == ReduceOp::LogSumExp) {
      std::vector<C> m(static_cast<size_t>(M));
      reduce_to_acc<MaxK<C>, In, C>(g, x, nullptr, m.data());
      // Shift by the max for range; an infinite max shifts by 0 so +inf stays +inf and an
      // all -inf row gives log(0) = -inf, as PyTorch.
      for (auto& mo : m) mo = std::isinf(mo) ? C(0) : mo;
      reduce_to_acc<ExpSumK<C>, In, C>(g, x, m.data(), v);
      for (int64_t o = 0; o < M; ++o) v[o] = std::log(v[o]) + m[static_cast<size_t>(o)];
    } else if constexpr (Op == ReduceOp::Var || Op == ReduceOp::Std) {
      // Two passes (mean, then squared deviations) for accuracy on data far from zero.
      std::vector<C> mean(static_cast<size_t>(M));
      reduce_to_acc<SumK<C>, In, C>(g, x, nullptr, mean.data());
      for (auto& mo : mean) mo /= static_cast<C>(R);
      reduce_to_acc<SqDevK<C>, In, C>(g, x, mean.data(), v);
      const C dof = static_cast<C>(std::max<int64_t>(0, R - a.correction));
      for (int64_t o = 0; o < M; ++o) v[o] = Op == ReduceOp::Std ? std::sqrt(v[o] / dof) : v[o] / dof;
    }
    write_out(y, v, M);
  }
}

template <ReduceOp Op>
void run_reduce(const void* attrs, std::span<const Buffer> in, std::span<const Buffer> out, const KernelContext&) {
  const auto& a = *static_cast<const ReduceAttrs*>(attrs);
  const Buffer& x = in[0];
  std::array<bool, 16> reduced{};
  for (int64_t ax : a.axes)
    if (ax < x.ndim) reduced[static_cast<size_t>(ax)] = true;
  const Geometry g = make_geometry(x, reduced.data());
  visit_dtype(x.dtype, [&](auto tag) {
    using In = decltype(tag);
    using C = std::conditional_t<std::is_floating_point_v<compute_t<In>>, compute_t<In>, int64_t>;
    if constexpr (float_only(Op) && !std::is_floating_point_v<C>) {
      SPORE_ASSERT(false, "reduction reached with dtype ", dtype_name(x.dtype));
    } else {
      run_typed<Op, In, C>(a, g, x.ptr<In>(), out[0]);
    }
  });
}

const char* op_name(ReduceOp op) {
  static constexpr const char* names[kNumReduceOps] = {
      "reduce_sum", "reduce_mean", "reduce_prod", "reduce_max", "reduce_min", "reduce_all", "reduce_any",
      "reduce_norm1", "reduce_norm2", "reduce_norm_inf", "logsumexp", "var", "std"};
  return names[static_cast<int>(op)];
}

template <ReduceOp Op>
const Primitive* define_reduce() {
  PrimitiveSpec<ReduceAttrs> spec;
  spec.name = op_name(Op);
  spec.fusion = FusionClass::Reduction;
  spec.num_inputs = 1;
  // sum/mean's vjp needs only the input (for its shape); all/any are not differentiable.
  spec.residuals = Op == ReduceOp::Sum || Op == ReduceOp::Mean ? Residuals{1u, 0u}
                   : Op == ReduceOp::All || Op == ReduceOp::Any ? Residuals{0u, 0u}
                                                                 : Residuals{1u, 1u};
  spec.infer = [](const ReduceAttrs& a, std::span<const TensorType> in, OutTypes& out) {
    out.add(reduce_out_dtype(Op, in[0].dtype), reduce_shape(in[0].shape, a.axes, a.keepdims));
  };
  spec.cost = [](const ReduceAttrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
    const double n = cost_numel(in[0].shape), m = cost_numel(out[0].shape);
    const double passes = (Op == ReduceOp::Var || Op == ReduceOp::Std || Op == ReduceOp::LogSumExp) ? 2 : 1;
    return Cost{n * passes, n * passes * dtype_size(in[0].dtype) + m * dtype_size(out[0].dtype)};
  };
  Primitive& p = define_primitive(spec);
  p.add_kernel({.device = DeviceType::CPU, .name = "cpu_chunked", .run = &run_reduce<Op>});
  return &p;
}

const std::array<const Primitive*, kNumReduceOps>& table() {
  static const std::array<const Primitive*, kNumReduceOps> t = {
      define_reduce<ReduceOp::Sum>(),     define_reduce<ReduceOp::Mean>(),  define_reduce<ReduceOp::Prod>(),
      define_reduce<ReduceOp::Max>(),     define_reduce<ReduceOp::Min>(),   define_reduce<ReduceOp::All>(),
      define_reduce<ReduceOp::Any>(),     define_reduce<ReduceOp::Norm1>(), define_reduce<ReduceOp::Norm2>(),
      define_reduce<ReduceOp::NormInf>(), define_reduce<ReduceOp::LogSumExp>(), define_reduce<ReduceOp::Var>(),
      define_reduce<ReduceOp::Std>()};
  return t;
}

[[maybe_unused]] const bool registered = (table(), true);

}  // namespace

const Primitive& reduce_primitive(ReduceOp op) { return *table()[static_cast<int>(op)]; }

DType reduce_out_dtype(ReduceOp op, DType in) {
  if (op == ReduceOp::All || op == ReduceOp::Any) return DType::Bool;
  if ((op == ReduceOp::Sum || op == ReduceOp::Prod) && is_integral(in, true)) return DType::Int64;
  return in;
}

Shape reduce_shape(const Shape& shape, std::span<const int64_t> axes, bool keepdims) {
  Shape s;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool r = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (!r) s.push_back(shape[d]);
    else if (keepdims) s.push_back(1);
  }
  return s;
}

}  // namespace spore::prims
