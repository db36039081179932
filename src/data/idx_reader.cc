// SPDX-License-Identifier: Apache-2.0
// IDX files (MNIST's format), gzipped or not, through zlib. Nothing in a file is trusted: the
// header's sizes are checked for overflow and against what the file can hold before anything
// is allocated, and the data must end exactly where the header says.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "data/nodes.h"
#include "spore/data/sources.h"

namespace spore::data {
namespace {

/// gzFile with RAII; reads plain files too (zlib's transparent mode).
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    std::error_code ec;
    SPORE_CHECK(std::filesystem::is_regular_file(path, ec), "[read_idx] ", path, ": no such file");
    file_size_ = static_cast<int64_t>(std::filesystem::file_size(path, ec));
    f_ = gzopen(path.c_str(), "rb");
    SPORE_CHECK(f_ != nullptr, "[read_idx] ", path, ": cannot open (", std::strerror(errno), ")");
    gzbuffer(f_, 1 << 18);
  }
  ~GzReader() {
    if (f_) gzclose(f_);
  }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  /// Reads up to n bytes; returns how many. Corrupt compressed data is an error.
  int64_t read(void* dst, int64_t n) {
    int64_t got = 0;
    auto* p = static_cast<char*>(dst);
    while (got < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(n - got, 1 << 30));
      const int r = gzread(f_, p + got, chunk);
      if (r < 0) {
        int code = 0;
        const char* msg = gzerror(f_, &code);
        SPORE_CHECK(false, "[read_idx] ", path_, ": corrupt compressed data after ", got, " bytes of payload (zlib: ",
                    msg, "); the file is damaged, download or reinstall it");
      }
      if (r == 0) break;
      got += r;
    }
    return got;
  }
  bool compressed() const { return gzdirect(f_) == 0; }
  int64_t file_size() const { return file_size_; }

 private:
  std::string path_;
  gzFile f_ = nullptr;
  int64_t file_size_ = 0;
};

struct IdxType {
  DType dtype;
  const char* name;
};

std::optional<IdxType> idx_type(uint8_t code) {
  switch (code) {
    case 0x08: return IdxType{DType::UInt8, "unsigned byte"};
    case 0x09: return IdxType{DType::Int8, "signed byte"};
    case 0x0B: return IdxType{DType::Int16, "short"};
    case 0x0C: return IdxType{DType::Int32, "int"};
    case 0x0D: return IdxType{DType::Float32, "float"};
    case 0x0E: return IdxType{DType::Float64, "double"};
    default: return std::nullopt;
  }
}

uint32_t big_endian_u32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

void swap_bytes(char* data, int64_t n, size_t width) {
  for (int64_t i = 0; i < n; ++i) std::reverse(data + i * width, data + (i + 1) * width);
}

std::string dims_str(const Shape& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out.push_back('x');
    out.append(std::to_string(s[i]));
  }
  return out;
}

// A gzip stream inflates at most ~1032:1; a header claiming more than that is corrupt.
constexpr int64_t kMaxDeflateRatio = 1100;

}  // namespace

Tensor read_idx(const std::string& path) {
  GzReader in(path);
  unsigned char magic[4];
  const int64_t got_magic = in.read(magic, 4);
  SPORE_CHECK(got_magic == 4, "[read_idx] ", path, ": file is ", got_magic, " bytes long, too short for an IDX header");
  const auto type = idx_type(magic[2]);
  SPORE_CHECK(magic[0] == 0 && magic[1] == 0 && type.has_value() && magic[3] >= 1 && magic[3] <= 8, "[read_idx] ", path,
              ": bad magic number 0x", std::hex, big_endian_u32(magic), std::dec,
              "; an IDX file starts with 00 00, a type code (08 ubyte, 09 byte, 0B short, 0C int, 0D float, 0E double)"
              " and 1 to 8 dimensions (MNIST images: 0x00000803, labels: 0x00000801)");
  const int ndim = magic[3];
  unsigned char dims_raw[4 * 8];
  const int64_t got_dims = in.read(dims_raw, 4 * ndim);
  SPORE_CHECK(got_dims == 4 * ndim, "[read_idx] ", path, ": truncated header: ", ndim, " dimensions need ", 4 * ndim,
              " bytes after the magic number, the file has ", got_dims);
  Shape shape;
  const size_t width = dtype_size(type->dtype);
  int64_t numel = 1;
  for (int i = 0; i < ndim; ++i) {
    const int64_t d = big_endian_u32(dims_raw + 4 * i);
    shape.push_back(d);
    // Dimensions are < 2^32, so the product stays exact while it is below 2^62 / 2^32.
    SPORE_CHECK(d == 0 || numel <= (int64_t{1} << 40) / d, "[read_idx] ", path, ": header dimensions ",
                dims_str(shape), "... describe more than 2^40 elements; the header is corrupt");
    numel *= d;
  }
  const int64_t header = 4 + 4 * ndim;
  const int64_t payload = numel * static_cast<int64_t>(width);
  const std::string what = dims_str(shape) + " " + type->name + " = " + std::to_string(payload) + " bytes";
  if (in.compressed()) {
    SPORE_CHECK(payload <= in.file_size() * kMaxDeflateRatio + 4096, "[read_idx] ", path, ": header says ", what,
                ", more than a ", in.file_size(), "-byte gzip file can hold; the header is corrupt");
  } else {
    SPORE_CHECK(in.file_size() == header + payload, "[read_idx] ", path, ": header says ", what, " of data after a ",
                header, "-byte header, but the file has ", in.file_size() - header, " bytes of data",
                in.file_size() < header + payload ? " (truncated)" : " (trailing bytes)");
  }
  Tensor out = Tensor::empty(shape, type->dtype);
  const int64_t got = in.read(out.data_ptr(), payload);
  SPORE_CHECK(got == payload, "[read_idx] ", path, ": truncated: header says ", what, ", the decompressed data ends after ",
              got, " bytes");
  char extra;
  SPORE_CHECK(in.read(&extra, 1) == 0, "[read_idx] ", path, ": trailing bytes after the ", what,
              " the header describes; the file is corrupt or not one IDX file");
  if (width > 1) swap_bytes(static_cast<char*>(out.data_ptr()), numel, width);  // IDX is big-endian
  return out;
}

std::shared_ptr<Dataset> mnist_files(const std::string& images_path, const std::string& labels_path) {
  Tensor images = read_idx(images_path);
  Tensor labels = read_idx(labels_path);
  SPORE_CHECK(images.dim() == 3, "[mnist] ", images_path, ": images must be a 3-D IDX file (count, rows, columns), got ",
              images.dim(), " dimensions ", shape_str(images.shape()), "; are images and labels swapped?");
  SPORE_CHECK(labels.dim() == 1, "[mnist] ", labels_path, ": labels must be a 1-D IDX file, got ", labels.dim(),
              " dimensions ", shape_str(labels.shape()), "; are images and labels swapped?");
  SPORE_CHECK(images.size(0) == labels.size(0), "[mnist] ", images_path, " holds ", images.size(0), " images but ",
              labels_path, " holds ", labels.size(0), " labels; the files do not belong together");
  return make_tensor_source({images, labels.to(DType::Int64)}, "mnist");
}

namespace {

std::string find_idx(const std::string& dir, const std::string& stem) {
  for (const std::string& name : {stem, stem + ".gz"}) {
    const std::string p = (std::filesystem::path(dir) / name).string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p;
  }
  SPORE_CHECK(false, "[mnist] no ", stem, " or ", stem, ".gz in ", dir,
              "; for Fashion-MNIST install Debian's dataset-fashion-mnist (scripts/install-deps.sh), which puts the"
              " files in /usr/share/datasets/fashion-mnist, or pass the directory that holds the IDX files");
  return {};
}

}  // namespace

std::shared_ptr<Dataset> mnist(const std::string& dir, const std::string& usage) {
  SPORE_CHECK(usage == "train" || usage == "test" || usage == "all", "[mnist] usage must be \"train\", \"test\" or \"all\", got \"",
              usage, "\"");
  auto load = [&](const std::string& prefix) {
    return mnist_files(find_idx(dir, prefix + "-images-idx3-ubyte"), find_idx(dir, prefix + "-labels-idx1-ubyte"));
  };
  if (usage == "train") return load("train");
  if (usage == "test") return load("t10k");
  return load("train")->concat(load("t10k"));
}

}  // namespace spore::data
