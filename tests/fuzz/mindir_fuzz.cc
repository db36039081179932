// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: MindIR files (src/io/mindir_file.cc, mindir_graph.cc). read_mindir refuses a
// file whose header or graph-message checksum does not match, which would stop the fuzzer at the
// checksums; so the harness recomputes both (when the header's placement is in bounds) and the
// protobuf parser, the graph rebuild and every semantic check see the mutated bytes. Tensor
// checksums are left as they are: they guard plain data. Encrypted files (SPOREENC) are read
// with the fixed key of the encrypted seed (kFuzzKey): mutations reach the container's header
// checks and the AES-GCM tag check. Seeds: tests/fuzz/corpus/mindir.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "io/mindir_file.h"
#include "spore/io/model_key.h"
#include "io/tensor_section.h"
#include "spore/error.h"
#include "transforms/ir_bridge.h"

namespace {

const std::string& temp_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/spore_fuzz_mindir_" + std::to_string(::getpid()) + ".mindir";
  }();
  return path;
}

void fix_checksums(std::string& b) {
  if (b.size() < 64) return;
  uint64_t msg_off = 0, msg_size = 0;
  std::memcpy(&msg_off, b.data() + 16, 8);
  std::memcpy(&msg_size, b.data() + 24, 8);
  if (msg_off <= b.size() && msg_size <= b.size() - msg_off) {
    const uint32_t crc = spore::io::crc32_of(
        std::span<const std::byte>(reinterpret_cast<const std::byte*>(b.data()) + msg_off, msg_size));
    std::memcpy(b.data() + 48, &crc, 4);
  }
  const uint32_t header_crc =
      spore::io::crc32_of(std::span<const std::byte>(reinterpret_cast<const std::byte*>(b.data()) + 16, 48));
  std::memcpy(b.data() + 12, &header_crc, 4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool registered = (spore::transforms::register_ir_ops(), true);
  (void)registered;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  const bool encrypted = size >= 8 && std::memcmp(data, "SPOREENC", 8) == 0;
  if (!encrypted) fix_checksums(bytes);
  FILE* f = std::fopen(temp_path().c_str(), "wb");
  if (f == nullptr) __builtin_trap();
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  try {
    static const spore::io::ModelKey kFuzzKey =
        spore::io::ModelKey::from_hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    const spore::io::LoadedModel m =
        spore::io::read_mindir(temp_path(), encrypted ? std::optional(kFuzzKey) : std::nullopt);
    volatile uint8_t sink = 0;
    for (const auto& t : m.state) {
      const auto* p = static_cast<const uint8_t*>(t.data_ptr());
      for (size_t i = 0; i < static_cast<size_t>(t.numel()) * t.itemsize(); ++i) sink = sink ^ p[i];
    }
  } catch (const spore::Error&) {
  }
  return 0;
}
