// SPDX-License-Identifier: Apache-2.0
#include "autodiff/rules.h"

#include <mutex>

#include "spore/error.h"

namespace spore::autodiff {

void def_rules(const Primitive& prim, Residuals residuals, JvpRule jvp, VjpRule vjp) {
  // Rule slots are the one mutable part of a registered primitive, filled once at start-up.
  auto& p = const_cast<Primitive&>(prim);
  p.residuals = residuals;
  p.jvp = jvp;
  p.vjp = vjp;
}

void def_rules(std::string_view name, Residuals residuals, JvpRule jvp, VjpRule vjp) {
  Primitive* p = find_primitive(name);
  SPORE_ASSERT(p != nullptr, "rules for unknown primitive ", name);
  def_rules(*p, residuals, jvp, vjp);
}

void install_rules() {
  static std::once_flag once;
  std::call_once(once, [] {
    install_elementwise_rules();
    install_reduction_rules();
    install_shape_rules();
    install_nn_rules();
    install_misc_rules();
  });
}

}  // namespace spore::autodiff
