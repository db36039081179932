// SPDX-License-Identifier: Apache-2.0
// The data pipeline alone on Fashion-MNIST: decode the IDX files, then epochs of
// to_tensor -> normalize -> shuffle -> batch(128). Prints one JSON line per configuration;
// bench/torch_data_bench.py measures a PyTorch DataLoader (2 workers) on the same work.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "spore/data/dataset.h"
#include "spore/data/sources.h"
#include "spore/data/transforms.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  namespace data = spore::data;
  const std::string dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 5;
  auto t0 = std::chrono::steady_clock::now();
  auto src = data::mnist(dir, "train");
  const double decode_s = seconds_since(t0);
  std::printf("{\"bench\": \"data_decode_idx\", \"seconds\": %.4f, \"samples\": %lld}\n", decode_s,
              static_cast<long long>(src->size()));
  for (int workers : {1, 2}) {
    for (bool prefetch : {false, true}) {
      auto ds = src->map({data::to_tensor(), data::normalize({0.2860}, {0.3530})}, 0, workers)
                    ->shuffle(src->size(), 42)
                    ->batch(128);
      if (prefetch) ds = ds->prefetch(2);
      double best = 1e30;
      int64_t samples = 0;
      for (int e = 0; e < epochs; ++e) {
        samples = 0;
        auto t = std::chrono::steady_clock::now();
        auto it = ds->iterate(static_cast<uint64_t>(e));
        while (auto row = it.next()) samples += (*row)[0].size(0);
        best = std::min(best, seconds_since(t));
      }
      std::printf("{\"bench\": \"data_epoch\", \"workers\": %d, \"prefetch\": %s, \"seconds\": %.4f, "
                  "\"samples_per_second\": %.0f}\n",
                  workers, prefetch ? "true" : "false", best, static_cast<double>(samples) / best);
      if (workers == 2 && prefetch) std::fprintf(stderr, "%s", ds->stats().c_str());
    }
  }
  return 0;
}
