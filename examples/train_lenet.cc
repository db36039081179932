// SPDX-License-Identifier: Apache-2.0
// The README's training example, compiled with every build: LeNet-5 on Fashion-MNIST in Graph
// mode (one epoch here; `make demo` runs `spore train` for three).
#include <cstdio>

#include <spore/spore.h>

using namespace spore;

int main() {
  manual_seed(0);
  auto net = models::lenet5();                                  // nn::SequentialCell of nn layers
  optim::Adam opt(net->parameters(), {.lr = 3e-3});
  train::Model model(*net, [](const Tensor& out, const Tensor& y) { return ops::cross_entropy(out, y); }, opt);
  set_context(Mode::Graph);                                     // the train step compiles to one plan
  train::DatasetBatches data(data::mnist("/usr/share/datasets/fashion-mnist")->shuffle(60000, 0)
                                 ->map({data::to_tensor()})->batch(128, true));
  train::ProgressBar bar;
  train::FitResult r = model.fit(1, data, {&bar});
  train::DatasetBatches test(data::mnist("/usr/share/datasets/fashion-mnist", "test")->map({data::to_tensor()})->batch(1000));
  std::printf("train loss %.4f, test accuracy %.4f, %.0f samples/s\n", r.train_loss, model.evaluate(test).at("accuracy"),
              r.samples_per_second);
}
