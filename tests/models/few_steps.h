// SPDX-License-Identifier: Apache-2.0
#pragma once
// The zoo's "a few steps lower the loss" check: Adam on one fixed batch through train::Model,
// in PyNative or Graph mode.
#include <spore/optim/optim.h>
#include <spore/spore.h>
#include <spore/train/model.h>

#include <utility>

namespace spore::models {

struct ModeGuard {
  explicit ModeGuard(Mode m) { set_context(m); }
  ~ModeGuard() { set_context(Mode::PyNative); }
  ModeGuard(const ModeGuard&) = delete;
  ModeGuard& operator=(const ModeGuard&) = delete;
};

inline Tensor cross_entropy_loss(const Tensor& out, const Tensor& y) { return ops::cross_entropy(out, y); }

/// The loss of the first step and of step `steps`, training `net` on (x, y) with Adam.
inline std::pair<float, float> first_and_last_loss(nn::UnaryCell& net, const Tensor& x, const Tensor& y, int steps,
                                                   double lr, train::LossFn loss = cross_entropy_loss,
                                                   Mode mode = Mode::PyNative) {
  ModeGuard guard(mode);
  optim::Adam opt(net.parameters(), {.lr = lr});
  train::Model model(net, std::move(loss), opt);
  const float first = model.train_step(x, y).first.item<float>();
  float last = first;
  for (int i = 1; i < steps; ++i) last = model.train_step(x, y).first.item<float>();
  return {first, last};
}

}  // namespace spore::models
