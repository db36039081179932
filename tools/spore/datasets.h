// SPDX-License-Identifier: Apache-2.0
#pragma once
// The data sets the command line knows: Fashion-MNIST from Debian's dataset-fashion-mnist
// package (the default), a directory of MNIST-format IDX files, or an image folder
// (DIR/train/<class>/*.png|jpg and DIR/test/<class>/..., torchvision's ImageFolder layout).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spore/data/dataset.h>

namespace spore::cli {

struct DataOptions {
  std::string dataset = "fashion-mnist";
  int64_t batch_size = 64;
  uint64_t seed = 0;
  int64_t limit = -1;  // use only `limit` samples per split (IDX: the first; a folder: a fixed random subset)
  int workers = 1;
  int64_t image_size = 28;  // samples are resized to image_size x image_size
  int channels = 0;         // 1 gray or 3 RGB; 0: the data set's own (1 for IDX, 3 for folders)
};

/// What a data set holds once prepared as `o` asks: the shape the network sees and the classes.
struct DataInfo {
  bool image_folder = false;
  int64_t channels = 1;
  int64_t image_size = 28;
  std::vector<std::string> classes;  // an image folder's class names (label i = classes[i])
  int64_t num_classes = 10;
};

/// Checks the data set's files and tells what it holds; errors name the package, files or
/// layout to provide. Reads no image (class names come from the folder names).
DataInfo describe(const DataOptions& o);
/// Training batches: shuffled per epoch from the seed, normalized, (N, C, S, S) float32 + int64
/// labels; the last partial batch is dropped, so every step has one shape.
std::shared_ptr<const data::Dataset> train_batches(const DataOptions& o);
/// Test batches in file order.
std::shared_ptr<const data::Dataset> test_batches(const DataOptions& o);
/// One PNG or JPEG file prepared as the test images are: float32 (1, C, S, S); `as_idx`: as
/// IDX data (gray, the data set's normalization), else as an image folder's.
Tensor image_input(const std::string& path, const DataOptions& o, int64_t channels, bool as_idx);

}  // namespace spore::cli
