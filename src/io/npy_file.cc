// SPDX-License-Identifier: Apache-2.0
// save_npy / load_npy on files, and the atomic replace both writers use.
#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/npy_array.h"
#include "io/npy_header.h"
#include "spore/io/npy.h"

namespace spore::io {
namespace {

namespace fs = std::filesystem;

void write_all(int fd, const void* p, size_t n, const std::string& what, const std::string& tmp) {
  const auto* b = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t k = ::write(fd, b, std::min<size_t>(n, size_t{1} << 30));
    if (k < 0 && errno == EINTR) continue;
    SPORE_CHECK(k > 0, what, ": writing ", tmp, " failed: ", std::strerror(errno));
    b += k;
    n -= static_cast<size_t>(k);
  }
}

void read_all(int fd, void* p, size_t n, uint64_t at, const std::string& what) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t k = ::pread(fd, b, std::min<size_t>(n, size_t{1} << 30), static_cast<off_t>(at));
    if (k < 0 && errno == EINTR) continue;
    SPORE_CHECK(k > 0, what, ": read failed (", k < 0 ? std::strerror(errno) : "unexpected end of file",
                "); the file changed while it was read?");
    b += k;
    at += static_cast<uint64_t>(k);
    n -= static_cast<size_t>(k);
  }
}

}  // namespace

void save_npy(const std::string& path, const Tensor& t) {
  const std::string what = "[save_npy] " + path;
  SPORE_CHECK(t.defined(), what, ": the tensor is undefined");
  const Tensor c = t.contiguous();
  const std::vector<int64_t> shape(c.shape().begin(), c.shape().end());
  const std::string header = format_npy_header(c.dtype(), shape, what);
  const std::string tmp = temp_path_for(path);
  {
    Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    SPORE_CHECK(f.fd >= 0, what, ": cannot create ", tmp, ": ", std::strerror(errno),
                "; check that the directory exists and is writable");
    try {
      write_all(f.fd, header.data(), header.size(), what, tmp);
      write_all(f.fd, c.data_ptr(), static_cast<size_t>(c.numel()) * c.itemsize(), what, tmp);
    } catch (...) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
  }
  commit_temp(tmp, path, what);
}

Tensor load_npy(const std::string& path) {
  const std::string what = "[load_npy] " + path;
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  SPORE_CHECK(f.fd >= 0, what, ": cannot open (", std::strerror(errno), ")");
  struct stat st {};
  SPORE_CHECK(::fstat(f.fd, &st) == 0 && S_ISREG(st.st_mode), what, ": not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  std::vector<uint8_t> head(std::min<uint64_t>(size, 12 + kNpyMaxHeader));
  read_all(f.fd, head.data(), head.size(), 0, what);
  const NpyHeader h = parse_npy_header(head, size, what);
  return npy_to_tensor(
      h, [&](void* dst, size_t n) { read_all(f.fd, dst, n, h.data_offset, what); }, what);
}

}  // namespace spore::io
