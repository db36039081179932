// SPDX-License-Identifier: Apache-2.0
// image_folder: torchvision's ImageFolder layout (root/<class>/**/<image>), read and decoded
// once when the source is built, then served from memory.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "data/image_decode.h"
#include "data/nodes.h"
#include "spore/data/sources.h"
#include "spore/ops/creation.h"
#include "spore/threading.h"

namespace spore::data {
namespace {

namespace fs = std::filesystem;

struct ImageFile {
  std::string path;
  int64_t label = 0;
};

bool is_image_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

/// Image files of every class, sorted by (folder, name) within a class as torchvision's
/// sorted(os.walk(...)) does.
std::vector<ImageFile> list_images(const fs::path& root, const std::vector<std::string>& classes, bool allow_empty) {
  std::vector<ImageFile> out;
  std::vector<std::string> empty;
  for (size_t label = 0; label < classes.size(); ++label) {
    std::vector<std::pair<std::string, std::string>> found;  // (folder, file name)
    try {
      for (const auto& e : fs::recursive_directory_iterator(root / classes[label],
                                                            fs::directory_options::follow_directory_symlink)) {
        if (e.is_regular_file() && is_image_name(e.path()))
          found.emplace_back(e.path().parent_path().string(), e.path().filename().string());
      }
    } catch (const fs::filesystem_error& err) {
      SPORE_CHECK(false, "[image_folder] cannot list class folder ", (root / classes[label]).string(), ": ", err.what());
    }
    std::sort(found.begin(), found.end());
    if (found.empty()) empty.push_back(classes[label]);
    for (const auto& [dir, name] : found) out.push_back({(fs::path(dir) / name).string(), static_cast<int64_t>(label)});
  }
  if (!allow_empty && !empty.empty()) {
    std::string names;
    for (const auto& c : empty) names += (names.empty() ? "'" : ", '") + c + "'";
    SPORE_CHECK(false, "[image_folder] ", root.string(), ": class folder(s) ", names,
                " hold no .png/.jpg/.jpeg file; add images, remove the folder(s), or set "
                "ImageFolderOptions::allow_empty to keep them as classes without samples");
  }
  SPORE_CHECK(!out.empty(), "[image_folder] ", root.string(), ": no .png/.jpg/.jpeg files in any class folder");
  return out;
}

Tensor read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  SPORE_CHECK(f.good(), "[image_folder] ", path, ": cannot open (not readable)");
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  f.seekg(0, std::ios::beg);
  SPORE_CHECK(size >= 0, "[image_folder] ", path, ": cannot read its size");
  Tensor t = Tensor::empty(Shape{static_cast<Dim>(size)}, DType::UInt8);
  f.read(reinterpret_cast<char*>(t.data<uint8_t>()), size);
  SPORE_CHECK(f.gcount() == size, "[image_folder] ", path, ": read failed after ", f.gcount(), " of ", size, " bytes");
  return t;
}

/// f(i) for i in [0, n) on a few threads; the error of the lowest failing i is rethrown, so
/// which file is reported does not depend on timing.
template <class F>
void parallel_each(int64_t n, F&& f) {
  const int64_t workers = std::clamp<int64_t>(num_threads(), 1, std::max<int64_t>(1, n / 4));
  std::atomic<int64_t> next{0};
  std::mutex m;
  int64_t failed_at = n;
  std::exception_ptr error;
  auto work = [&] {
    for (int64_t i; (i = next.fetch_add(1)) < n;) {
      try {
        f(i);
      } catch (...) {
        std::lock_guard lk(m);
        if (i < failed_at) {
          failed_at = i;
          error = std::current_exception();
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int64_t t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

std::vector<std::string> image_folder_classes(const std::string& root) {
  std::error_code ec;
  SPORE_CHECK(fs::is_directory(root, ec), "[image_folder] ", root,
              ": not a directory; expected root/<class>/<image>.png|.jpg, one subfolder per class");
  std::vector<std::string> classes;
  try {
    for (const auto& e : fs::directory_iterator(root)) {
      const std::string name = e.path().filename().string();
      // Hidden folders are tools' leftovers (.ipynb_checkpoints, .git), not classes.
      if (e.is_directory() && !name.starts_with(".")) classes.push_back(name);
    }
  } catch (const fs::filesystem_error& err) {
    SPORE_CHECK(false, "[image_folder] cannot list ", root, ": ", err.what());
  }
  SPORE_CHECK(!classes.empty(), "[image_folder] ", root,
              ": has no subfolders; put each class's images in a folder of its own (root/<class>/<image>.png)");
  std::sort(classes.begin(), classes.end());
  return classes;
}

std::shared_ptr<Dataset> image_folder(const std::string& root, ImageFolderOptions options) {
  SPORE_CHECK(options.channels == 0 || options.channels == 1 || options.channels == 3,
              "[image_folder] channels must be 1 (gray), 3 (RGB) or 0 (as stored), got ", options.channels);
  const std::vector<std::string> classes = image_folder_classes(root);
  std::vector<ImageFile> files = list_images(root, classes, options.allow_empty);
  if (options.sample >= 0 && options.sample < static_cast<int64_t>(files.size())) {
    // A seeded partial Fisher-Yates over the indices; the chosen files keep the sorted order.
    std::vector<size_t> idx(files.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::mt19937_64 rng(options.sample_seed);
    for (size_t i = 0; i < static_cast<size_t>(options.sample); ++i)
      std::swap(idx[i], idx[i + rng() % (idx.size() - i)]);
    idx.resize(static_cast<size_t>(options.sample));
    std::sort(idx.begin(), idx.end());
    std::vector<ImageFile> kept;
    for (size_t i : idx) kept.push_back(std::move(files[i]));
    files = std::move(kept);
    SPORE_CHECK(!files.empty(), "[image_folder] ", root, ": ImageFolderOptions::sample is 0; ask for at least one file");
  }
  const int64_t n = static_cast<int64_t>(files.size());

  std::vector<Tensor> images(files.size());
  parallel_each(n, [&](int64_t i) {
    Tensor bytes = read_file_bytes(files[i].path);
    const std::span<const uint8_t> b(bytes.data<uint8_t>(), static_cast<size_t>(bytes.numel()));
    // Decoded even when kept encoded: a corrupt or truncated file fails here, naming it, rather
    // than in the middle of an epoch as "[decode] sample 37".
    Tensor decoded = decode_image(b, options.channels, "[image_folder] " + files[i].path);
    images[i] = options.decode ? std::move(decoded) : std::move(bytes);
  });

  const bool one_shape = options.decode && std::all_of(images.begin(), images.end(),
                                                       [&](const Tensor& t) { return t.shape() == images[0].shape(); });
  if (one_shape) {
    Shape shape{n};
    for (Dim d : images[0].shape()) shape.push_back(d);
    Tensor stacked = Tensor::empty(shape, DType::UInt8);
    std::vector<int64_t> labels(files.size());
    const size_t bytes = static_cast<size_t>(images[0].numel());
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(stacked.data<uint8_t>() + i * bytes, images[i].data_ptr(), bytes);
      images[i] = Tensor();
      labels[i] = files[i].label;
    }
    return make_tensor_source({std::move(stacked), ops::from_vector(labels)}, "image_folder");
  }
  std::vector<Row> rows(files.size());
  for (int64_t i = 0; i < n; ++i) {
    Tensor label = Tensor::empty(Shape{}, DType::Int64);
    *label.data<int64_t>() = files[i].label;
    rows[i] = {std::move(images[i]), std::move(label)};
  }
  // Encoded rows go one per block: two files of one length may still decode to two shapes.
  return make_ragged_source(std::move(rows), options.decode ? "image_folder(sizes vary)" : "image_folder(encoded)",
                            options.decode ? int64_t{1} << 40 : 1);
}

}  // namespace spore::data
