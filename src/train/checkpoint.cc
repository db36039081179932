// SPDX-License-Identifier: Apache-2.0
#include "spore/train/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "spore/error.h"
#include "spore/ops.h"

namespace spore::train {
namespace {

constexpr char kMagic[8] = {'S', 'P', 'O', 'R', 'E', 'C', 'K', 'P'};
constexpr char kEndMagic[8] = {'S', 'P', 'O', 'R', 'E', 'E', 'N', 'D'};
constexpr size_t kAlign = 64;
constexpr size_t kPrefix = 8 + 4 + 4 + 8;
constexpr size_t kTrailer = 4 + 8;
// Bounds for untrusted headers: far above any real checkpoint, far below what would exhaust memory.
constexpr uint64_t kMaxHeader = 256ull << 20;
constexpr uint64_t kMaxName = 4096;
constexpr uint64_t kMaxEntries = 1u << 22;

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The header is a little-endian byte string built with these helpers.
void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put_str(std::string& s, const std::string& v) {
  put_u64(s, v.size());
  s += v;
}

// Reads the header back; every read is bounds-checked and names the file on failure.
class Reader {
 public:
  Reader(const std::string& path, const uint8_t* p, size_t n) : path_(path), p_(p), n_(n) {}
  uint64_t u64(const char* what) {
    need(8, what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p_[pos_ + i]) << (8 * i);
    pos_ += 8;
    return v;
  }
  std::string str(const char* what) {
    const uint64_t len = u64(what);
    SPORE_CHECK(len <= kMaxName, "[load_checkpoint] ", path_, ": ", what, " is ", len,
                " bytes long, over the limit of ", kMaxName, "; the file is corrupted");
    need(len, what);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }
  bool done() const { return pos_ == n_; }

 private:
  void need(uint64_t k, const char* what) const {
    SPORE_CHECK(k <= n_ - pos_, "[load_checkpoint] ", path_, ": the header ends inside ", what,
                "; the file is corrupted");
  }
  const std::string& path_;
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

void write_all(int fd, const void* data, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    SPORE_CHECK(w > 0, "[save_checkpoint] cannot write ", path, ": ", std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

const Tensor& Checkpoint::tensor(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  std::string names;
  for (size_t i = 0; i < tensors.size() && i < 8; ++i) names += (i ? ", " : "") + tensors[i].first;
  throw Error(detail::cat("[Checkpoint] no tensor named '", name, "'; the checkpoint has ", tensors.size(),
                          " tensors (", names, tensors.size() > 8 ? ", ..." : "", ")"));
}

std::vector<std::pair<std::string, Tensor>> Checkpoint::with_prefix(const std::string& prefix) const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [n, t] : tensors)
    if (n.rfind(prefix, 0) == 0) out.emplace_back(n.substr(prefix.size()), t);
  return out;
}

int64_t Checkpoint::get_int(const std::string& key) const {
  auto it = ints.find(key);
  SPORE_CHECK(it != ints.end(), "[Checkpoint] no integer entry '", key, "'");
  return it->second;
}

void Checkpoint::set_double(const std::string& name, double value) {
  Tensor t = ops::scalar_tensor(value, DType::Float64);
  for (auto& [n, old] : tensors)
    if (n == name) {
      old = t;
      return;
    }
  tensors.emplace_back(name, std::move(t));
}

double Checkpoint::get_double(const std::string& name) const {
  const Tensor& t = tensor(name);
  SPORE_CHECK(t.dim() == 0 && t.dtype() == DType::Float64, "[Checkpoint] entry '", name, "' is ",
              dtype_name(t.dtype()), " ", shape_str(t.shape()), ", not a float64 scalar; the file is not the kind expected");
  return t.item<double>();
}

bool Checkpoint::has_prefix(const std::string& prefix) const {
  auto starts = [&](const std::string& n) { return n.rfind(prefix, 0) == 0; };
  for (const auto& [n, t] : tensors)
    if (starts(n)) return true;
  for (const auto& [n, v] : ints)
    if (starts(n)) return true;
  for (const auto& [n, v] : texts)
    if (starts(n)) return true;
  return false;
}

void save_checkpoint(const std::string& path, const Checkpoint& c) {
  std::vector<Tensor> data;
  std::string header;
  put_u64(header, c.ints.size());
  for (const auto& [k, v] : c.ints) {
    put_str(header, k);
    put_u64(header, static_cast<uint64_t>(v));
  }
  put_u64(header, c.texts.size());
  for (const auto& [k, v] : c.texts) {
    put_str(header, k);
    put_str(header, v);
  }
  put_u64(header, c.tensors.size());
  uint64_t offset = 0;  // relative to the data section
  std::set<std::string> names;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    const auto& [name, t] = c.tensors[i];
    SPORE_CHECK(t.defined(), "[save_checkpoint] tensor '", name, "' is undefined");
    SPORE_CHECK(t.device().type == DeviceType::CPU, "[save_checkpoint] tensor '", name, "' is on ", t.device().str(),
                "; checkpoints hold CPU tensors (materialize it first)");
    SPORE_CHECK(names.insert(name).second, "[save_checkpoint] two tensors are named '", name, "'");
    Tensor ct = t.contiguous();
    const uint64_t nbytes = static_cast<uint64_t>(ct.numel()) * dtype_size(ct.dtype());
    put_str(header, name);
    put_str(header, std::string(dtype_name(ct.dtype())));  // by name: independent of the enum's order
    put_u64(header, static_cast<uint64_t>(ct.dim()));
    for (Dim d : ct.shape()) put_u64(header, static_cast<uint64_t>(d));
    put_u64(header, offset);
    put_u64(header, nbytes);
    offset = align_up(offset + nbytes);
    data.push_back(std::move(ct));
  }

  std::string prefix(kMagic, 8);
  const uint32_t version = kCheckpointVersion, flags = 0;
  prefix.append(reinterpret_cast<const char*>(&version), 4);
  prefix.append(reinterpret_cast<const char*>(&flags), 4);
  put_u64(prefix, header.size());
  const size_t data_start = align_up(kPrefix + header.size());

  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string tmp = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()))).string();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  SPORE_CHECK(fd >= 0, "[save_checkpoint] cannot create ", tmp, ": ", std::strerror(errno),
              "; check that the directory exists and is writable");
  try {
    uLong crc = crc32(0L, Z_NULL, 0);
    auto emit = [&](const void* p, size_t n) {
      write_all(fd, p, n, tmp);
      const auto* b = static_cast<const Bytef*>(p);
      // zlib's crc32 takes a uInt length: feed large tensors in pieces.
      while (n > 0) {
        const uInt k = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
        crc = crc32(crc, b, k);
        b += k;
        n -= k;
      }
    };
    const std::string zeros(kAlign, '\0');
    emit(prefix.data(), prefix.size());
    emit(header.data(), header.size());
    emit(zeros.data(), data_start - kPrefix - header.size());
    for (const Tensor& t : data) {
      const size_t nbytes = static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
      emit(t.data_ptr(), nbytes);
      emit(zeros.data(), align_up(nbytes) - nbytes);
    }
    const uint32_t crc32v = static_cast<uint32_t>(crc);
    write_all(fd, &crc32v, 4, tmp);
    write_all(fd, kEndMagic, 8, tmp);
    SPORE_CHECK(::fsync(fd) == 0, "[save_checkpoint] fsync of ", tmp, " failed: ", std::strerror(errno));
    ::close(fd);
    fd = -1;
    std::error_code ec;
    fs::rename(tmp, target, ec);
    SPORE_CHECK(!ec, "[save_checkpoint] cannot rename ", tmp, " to ", path, ": ", ec.message());
    // The rename itself is durable only once the directory entry is on disk.
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  } catch (...) {
    if (fd >= 0) ::close(fd);
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

Checkpoint load_checkpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  SPORE_CHECK(in.good(), "[load_checkpoint] cannot open ", path, ": ", std::strerror(errno));
  const std::streamoff size = in.tellg();
  SPORE_CHECK(size >= static_cast<std::streamoff>(kPrefix + kTrailer), "[load_checkpoint] ", path, " is ", size,
              " bytes, too short to be a Spore checkpoint");
  const size_t n = static_cast<size_t>(size);
  // One read of the whole file: the checksum covers every byte before anything is trusted.
  std::vector<uint8_t> buf(n);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(n));
  SPORE_CHECK(in.gcount() == static_cast<std::streamsize>(n), "[load_checkpoint] short read of ", path);
  SPORE_CHECK(std::memcmp(buf.data(), kMagic, 8) == 0, "[load_checkpoint] ", path,
              " is not a Spore checkpoint (bad magic bytes)");
  uint32_t version = 0;
  std::memcpy(&version, buf.data() + 8, 4);
  SPORE_CHECK(version <= kCheckpointVersion, "[load_checkpoint] ", path, " has format version ", version,
              "; this build reads up to version ", kCheckpointVersion, "; use a newer Spore");
  SPORE_CHECK(std::memcmp(buf.data() + n - 8, kEndMagic, 8) == 0, "[load_checkpoint] ", path,
              " is truncated (no end marker); it was not completely written");
  uint32_t stored_crc = 0;
  std::memcpy(&stored_crc, buf.data() + n - kTrailer, 4);
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t done = 0; done < n - kTrailer;) {
    const uInt k = static_cast<uInt>(std::min<size_t>(n - kTrailer - done, 1u << 30));
    crc = crc32(crc, buf.data() + done, k);
    done += k;
  }
  SPORE_CHECK(static_cast<uint32_t>(crc) == stored_crc, "[load_checkpoint] ", path,
              " is corrupted: its checksum does not match its content");

  uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= static_cast<uint64_t>(buf[16 + i]) << (8 * i);
  SPORE_CHECK(header_len <= kMaxHeader && header_len <= n - kPrefix - kTrailer, "[load_checkpoint] ", path,
              ": the header length ", header_len, " does not fit the file");
  const size_t data_start = align_up(kPrefix + header_len);
  SPORE_CHECK(data_start <= n - kTrailer, "[load_checkpoint] ", path, ": the data section starts past the end");
  const size_t data_len = n - kTrailer - data_start;

  Reader r(path, buf.data() + kPrefix, header_len);
  Checkpoint c;
  const uint64_t n_ints = r.u64("the integer count");
  SPORE_CHECK(n_ints <= kMaxEntries, "[load_checkpoint] ", path, ": ", n_ints, " integer entries is too many");
  for (uint64_t i = 0; i < n_ints; ++i) {
    std::string k = r.str("an integer entry's name");
    c.ints[k] = static_cast<int64_t>(r.u64("an integer entry"));
  }
  const uint64_t n_texts = r.u64("the text count");
  SPORE_CHECK(n_texts <= kMaxEntries, "[load_checkpoint] ", path, ": ", n_texts, " text entries is too many");
  for (uint64_t i = 0; i < n_texts; ++i) {
    std::string k = r.str("a text entry's name");
    c.texts[k] = r.str("a text entry");
  }
  const uint64_t n_tensors = r.u64("the tensor count");
  std::set<std::string> seen;
  SPORE_CHECK(n_tensors <= kMaxEntries, "[load_checkpoint] ", path, ": ", n_tensors, " tensors is too many");
  for (uint64_t i = 0; i < n_tensors; ++i) {
    std::string name = r.str("a tensor name");
    const std::string dt_name = r.str("a tensor dtype");
    int dt = -1;
    for (int k = 0; k < kNumDTypes && dt < 0; ++k)
      if (dt_name == dtype_name(static_cast<DType>(k))) dt = k;
    SPORE_CHECK(dt >= 0, "[load_checkpoint] ", path, ": tensor '", name, "' has an unknown dtype '", dt_name, "'");
    const uint64_t ndim = r.u64("a tensor rank");
    SPORE_CHECK(ndim <= static_cast<uint64_t>(kMaxRank), "[load_checkpoint] ", path, ": tensor '", name, "' has rank ",
                ndim, ", over the limit of ", kMaxRank);
    Shape shape;
    uint64_t numel = 1;
    for (uint64_t d = 0; d < ndim; ++d) {
      const uint64_t dim = r.u64("a tensor dimension");
      SPORE_CHECK(dim <= data_len && (dim == 0 || numel <= data_len / dim), "[load_checkpoint] ", path, ": tensor '",
                  name, "' has a dimension (", dim, ") larger than the file's data");
      numel *= dim;
      shape.push_back(static_cast<Dim>(dim));
    }
    const uint64_t offset = r.u64("a tensor offset");
    const uint64_t nbytes = r.u64("a tensor size");
    const auto dtype = static_cast<DType>(dt);
    SPORE_CHECK(nbytes == numel * dtype_size(dtype), "[load_checkpoint] ", path, ": tensor '", name, "' claims ",
                nbytes, " bytes but its shape and dtype need ", numel * dtype_size(dtype));
    SPORE_CHECK(offset % kAlign == 0 && offset <= data_len && nbytes <= data_len - offset, "[load_checkpoint] ", path,
                ": tensor '", name, "' lies outside the data section");
    SPORE_CHECK(seen.insert(name).second, "[load_checkpoint] ", path, ": two tensors are named '", name, "'");
    Tensor t = Tensor::empty(shape, dtype);
    if (nbytes) std::memcpy(t.data_ptr(), buf.data() + data_start + offset, nbytes);
    c.tensors.emplace_back(std::move(name), std::move(t));
  }
  SPORE_CHECK(r.done(), "[load_checkpoint] ", path, ": the header has trailing bytes; the file is corrupted");
  return c;
}

}  // namespace spore::train
