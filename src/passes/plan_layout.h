// SPDX-License-Identifier: Apache-2.0
#pragma once
// Layout assignment inside a plan (shared/ARCHITECTURE.md, "Layout"): conv chains keep their
// activations channels-last (NHWC), the layout oneDNN's fastest kernels here compute in
// (brgconv, brgconv_1x1 and brdgmm_dw pick nhwc), so consecutive convs pass them on without the
// reorder to NCHW and back that each conv otherwise does. Channels-last is a strided layout:
// any kernel reads such a value correctly; the pass only chooses it where the value's maker and
// every reader compute in it (KernelDef::takes_channels_last). Public tensors stay as they are:
// only arena values (not plan inputs or outputs, not donated, not viewed) change. Set
// SPORE_PLAN_LAYOUT=plain to keep every value row-major.
//
// Kernels that compute channels-last: oneDNN's conv, conv_fused and pooling, inference
// batch_norm, and every elementwise kernel (unfused or fused: they iterate in their output's
// memory order; they and batch_norm only pass the layout on, see plan_layout.cc). A step with several results of rank 3
// or more (a fused group) turns them channels-last together, as its kernel writes all of them in
// one layout; KernelDef::takes_channels_last's -1 then stands for all of them. A training step
// stays NCHW: training batch_norm and batch_norm_grad do not take channels-last (see
// prims/batch_norm.cc for the measurement behind that).
#include <cstdint>
#include <vector>

#include "runtime/plan.h"

namespace spore::passes {

/// Stores channels-last the arena values of `plan` whose maker and readers compute in it.
/// `producer[s]` is the step writing slot s (-1 for inputs, literals and views). Runs before the
/// kernels are prepared: they are prepared for the layouts chosen here.
void assign_layouts(runtime::Plan& plan, const std::vector<int64_t>& producer);

}  // namespace spore::passes
