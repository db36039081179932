// SPDX-License-Identifier: Apache-2.0
// Rules of batch_norm_grad, the backward of a training batch norm (batch_norm.cc emits it). It
// is a fused node over a closed-form formula (prims::decompose_batch_norm_grad): its jvp and
// vjp are those of that formula, taken by nested autodiff, so grad of grad through a batch norm
// is as exact as the formula and needs no hand-derived second-order rule.
#include "autodiff/rules/nn_parts.h"
#include "prims/batch_norm_grad.h"
#include "prims/norm_decompositions.h"
#include "spore/autodiff.h"
#include "spore/ops/creation.h"

namespace spore::autodiff {
namespace {

TreeFn formula(const void* attrs) {
  return [attrs](const std::vector<TensorTree>& args) {
    std::vector<Tensor> in, out;
    for (const TensorTree& a : args) in.push_back(a.tensor());
    prims::decompose_batch_norm_grad(attrs, in, out);
    return TensorTree(out);
  };
}

void batch_norm_grad_jvp(const JvpArgs& a, std::span<Tensor> out) {
  std::vector<TensorTree> args(a.inputs.begin(), a.inputs.end()), tangents;
  for (const Tensor& t : a.tangents) tangents.push_back(t.defined() ? TensorTree(t) : TensorTree());
  auto [y, ty] = autodiff::jvp("batch_norm_grad jvp", formula(a.attrs), args, tangents);
  const std::vector<Tensor> t = ty.leaves();
  for (size_t j = 0; j < out.size() && j < t.size(); ++j) out[j] = t[j];
}

void batch_norm_grad_vjp(const VjpArgs& a, std::span<Tensor> in) {
  std::vector<int> wrt;
  for (size_t i = 0; i < a.needs.size(); ++i)
    if (a.needs[i]) wrt.push_back(static_cast<int>(i));
  if (wrt.empty()) return;
  std::vector<Tensor> cts;
  for (size_t j = 0; j < a.out_types.size(); ++j)
    cts.push_back(a.cotangents[j].defined() ? a.cotangents[j] : ops::zeros(a.out_types[j].shape, {a.out_types[j].dtype}));
  std::vector<TensorTree> args(a.inputs.begin(), a.inputs.end());
  auto r = autodiff::vjp("batch_norm_grad vjp", formula(a.attrs), args, wrt, false, false);
  const std::vector<TensorTree> g = r.pullback(TensorTree(cts));
  for (size_t k = 0; k < wrt.size(); ++k)
    if (g[k].is_tensor()) in[static_cast<size_t>(wrt[k])] = g[k].tensor();
}

}  // namespace

void install_batch_norm_grad_rules() {
  def_rules(prims::batch_norm_grad_primitive(), {~0u, 0u}, batch_norm_grad_jvp, batch_norm_grad_vjp);
}

}  // namespace spore::autodiff
