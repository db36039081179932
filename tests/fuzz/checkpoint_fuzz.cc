// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: training checkpoints (src/train/checkpoint.cc). load_checkpoint reads a
// path and refuses any file whose CRC-32 does not match, which would stop the fuzzer at the
// checksum; so unless the input already ends with the end marker, the harness appends a valid
// trailer (CRC-32 of the input, "SPOREEND") and the header parser sees the mutated bytes.
// Seeds (tests/fuzz/corpus/checkpoint) are checkpoints with their 12-byte trailer removed.
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "spore/train/checkpoint.h"

namespace {

const std::string& temp_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/spore_fuzz_checkpoint_" + std::to_string(::getpid()) + ".ckpt";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size < 8 || std::memcmp(data + size - 8, "SPOREEND", 8) != 0) {
    const uint32_t crc = static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0), data, static_cast<uInt>(size)));
    bytes.append(reinterpret_cast<const char*>(&crc), 4);
    bytes += "SPOREEND";
  }
  FILE* f = std::fopen(temp_path().c_str(), "wb");
  if (f == nullptr) __builtin_trap();
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  try {
    const spore::train::Checkpoint c = spore::train::load_checkpoint(temp_path());
    volatile uint8_t sink = 0;
    for (const auto& [name, t] : c.tensors) {
      const auto* p = static_cast<const uint8_t*>(t.data_ptr());
      for (size_t i = 0; i < static_cast<size_t>(t.numel()) * t.itemsize(); ++i) sink = sink ^ p[i];
    }
  } catch (const spore::Error&) {
  }
  return 0;
}
