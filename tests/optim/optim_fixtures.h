// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared inputs of the optimizer tests: three parameters, a fixed gradient sequence, and one
// configuration of each optimizer with its variants switched on.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "spore/optim/optim.h"
#include "spore/spore.h"

namespace spore::optim {

/// Parameters of shapes (4, 3), (5) and (2, 2, 2), N(0, 1) from `seed`.
inline std::vector<Tensor> param_set(uint64_t seed) {
  manual_seed(seed);
  return {ops::normal({4, 3}), ops::normal({5}), ops::normal({2, 2, 2})};
}

/// `steps` gradient lists for param_set's shapes.
inline std::vector<std::vector<Tensor>> grad_sequence(int steps, uint64_t seed) {
  std::vector<std::vector<Tensor>> out;
  for (int s = 0; s < steps; ++s) out.push_back(param_set(seed * 1000 + static_cast<uint64_t>(s)));
  return out;
}

/// Parameters 0 and 1 in group 0; parameter 2 in group 1 with its own learning rate.
inline std::vector<ParamGroup> two_groups(const std::vector<Tensor>& ps) {
  return {{{ps[0], ps[1]}, {}}, {{ps[2]}, {{"lr", 0.02}}}};
}

using MakeOptimizer = std::function<std::unique_ptr<Optimizer>(std::vector<ParamGroup>)>;

inline std::vector<std::pair<std::string, MakeOptimizer>> optimizer_kinds() {
  return {
      {"SGD", [](auto g) { return std::make_unique<SGD>(g, SGDOptions{.lr = 0.05, .momentum = 0.9, .nesterov = true,
                                                                      .weight_decay = 0.01}); }},
      {"Adam", [](auto g) { return std::make_unique<Adam>(g, AdamOptions{.lr = 0.01, .weight_decay = 0.1,
                                                                         .amsgrad = true}); }},
      {"AdamW", [](auto g) { return std::make_unique<AdamW>(g, AdamWOptions{.lr = 0.01}); }},
      {"RMSProp", [](auto g) { return std::make_unique<RMSProp>(g, RMSPropOptions{.lr = 0.01, .momentum = 0.5,
                                                                                  .centered = true}); }},
      {"Adagrad", [](auto g) { return std::make_unique<Adagrad>(g, AdagradOptions{.lr = 0.1, .lr_decay = 0.01,
                                                                                  .initial_accumulator_value = 0.1}); }},
      {"LAMB", [](auto g) { return std::make_unique<LAMB>(g, LAMBOptions{.lr = 0.01, .weight_decay = 0.01}); }},
  };
}

}  // namespace spore::optim
