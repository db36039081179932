// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spore/data/dataset.h"

/// Sources: nodes that make rows. Files are read and checked once when the source is built
/// (a bad file fails here, naming the file and what is wrong), then served from memory.
namespace spore::data {

/// Reads an IDX file (MNIST's format), gzipped or not: its dtype and dimensions come from the
/// header; the size is checked against the header.
Tensor read_idx(const std::string& path);
/// MNIST-style IDX files in `dir`: usage "train" (train-*), "test" (t10k-*) or "all" (both).
/// Files may be gzipped (.gz). Rows: image uint8 (H, W), label int64 ().
std::shared_ptr<Dataset> mnist(const std::string& dir, const std::string& usage = "train");
/// The same from an explicit pair of image and label files.
std::shared_ptr<Dataset> mnist_files(const std::string& images_path, const std::string& labels_path);

/// In-memory columns: the first dimension of each is the sample axis (all equal).
std::shared_ptr<Dataset> from_tensors(std::vector<Tensor> columns);

/// Reads a NumPy .npy file (version 1-3, little-endian bool/int/uint8/float types, C or Fortran order).
Tensor read_npy(const std::string& path);
/// One column per .npy file, samples along the first axis.
std::shared_ptr<Dataset> npy(const std::vector<std::string>& paths);

/// Options of csv().
struct CsvOptions {
  char delimiter = ',';
  bool header = true;  // skip the first line
};
/// A CSV file of numbers, one column per entry of `column_types`; each row's values become
/// 0-d tensors of those dtypes.
std::shared_ptr<Dataset> csv(const std::string& path, std::vector<DType> column_types, CsvOptions options = {});

/// Options of image_folder().
struct ImageFolderOptions {
  /// true: every image is decoded when the source is built (rows: uint8 (H, W, C)). false: rows
  /// hold each file's bytes, uint8 (bytes,), one row per block (their lengths differ), to be
  /// decoded later by map({decode(channels)}, 0, workers); this keeps memory at the files' size.
  /// Each file is still decoded once here (and the result dropped), so a corrupt one fails now,
  /// naming it, not in the middle of an epoch.
  bool decode = true;
  /// 3: RGB (gray replicated, alpha dropped); 1: gray (ITU-R 601 weights); 0: as stored
  /// (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA).
  int channels = 3;
  /// An empty class folder is an error (as in torchvision's ImageFolder) unless this is set;
  /// either way it keeps its place in the class list, so labels do not shift.
  bool allow_empty = false;
  /// >= 0: read only a fixed random subset of this many files (drawn from `sample_seed` over
  /// the sorted list, kept in that order) — a quick run on a large folder without reading it
  /// all. Class folders keep their labels whether or not the subset holds any of their files.
  int64_t sample = -1;
  uint64_t sample_seed = 0;
};
/// The class names of an image folder: the sorted names of `root`'s subfolders (byte order),
/// hidden ones (".ipynb_checkpoints", ".git") left out; class i has label i.
std::vector<std::string> image_folder_classes(const std::string& root);
/// Images in class-per-subfolder layout (torchvision's ImageFolder): root/<class>/**/<file>,
/// files ending .png, .jpg or .jpeg (any case) taken in sorted order within each class, other
/// files ignored. PNG and JPEG are told apart by their first bytes. Rows: image uint8 (H, W, C)
/// (or the encoded bytes, see ImageFolderOptions::decode) and label int64 (). Every file is read
/// and checked here; a corrupt or truncated image fails naming the file. Images of one size make
/// a random-access source; images of several sizes stream in file order (blocks hold rows of one
/// shape), so batch needs map with resize/center_crop or a BatchPad, and split is unavailable.
std::shared_ptr<Dataset> image_folder(const std::string& root, ImageFolderOptions options = {});

/// Rows from `fn(0)`, `fn(1)`, ... until it returns nullopt (or until `size` rows when size >= 0).
/// Read in order from one thread.
std::shared_ptr<Dataset> generator(std::function<std::optional<Row>(int64_t)> fn, int64_t size = -1);

}  // namespace spore::data
