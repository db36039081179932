// SPDX-License-Identifier: Apache-2.0
// vmap rules of the random primitives with tensor inputs. A random primitive's key is in its
// attributes, so every lane draws the same numbers (see vmap_rules.h): exactly what running the
// traced function once per lane gives.
#include "prims/dropout.h"
#include "prims/random.h"
#include "transforms/vmap_rules/vmap_rules.h"

namespace spore::transforms::vmap_rules {
namespace {

// dropout(x) = x * mask / (1 - p) with the mask a pure function of (key, per-example index):
// dropout of ones of the per-example shape is exactly mask / (1 - p) (0 or the kernel's own
// scale), and x times it rounds exactly as the kernel does, lane by lane.
void dropout(const Primitive& p, const void* attrs, std::span<const Tensor> in, std::span<const int>,
             std::vector<Tensor>& out, std::vector<int>& out_axes) {
  const Tensor& x = in[0];
  const Shape lane(std::span<const Dim>(x.shape()).subspan(1));
  const Tensor scale = call(p, attrs, std::vector<Tensor>{ops::ones(lane, {x.dtype()})})[0];
  out = {x * scale};
  all_batched(out, out_axes);
}

}  // namespace

void install_random_vmap_rules() {
  def_vmap(prims::dropout_primitive(), &dropout);
  // bernoulli(p): each lane compares its probabilities with the same draws; the loop runs the
  // primitive once per lane with the same key, which is exactly that.
  def_vmap(prims::bernoulli_primitive(), &vmap_by_loop);
}

}  // namespace spore::transforms::vmap_rules
