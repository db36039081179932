// SPDX-License-Identifier: Apache-2.0
#pragma once
// The binary MindIR file (docs/mindir.md, "Binary form"): a 64-byte header, the protobuf Model
// message (io/mindir.proto), then the 64-byte-aligned raw tensor section. Every reader and
// writer of models goes through LoadedModel; these two are the MindIR ones.
#include <cstdint>
#include <optional>
#include <string>

#include "io/loaded_model.h"
#include "spore/io/model_key.h"

namespace spore::io {

/// The file format version this build writes; it reads 1..kMindirFormatVersion.
inline constexpr uint32_t kMindirFormatVersion = 1;

/// Reads and checks a MindIR file: every size, offset, count, reference and checksum is checked
/// before it is used; a bad file throws spore::Error naming the file and the problem.
/// metadata gets "format" = "mindir", "producer", "producer_version" and the file's own entries.
/// An encrypted file (io/model_cipher.h) needs its `key` and is decrypted into memory; a key
/// given for a plain file is an error.
LoadedModel read_mindir(const std::string& path, const std::optional<ModelKey>& key = std::nullopt);

/// Writes `m` atomically (an existing file is replaced only by a complete new one). State
/// tensors must match the graph's state inputs in number, dtype and shape. With `key` the file
/// is written in the encrypted form, streamed through AES-GCM.
void write_mindir(const LoadedModel& m, const std::string& path, const std::optional<ModelKey>& key = std::nullopt);

/// For tests and debugging: the graph message of a MindIR file's bytes in protobuf text format,
/// and the file's bytes with that message replaced by `text` (offsets and checksums of the
/// header recomputed, the tensor section kept), so a test can build files that pass the
/// checksums and fail the reader's semantic checks. Throws spore::Error on bad input.
std::string mindir_message_text(const std::string& file);
std::string replace_mindir_message(const std::string& file, const std::string& text);

}  // namespace spore::io
