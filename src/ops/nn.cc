// SPDX-License-Identifier: Apache-2.0
// Public nn ops (softmax family and the norms): check arguments, then call the primitives.
// Losses are in loss.cc, attention in attention.cc.
#include <cmath>
#include <limits>

#include "ops/nn_checks.h"
#include "runtime/trace_hooks.h"
#include "prims/batch_norm.h"
#include "prims/embedding.h"
#include "prims/factories.h"
#include "prims/group_norm.h"
#include "prims/interpolate.h"
#include "prims/layer_norm.h"
#include "prims/rms_norm.h"
#include "prims/softmax.h"
#include "runtime/dispatch.h"
#include "spore/ops/elementwise.h"
#include "spore/ops/nn.h"

namespace spore::ops {

namespace {

// Checks normalized_shape against the trailing dims of x; returns the first normalized axis.
int64_t trailing_axis(const char* op, const Tensor& x, const Shape& normalized_shape) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool ok = k <= x.dim();
  for (int64_t i = 0; ok && i < k; ++i) ok = x.shape()[x.dim() - k + i] == normalized_shape[i];
  SPORE_CHECK(ok, "[", op, "] normalized_shape ", shape_str(normalized_shape), " does not match the trailing dims of ",
              "input shape ", shape_str(x.shape()), "; pass the last dims of the input");
  return x.dim() - k;
}

// Writes `value` (the new running statistic, any float dtype) into `dst`'s own storage, element
// by element through its strides, and bumps the storage version so saved copies see the change.
void write_running(Tensor& dst, const Tensor& value) {
  if (runtime::tls_statistics_frozen != 0) return;  // a recomputation: the forward made this update
  // Under jit or vmap the trace functionalizes the write: the statistics become state outputs
  // ("updates input j") that the caller writes back after the run.
  if (runtime::tls_open_traces != 0 && runtime::trace_hooks().write != nullptr &&
      runtime::trace_hooks().write(dst, value, "batch_norm", true))
    return;
  // Types only (a meta statistics tensor outside any trace): nothing to write.
  if (dst.device().type == DeviceType::Meta) return;
  SPORE_CHECK(value.device().type != DeviceType::Meta,
              "[batch_norm] the new running statistics are values of a trace that is no longer open; update them "
              "inside the jit or vmap call that computes them");
  const Tensor v = value.to(DType::Float64).contiguous();
  const double* src = v.data<double>();
  const int64_t n = dst.numel(), stride = dst.dim() == 0 ? 0 : dst.strides()[0];
  visit_dtype(dst.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      T* p = static_cast<T*>(dst.data_ptr());
      for (int64_t i = 0; i < n; ++i) p[i * stride] = static_cast<T>(static_cast<compute_t<T>>(src[i]));
    }
  });
  dst.storage()->bump_version();
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) {
  nn_detail::check_float("softmax", x);
  const int ax = x.dim() == 0 ? (normalize_axis(axis, 1, "softmax"), 0) : normalize_axis(axis, x.dim(), "softmax");
  return runtime::call(prims::softmax_primitive(), prims::SoftmaxAttrs{ax}, {x});
}

Tensor log_softmax(const Tensor& x, int64_t axis) {
  nn_detail::check_float("log_softmax", x);
  const int ax =
      x.dim() == 0 ? (normalize_axis(axis, 1, "log_softmax"), 0) : normalize_axis(axis, x.dim(), "log_softmax");
  return runtime::call(prims::log_softmax_primitive(), prims::SoftmaxAttrs{ax}, {x});
}

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  nn_detail::check_float("layer_norm", x);
  const int64_t axis = trailing_axis("layer_norm", x, normalized_shape);
  nn_detail::check_param("layer_norm", "weight", weight, x, normalized_shape);
  nn_detail::check_param("layer_norm", "bias", bias, x, normalized_shape);
  prims::LayerNormAttrs a{axis, eps, weight.defined(), bias.defined()};
  auto outs = runtime::dispatch(prims::layer_norm_primitive(), &a, nn_detail::inputs(x, weight, bias));
  return std::move(outs.t[0]);
}

Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias, double eps) {
  nn_detail::check_float("group_norm", x);
  SPORE_CHECK(x.dim() >= 2, "[group_norm] needs an input (N, C, *), got shape ", shape_str(x.shape()));
  const int64_t C = x.shape()[1];
  SPORE_CHECK(groups > 0 && C % groups == 0, "[group_norm] ", C, " channels (input shape ", shape_str(x.shape()),
              ") cannot be split into ", groups, " groups; use a divisor of ", C);
  nn_detail::check_param("group_norm", "weight", weight, x, {C});
  nn_detail::check_param("group_norm", "bias", bias, x, {C});
  prims::GroupNormAttrs a{groups, eps, weight.defined(), bias.defined()};
  return std::move(runtime::dispatch(prims::group_norm_primitive(), &a, nn_detail::inputs(x, weight, bias)).t[0]);
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps) {
  nn_detail::check_float("rms_norm", x);
  const int64_t axis = trailing_axis("rms_norm", x, normalized_shape);
  nn_detail::check_param("rms_norm", "weight", weight, x, normalized_shape);
  // PyTorch's default: the machine epsilon of the input dtype.
  const double e = eps ? *eps
                   : x.dtype() == DType::Float64  ? std::numeric_limits<double>::epsilon()
                   : x.dtype() == DType::Float16  ? 0.0009765625
                   : x.dtype() == DType::BFloat16 ? 0.0078125
                                                  : static_cast<double>(std::numeric_limits<float>::epsilon());
  prims::RmsNormAttrs a{axis, e, weight.defined()};
  return std::move(runtime::dispatch(prims::rms_norm_primitive(), &a, nn_detail::inputs(x, weight)).t[0]);
}

Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, Tensor running_mean, Tensor running_var,
                  bool training, double momentum, double eps) {
  nn_detail::check_float("batch_norm", x);
  SPORE_CHECK(x.dim() >= 2, "[batch_norm] needs an input (N, C, *), got shape ", shape_str(x.shape()));
  const int64_t C = x.shape()[1];
  SPORE_CHECK(running_mean.defined() == running_var.defined(),
              "[batch_norm] give both running_mean and running_var or neither");
  SPORE_CHECK(training || running_mean.defined(),
              "[batch_norm] inference (training=false) needs running_mean and running_var");
  nn_detail::check_param("batch_norm", "weight", weight, x, {C});
  nn_detail::check_param("batch_norm", "bias", bias, x, {C});
  for (const Tensor* r : {&running_mean, &running_var})
    if (r->defined()) {
      SPORE_CHECK(r->shape() == Shape{C}, "[batch_norm] running statistics have shape ", shape_str(r->shape()),
                  " but input shape ", shape_str(x.shape()), " needs (", C, ",)");
      SPORE_CHECK(is_floating(r->dtype()), "[batch_norm] running statistics must be floating, got ",
                  dtype_name(r->dtype()));
    }
  const int64_t count = x.numel() / std::max<int64_t>(C, 1);
  SPORE_CHECK(!training || count > 1, "[batch_norm] training needs more than 1 value per channel, got input shape ",
              shape_str(x.shape()));
  // Only inference reads the running stats (in x's dtype); training updates the originals below.
  const Tensor rm = training ? Tensor() : to_dtype(running_mean, x.dtype());
  const Tensor rv = training ? Tensor() : to_dtype(running_var, x.dtype());
  prims::BatchNormAttrs a{training, eps, weight.defined(), bias.defined(), !training};
  auto outs = runtime::dispatch(prims::batch_norm_primitive(), &a, nn_detail::inputs(x, weight, bias, rm, rv));
  if (training && running_mean.defined()) {
    // PyTorch's update: the running variance takes the unbiased batch variance. The primitive
    // stays pure and the op writes the result in place (under jit: a state output, see
    // write_running). The count n enters as a dim_value node, not a literal n / (n - 1): the
    // traces of two batch sizes then differ only in sizes, and jit makes one graph over a
    // symbolic batch for the whole training step (transforms/jit_dynamic.h). The float64
    // arithmetic is the literal's, bit for bit.
    const Tensor n = runtime::call(prims::dim_value_primitive(), prims::DimValueAttrs{count, DType::Float64}, {});
    const Tensor unbias = n / (n - 1.0);
    const Tensor m = to_dtype(outs.t[1], DType::Float64), v = to_dtype(outs.t[2], DType::Float64);
    const Tensor new_mean = to_dtype(running_mean, DType::Float64) * (1 - momentum) + m * momentum;
    const Tensor new_var = to_dtype(running_var, DType::Float64) * (1 - momentum) + v * (unbias * momentum);
    write_running(running_mean, new_mean);
    write_running(running_var, new_var);
  }
  return std::move(outs.t[0]);
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  SPORE_CHECK(weight.defined() && indices.defined(), "[embedding] an input is an undefined tensor");
  SPORE_CHECK(weight.dim() == 2, "[embedding] weight must be 2-D (num_embeddings, dim), got shape ",
              shape_str(weight.shape()));
  SPORE_CHECK(is_integral(indices.dtype()), "[embedding] indices must be an integer tensor, got ",
              dtype_name(indices.dtype()), "; cast to int64");
  return runtime::call(prims::embedding_primitive(), NoAttrs{}, {weight, to_dtype(indices, DType::Int64)});
}

Tensor interpolate(const Tensor& x, std::array<int64_t, 2> size, InterpolateMode mode, bool align_corners) {
  nn_detail::check_float("interpolate", x);
  SPORE_CHECK(x.dim() == 4, "[interpolate] needs an input (N, C, H, W), got shape ", shape_str(x.shape()));
  SPORE_CHECK(size[0] > 0 && size[1] > 0, "[interpolate] output size must be positive, got (", size[0], ", ", size[1],
              ")");
  SPORE_CHECK(mode == InterpolateMode::Bilinear || !align_corners,
              "[interpolate] align_corners applies only to bilinear mode; leave it false for nearest");
  SPORE_CHECK(x.shape()[2] > 0 && x.shape()[3] > 0, "[interpolate] input shape ", shape_str(x.shape()),
              " has an empty spatial dim");
  prims::InterpolateAttrs a{size[0], size[1], mode == InterpolateMode::Bilinear, align_corners};
  return runtime::call(prims::interpolate_primitive(), a, {x});
}

}  // namespace spore::ops
