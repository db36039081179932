// SPDX-License-Identifier: Apache-2.0
#pragma once
// The raw tensor section of a model file and the file plumbing around it: a read-only memory
// map of the whole file (so loading reads only what it uses and never holds the file twice),
// zlib's crc32 over large spans, and the atomic write (temp file, fsync, rename) every model
// writer uses so a failed write leaves an existing file as it was.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace spore::io {

/// Tensor data starts at multiples of this in the file (and so in a page-aligned mapping).
inline constexpr uint64_t kTensorAlignment = 64;

/// `n` rounded up to a multiple of kTensorAlignment.
inline constexpr uint64_t align_up(uint64_t n) { return (n + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment; }

/// zlib crc32 of `bytes`, fed in pieces (zlib takes a 32-bit length).
uint32_t crc32_of(std::span<const std::byte> bytes);

/// A model file's bytes in memory, shared by every tensor that views them: a mapped file, or a
/// decrypted one (io/model_cipher.h). Loaded weights are views of mutable_data().
class ModelBytes {
 public:
  virtual ~ModelBytes() = default;
  virtual std::span<const std::byte> bytes() const = 0;
  virtual std::byte* mutable_data() const = 0;
  virtual const std::string& path() const = 0;
};

/// A whole file mapped read-only. Shared by everything that views its bytes.
class MappedFile final : public ModelBytes {
 public:
  /// Maps `path`; throws spore::Error naming the file when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile() override;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const std::byte> bytes() const override { return {static_cast<const std::byte*>(data_), size_}; }
  /// The mapping is private and writable (copy on write): loaded tensors are views of it.
  std::byte* mutable_data() const override { return static_cast<std::byte*>(data_); }
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

class ModelEncryptor;

/// An open output file for write_atomically: appends bytes and tracks the position.
class FileWriter {
 public:
  FileWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  void write(std::span<const std::byte> bytes);
  /// Zero bytes up to the next multiple of kTensorAlignment.
  void pad_to_alignment();
  /// The position in the (plaintext) file being written.
  uint64_t position() const { return pos_; }
  /// From here on write() goes through `e` (null: stops); position() stays the plaintext's.
  void encrypt_with(ModelEncryptor* e) { enc_ = e; }
  /// Bytes straight to the file, outside the plaintext (an encrypted file's header and tag).
  void write_raw(std::span<const std::byte> bytes);

 private:
  int fd_;
  std::string path_;
  uint64_t pos_ = 0;
  ModelEncryptor* enc_ = nullptr;
};

/// Writes `path` atomically: `fill` writes a temporary file in the same directory, which is then
/// fsynced and renamed over `path` (and the directory fsynced). If `fill` throws, the temporary
/// is removed and `path` is untouched. `what` names the caller in errors ("[save_mindir]").
void write_atomically(const std::string& path, const char* what, const std::function<void(FileWriter&)>& fill);

}  // namespace spore::io
