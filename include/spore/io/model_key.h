// SPDX-License-Identifier: Apache-2.0
#pragma once
// The key of an encrypted MindIR file (docs/mindir.md, "Encrypted form"): AES-GCM with a
// 16-, 24- or 32-byte key (AES-128/192/256), as MindSpore's enc_key. The cryptography is
// OpenSSL's; Spore only frames the file.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spore::io {

struct ModelKey {
  std::vector<uint8_t> bytes;

  ModelKey() = default;
  ModelKey(const ModelKey&) = default;
  ModelKey(ModelKey&&) = default;
  ModelKey& operator=(const ModelKey&) = default;
  ModelKey& operator=(ModelKey&&) = default;
  /// Wipes the key bytes (OPENSSL_cleanse) so they do not linger in freed memory.
  ~ModelKey();

  /// From raw bytes; throws spore::Error unless there are 16, 24 or 32.
  static ModelKey from_bytes(std::vector<uint8_t> bytes);
  /// From hex text (32, 48 or 64 hex digits; surrounding whitespace is ignored), as the
  /// command line's `--key` takes it. Errors name the problem, never the key.
  static ModelKey from_hex(std::string_view hex);
  /// `--key` on the command line: hex digits, or `@FILE` for a file holding them (so the key
  /// need not appear in the process list).
  static ModelKey from_flag(const std::string& value);
};

/// True when the file at `path` is an encrypted MindIR file (by its first bytes); false when
/// it is not or cannot be read.
bool file_is_encrypted_model(const std::string& path);

}  // namespace spore::io
