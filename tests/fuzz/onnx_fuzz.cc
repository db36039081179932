// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: ONNX models (src/io/onnx/importer.cc and its operator mappings). The bytes
// go straight to import_onnx_bytes: protobuf parsing, the size and index checks, initializer
// decoding, shape folding and every operator mapping the mutated graph reaches. Seeds:
// tests/fuzz/corpus/onnx (small models exported by PyTorch, with Conv, Gemm, Loop and If).
#include <string_view>

#include "io/onnx/importer.h"
#include "spore/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const spore::io::LoadedModel m =
        spore::io::import_onnx_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
    (void)m;
  } catch (const spore::Error&) {
  }
  return 0;
}
