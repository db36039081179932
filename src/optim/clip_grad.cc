// SPDX-License-Identifier: Apache-2.0
#include "spore/optim/clip_grad.h"

#include <cmath>

#include "spore/ops.h"

namespace spore::optim {
namespace {

// The p-norm of all elements; ops::norm covers 1, 2 and inf.
Tensor p_norm(const Tensor& x, double p) {
  if (p == 1.0 || p == 2.0 || std::isinf(p)) return ops::norm(x, p);
  return ops::pow(ops::sum(ops::pow(ops::abs(x), p)), 1.0 / p);
}

}  // namespace

Tensor clip_grad_norm_(std::vector<Tensor>& grads, double max_norm, double norm_type) {
  SPORE_CHECK(norm_type > 0 && !std::isnan(norm_type), "[clip_grad_norm_] norm_type ", norm_type,
              " is not a norm; use a positive p or INFINITY");
  SPORE_CHECK(max_norm >= 0, "[clip_grad_norm_] max_norm ", max_norm, " is negative");
  std::vector<Tensor> norms;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    SPORE_CHECK(is_floating(grads[i].dtype()), "[clip_grad_norm_] gradient ", i, " is ",
                dtype_name(grads[i].dtype()), "; gradients are floating-point tensors");
    norms.push_back(p_norm(grads[i], norm_type));
  }
  if (norms.empty()) return ops::scalar_tensor(0.0, DType::Float32);
  // As PyTorch: the norm of the per-tensor norms (stacked in the first gradient's dtype).
  const DType dt = norms[0].dtype();
  for (Tensor& n : norms) n = ops::cast(n, dt);
  const Tensor total = norms.size() == 1 ? norms[0] : p_norm(ops::stack(norms), norm_type);
  const Tensor coef = ops::minimum(max_norm / (total + 1e-6), ops::ones_like(total));
  for (Tensor& g : grads)
    if (g.defined()) ops::copy_(g, g * ops::cast(coef, g.dtype()));
  return total;
}

void clip_grad_value_(std::vector<Tensor>& grads, double clip) {
  SPORE_CHECK(clip >= 0, "[clip_grad_value_] clip ", clip, " is negative; gradients are clamped to [-clip, clip]");
  for (Tensor& g : grads)
    if (g.defined()) ops::copy_(g, ops::clamp(g, -clip, clip));
}

}  // namespace spore::optim
