// SPDX-License-Identifier: Apache-2.0
#include "spore/datasets.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <spore/data/sources.h>
#include <spore/data/transforms.h>
#include <spore/error.h>
#include <spore/spore.h>

namespace spore::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFashionDir = "/usr/share/datasets/fashion-mnist";
// Fashion-MNIST's pixel mean and standard deviation over the training set (after /255).
constexpr double kMean = 0.2860, kStd = 0.3530;
constexpr const char* kIdxFiles[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                                     "t10k-labels-idx1-ubyte"};

bool has_idx(const fs::path& dir, const std::string& stem) {
  return fs::exists(dir / stem) || fs::exists(dir / (stem + ".gz"));
}
bool has_all_idx(const fs::path& dir) {
  for (const char* stem : kIdxFiles)
    if (!has_idx(dir, stem)) return false;
  return true;
}

// Where the data lives and in which layout.
struct Located {
  fs::path dir;
  bool folder = false;
  fs::path train, test;  // an image folder's splits
};

Located locate(const std::string& dataset) {
  Located l;
  if (dataset == "fashion-mnist") {
    SPORE_CHECK(has_idx(kFashionDir, "train-images-idx3-ubyte") && has_idx(kFashionDir, "t10k-images-idx3-ubyte"),
                "the Fashion-MNIST files are not in ", kFashionDir,
                ": install Debian's dataset-fashion-mnist package (sudo apt-get install dataset-fashion-mnist, or "
                "`make deps`), or pass --dataset DIR with the IDX files");
    l.dir = kFashionDir;
    return l;
  }
  l.dir = dataset;
  SPORE_CHECK(fs::is_directory(l.dir), "--dataset '", dataset, "' is neither fashion-mnist nor a directory");
  if (has_all_idx(l.dir)) return l;
  if (fs::is_directory(l.dir / "train")) {
    l.folder = true;
    l.train = l.dir / "train";
    l.test = fs::is_directory(l.dir / "test") ? l.dir / "test" : l.dir / "val";
    SPORE_CHECK(fs::is_directory(l.test), "--dataset ", dataset, " has a train/ image folder but no test/ or val/ ",
                "beside it; put the held-out images in ", (l.dir / "test").string(), "/<class>/");
    return l;
  }
  std::string missing;
  for (const char* stem : kIdxFiles)
    if (!has_idx(l.dir, stem)) missing += std::string(missing.empty() ? "" : ", ") + stem + "[.gz]";
  throw Error("--dataset " + dataset +
              " is neither an image folder nor an IDX directory: an image folder holds train/<class>/*.png|jpg and "
              "test/<class>/... (or val/); an IDX directory holds the four MNIST-format files (missing: " +
              missing + ")");
}

// Gray IDX images as float (1, S, S), resized when --image-size is not 28.
std::vector<data::Transform> idx_ops(const DataOptions& o) {
  std::vector<data::Transform> ops = {data::to_tensor()};
  if (o.image_size != 28) ops.push_back(data::resize(o.image_size, o.image_size));
  ops.push_back(data::normalize({kMean}, {kStd}));
  return ops;
}

// Encoded images decoded in the map's workers, resized to S x S (aspect not kept, as Keras'
// image_dataset_from_directory does) and scaled to [-1, 1]: no statistics pass over the folder.
std::vector<data::Transform> folder_ops(const DataOptions& o, int64_t channels) {
  return {data::decode(static_cast<int>(channels)), data::to_tensor(), data::resize(o.image_size, o.image_size),
          data::normalize({0.5}, {0.5})};
}

// The split's rows (a --limit applied) and the transforms that make them network input.
struct Split {
  std::shared_ptr<const data::Dataset> rows;
  std::vector<data::Transform> ops;
};

Split split_of(const DataOptions& o, bool train, const DataInfo& info) {
  const Located l = locate(o.dataset);
  if (!l.folder) {
    std::shared_ptr<const data::Dataset> ds = data::mnist(l.dir.string(), train ? "train" : "test");
    if (o.limit > 0) ds = ds->take(o.limit);
    return {ds, idx_ops(o)};
  }
  data::ImageFolderOptions fo;
  fo.decode = false;  // files stay encoded in memory; the map's workers decode them each epoch
  fo.channels = static_cast<int>(info.channels);
  // The folder is sorted by class: a limit reads a fixed random subset, not the first classes.
  if (o.limit > 0) {
    fo.sample = o.limit;
    fo.sample_seed = train ? 1 : 2;
  }
  return {data::image_folder((train ? l.train : l.test).string(), fo), folder_ops(o, info.channels)};
}

}  // namespace

DataInfo describe(const DataOptions& o) {
  SPORE_CHECK(o.image_size >= 1 && o.image_size <= 4096, "--image-size must be in [1, 4096], got ", o.image_size);
  SPORE_CHECK(o.channels == 0 || o.channels == 1 || o.channels == 3, "--channels must be 1 or 3, got ", o.channels);
  const Located l = locate(o.dataset);
  DataInfo info;
  info.image_size = o.image_size;
  if (!l.folder) {
    SPORE_CHECK(o.channels != 3, "--dataset ", o.dataset, " holds gray IDX images; --channels 3 needs an image folder");
    return info;
  }
  info.image_folder = true;
  info.channels = o.channels ? o.channels : 3;
  info.classes = data::image_folder_classes(l.train.string());
  const std::vector<std::string> test_classes = data::image_folder_classes(l.test.string());
  if (test_classes != info.classes) {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& c : v) s += (s.empty() ? "'" : ", '") + c + "'";
      return s;
    };
    throw Error("--dataset " + o.dataset + ": the train classes (" + join(info.classes) + ") differ from " +
                l.test.string() + "'s (" + join(test_classes) + "); both splits need the same class subfolders");
  }
  info.num_classes = static_cast<int64_t>(info.classes.size());
  return info;
}

std::shared_ptr<const data::Dataset> train_batches(const DataOptions& o) {
  Split s = split_of(o, true, describe(o));
  // A full shuffle (buffer = the data set) keyed by the seed and the epoch; the last partial
  // batch is dropped so every step has one shape and compiles once.
  return s.rows->shuffle(s.rows->size(), o.seed)
      ->map(std::move(s.ops), 0, o.workers)
      ->batch(o.batch_size, /*drop_remainder=*/true)
      ->prefetch(2);
}

std::shared_ptr<const data::Dataset> test_batches(const DataOptions& o) {
  Split s = split_of(o, false, describe(o));
  return s.rows->map(std::move(s.ops), 0, o.workers)->batch(o.batch_size)->prefetch(2);
}

Tensor image_input(const std::string& path, const DataOptions& o, int64_t channels, bool as_idx) {
  SPORE_CHECK(fs::is_regular_file(path), "spore predict: --input ", path, " is not a file");
  std::ifstream in(path, std::ios::binary);
  SPORE_CHECK(in.good(), "spore predict: cannot read --input ", path);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SPORE_CHECK(!bytes.empty(), "spore predict: --input ", path, " is empty");
  Tensor t = ops::from_vector(bytes, Shape{1, static_cast<Dim>(bytes.size())});
  const int64_t id = 0;
  const data::SampleInfo info{0, std::span<const int64_t>(&id, 1)};
  // An IDX-trained model sees the image as its training data was prepared: gray, normalized
  // with the data set's statistics.
  std::vector<data::Transform> ops;
  if (as_idx) {
    ops = {data::decode(1), data::to_tensor(), data::resize(o.image_size, o.image_size),
           data::normalize({kMean}, {kStd})};
  } else {
    ops = folder_ops(o, channels);
  }
  for (const data::Transform& op : ops) t = op->apply(t, info);
  return t;
}

}  // namespace spore::cli
