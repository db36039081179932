// SPDX-License-Identifier: Apache-2.0
#include "spore/datasets.h"

#include <filesystem>

#include <spore/data/sources.h>
#include <spore/data/transforms.h>
#include <spore/error.h>

namespace spore::cli {
namespace {

constexpr const char* kFashionDir = "/usr/share/datasets/fashion-mnist";
// Fashion-MNIST's pixel mean and standard deviation over the training set (after /255).
constexpr double kMean = 0.2860, kStd = 0.3530;

bool has_idx(const std::filesystem::path& dir, const std::string& stem) {
  return std::filesystem::exists(dir / stem) || std::filesystem::exists(dir / (stem + ".gz"));
}

std::shared_ptr<const data::Dataset> prepared(const DataOptions& o, const std::string& usage) {
  auto ds = data::mnist(dataset_dir(o.dataset), usage);
  if (o.limit > 0) ds = ds->take(o.limit);
  return ds;
}

std::vector<data::Transform> image_ops() { return {data::to_tensor(), data::normalize({kMean}, {kStd})}; }

}  // namespace

std::string dataset_dir(const std::string& dataset) {
  namespace fs = std::filesystem;
  if (dataset == "fashion-mnist") {
    SPORE_CHECK(has_idx(kFashionDir, "train-images-idx3-ubyte") && has_idx(kFashionDir, "t10k-images-idx3-ubyte"),
                "the Fashion-MNIST files are not in ", kFashionDir,
                ": install Debian's dataset-fashion-mnist package (sudo apt-get install dataset-fashion-mnist, or "
                "`make deps`), or pass --dataset DIR with the IDX files");
    return kFashionDir;
  }
  const fs::path dir(dataset);
  SPORE_CHECK(fs::is_directory(dir), "--dataset '", dataset,
              "' is neither fashion-mnist nor a directory; give a directory of MNIST-format IDX files");
  for (const char* stem : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"})
    SPORE_CHECK(has_idx(dir, stem), "--dataset ", dataset, " has no ", stem, "[.gz]; a data directory needs the four ",
                "MNIST-format files train-{images-idx3,labels-idx1}-ubyte and t10k-{images-idx3,labels-idx1}-ubyte");
  return dataset;
}

std::shared_ptr<const data::Dataset> train_batches(const DataOptions& o) {
  auto ds = prepared(o, "train");
  const int64_t n = ds->size();
  // A full shuffle (buffer = the data set) keyed by the seed and the epoch; the last partial
  // batch is dropped so every step has one shape and compiles once.
  return ds->shuffle(n, o.seed)->map(image_ops(), 0, o.workers)->batch(o.batch_size, /*drop_remainder=*/true)->prefetch(2);
}

std::shared_ptr<const data::Dataset> test_batches(const DataOptions& o) {
  return prepared(o, "test")->map(image_ops(), 0, o.workers)->batch(o.batch_size)->prefetch(2);
}

}  // namespace spore::cli
