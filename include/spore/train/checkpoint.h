// SPDX-License-Identifier: Apache-2.0
#pragma once
// Training checkpoints: named tensors (model parameters and buffers, optimizer state) plus
// integer and text metadata (step, epoch, sample position, shuffle seed, generator state) in
// one file. Files are written atomically (temporary file, fsync, rename, fsync of the
// directory) and carry a CRC-32 of their whole content, so a crash while saving leaves the
// previous checkpoint intact and a truncated or corrupted file is refused as a whole: loading
// never returns part of a file.
//
// Layout (little-endian): "SPORECKP" | u32 version | u32 flags(0) | u64 header bytes | header |
// zero padding to 64 | tensor data, each 64-byte aligned | u32 CRC-32 of all previous bytes |
// "SPOREEND". The header lists metadata entries and tensor entries (name, dtype, shape, data
// offset, byte count); every count and length is bounded and checked against the file size
// before anything is allocated.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "spore/tensor.h"

namespace spore::train {

struct Checkpoint {
  /// Tensors by unique name, in the order they were added ("model.conv1.weight", "optim.0.0.exp_avg").
  std::vector<std::pair<std::string, Tensor>> tensors;
  /// Integer metadata: "step", "epoch", "sample_index", "shuffle_seed", "rng_seed", "rng_offset" ...
  std::map<std::string, int64_t> ints;
  /// Text metadata: "model", "optimizer", "producer" ...
  std::map<std::string, std::string> texts;

  /// The tensor named `name`; throws spore::Error naming the file's entries when absent.
  const Tensor& tensor(const std::string& name) const;
  /// Entries whose names start with `prefix`, the prefix removed (e.g. "model.").
  std::vector<std::pair<std::string, Tensor>> with_prefix(const std::string& prefix) const;
  int64_t get_int(const std::string& key) const;
  /// A double kept exactly (infinities included) as the 0-d float64 tensor `name`: the format
  /// needs no new kind of entry, so files stay readable by older builds.
  void set_double(const std::string& name, double value);
  /// The value set_double stored; throws spore::Error when absent or not a 0-d float64 tensor.
  double get_double(const std::string& name) const;
  /// True when some tensor, integer or text entry's name starts with `prefix`.
  bool has_prefix(const std::string& prefix) const;
};

/// Writes `c` to `path` atomically. Tensors are saved contiguous, on the CPU.
void save_checkpoint(const std::string& path, const Checkpoint& c);
/// Reads and fully validates a checkpoint; throws spore::Error naming the file and the fault
/// (not a checkpoint, newer version, truncated, checksum mismatch, bad entry).
Checkpoint load_checkpoint(const std::string& path);

/// The current checkpoint format version; files with a larger version are refused.
inline constexpr uint32_t kCheckpointVersion = 1;

}  // namespace spore::train
