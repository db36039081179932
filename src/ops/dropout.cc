// SPDX-License-Identifier: Apache-2.0
// ops::dropout (declared in spore/ops/nn.h): one dropout primitive keyed by the default generator.
#include "prims/dropout.h"
#include "prims/random_key.h"
#include "runtime/dispatch.h"
#include "spore/ops/creation.h"
#include "spore/ops/nn.h"
#include "spore/ops/random.h"

namespace spore::ops {

Tensor dropout(const Tensor& x, double p, bool training) {
  SPORE_CHECK(x.defined(), "[dropout] input is an undefined tensor");
  SPORE_CHECK(p >= 0 && p <= 1, "[dropout] p must be in [0, 1], got ", p);
  SPORE_CHECK(is_floating(x.dtype()), "[dropout] needs a floating tensor, got ", dtype_name(x.dtype()),
              "; cast it to float32");
  if (!training || p == 0) return x;
  // Everything is dropped: no mask to draw, and 1/(1-p) would be infinite.
  if (p == 1) return zeros_like(x);
  const RandomKey key = prims::draw_key(x.device(), x.numel());
  return runtime::call(prims::dropout_primitive(), prims::DropoutAttrs{p, key.seed, key.offset}, {x});
}

}  // namespace spore::ops
