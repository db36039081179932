// SPDX-License-Identifier: Apache-2.0
#pragma once
// The reduction family's rules are split by kind: reduction.cc (reduce_*, logsumexp, var, std)
// installs the scans (scan.cc) and the softmaxes (softmax.cc) too. Private to src/autodiff/rules.
#include "autodiff/rules/util.h"

namespace spore::autodiff {

void install_scan_rules();     // cumsum, cumprod
void install_softmax_rules();  // softmax, log_softmax

namespace rules {

/// A weak literal: takes the dtype of the tensor it meets, so masks and fills keep dtypes.
inline Tensor weak(double v) { return ops::weak_scalar(v); }

}  // namespace rules
}  // namespace spore::autodiff
