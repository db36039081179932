// SPDX-License-Identifier: Apache-2.0
#pragma once
// The encrypted form of a MindIR file (docs/mindir.md, "Encrypted form"): a 64-byte header
// (magic SPOREENC, container version, cipher, key size, a random 96-bit nonce, the plaintext
// size), the AES-GCM ciphertext of a complete binary MindIR file, and the 16-byte GCM tag. The
// header is the GCM's additional authenticated data, so a changed byte anywhere fails the tag.
// OpenSSL (libcrypto's EVP interface) does the cryptography.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "io/tensor_section.h"
#include "spore/io/model_key.h"

namespace spore::io {

inline constexpr char kEncryptedMagic[8] = {'S', 'P', 'O', 'R', 'E', 'E', 'N', 'C'};
inline constexpr size_t kCipherHeaderSize = 64;
inline constexpr size_t kGcmTagSize = 16;

/// True when `head` (a file's first bytes) starts with the encrypted form's magic.
bool is_encrypted_model(std::span<const std::byte> head);

/// Encrypts a stream: header() first, then update() on every plaintext piece in order, then
/// finish() for the tag. `plaintext_size` is the exact total (it is in the header).
class ModelEncryptor {
 public:
  ModelEncryptor(const ModelKey& key, uint64_t plaintext_size, const char* what);
  ~ModelEncryptor();
  ModelEncryptor(const ModelEncryptor&) = delete;
  ModelEncryptor& operator=(const ModelEncryptor&) = delete;
  const std::array<std::byte, kCipherHeaderSize>& header() const { return header_; }
  /// Encrypts `in`, handing the ciphertext to `out` (in pieces of at most 1 MiB).
  void update(std::span<const std::byte> in, const std::function<void(std::span<const std::byte>)>& out);
  std::array<std::byte, kGcmTagSize> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::array<std::byte, kCipherHeaderSize> header_{};
  const char* what_;
};

/// Reads an encrypted model file in pieces and decrypts it into memory (no mapping: the
/// plaintext exists only there), 64-byte aligned like a mapped file. Throws spore::Error naming
/// the file for a bad header, a wrong key size, and a wrong key or a modified file (the tag).
std::shared_ptr<ModelBytes> decrypt_model_file(const std::string& path, const ModelKey& key);

}  // namespace spore::io
