// SPDX-License-Identifier: Apache-2.0
#include "io/tensor_section.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/atomic_file.h"
#include "io/model_cipher.h"
#include "spore/error.h"

namespace spore::io {

uint32_t crc32_of(std::span<const std::byte> bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(bytes.data());
  size_t n = bytes.size();
  while (n > 0) {
    const uInt k = static_cast<uInt>(std::min<size_t>(n, size_t{1} << 30));
    crc = crc32(crc, p, k);
    p += k;
    n -= k;
  }
  return static_cast<uint32_t>(crc);
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  SPORE_CHECK(fd >= 0, "[load_mindir] cannot open ", path, ": ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(detail::cat("[load_mindir] ", path, " is not a regular file"));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    // Private and writable: loaded weights are views of this mapping, and fine-tuning writes
    // copy the touched pages; the file itself is never written.
    data_ = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (data_ == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      data_ = nullptr;
      throw Error(detail::cat("[load_mindir] cannot map ", path, ": ", std::strerror(err)));
    }
  }
  ::close(fd);  // the mapping stays valid without the descriptor
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

void FileWriter::write_raw(std::span<const std::byte> bytes) {
  const auto* p = reinterpret_cast<const char*>(bytes.data());
  size_t n = bytes.size();
  while (n > 0) {
    const ssize_t k = ::write(fd_, p, n);
    if (k < 0 && errno == EINTR) continue;
    SPORE_CHECK(k > 0, "cannot write ", path_, ": ", std::strerror(errno), "; check the free disk space");
    p += k;
    n -= static_cast<size_t>(k);
  }
}

void FileWriter::write(std::span<const std::byte> bytes) {
  if (enc_ != nullptr) enc_->update(bytes, [&](std::span<const std::byte> c) { write_raw(c); });
  else write_raw(bytes);
  pos_ += bytes.size();
}

void FileWriter::pad_to_alignment() {
  static constexpr std::array<std::byte, kTensorAlignment> kZeros{};
  write(std::span<const std::byte>(kZeros.data(), align_up(pos_) - pos_));
}

void write_atomically(const std::string& path, const char* what, const std::function<void(FileWriter&)>& fill) {
  const std::string tmp = temp_path_for(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  SPORE_CHECK(fd >= 0, what, " cannot create ", tmp, ": ", std::strerror(errno),
              "; check that the directory exists and is writable");
  try {
    FileWriter w(fd, tmp);
    fill(w);
  } catch (...) {
    ::close(fd);
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
  ::close(fd);
  commit_temp(tmp, path, what);
}

}  // namespace spore::io
