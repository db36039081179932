// SPDX-License-Identifier: Apache-2.0
#pragma once
// Decompositions of the fused nn primitives into public ops (softmax, log_softmax and the
// norms): what transforms without their own rule, backends without a kernel and the fusion
// pass use. Each computes every output of its primitive; 16-bit inputs compute in float32.
#include <span>
#include <vector>

#include "spore/tensor.h"

namespace spore::prims {

void decompose_softmax(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out);
void decompose_log_softmax(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out);
void decompose_layer_norm(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out);
void decompose_rms_norm(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out);
void decompose_group_norm(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out);
void decompose_batch_norm(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out);
/// batch_norm_grad's formula; also what its own jvp and vjp differentiate.
void decompose_batch_norm_grad(const void* attrs, std::span<const Tensor> in, std::vector<Tensor>& out);

}  // namespace spore::prims
