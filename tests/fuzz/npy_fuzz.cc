// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a .npy file from bytes (header parser, size checks, byte-order and
// Fortran-order decoding). Any exception other than spore::Error is a finding.
#include <cstddef>
#include <cstdint>

#include "io/npy_array.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const spore::Tensor t = spore::io::decode_npy({data, size}, "[fuzz] input.npy");
    // Touch every byte so a short buffer shows up under ASan.
    volatile uint8_t sink = 0;
    const auto* p = static_cast<const uint8_t*>(t.data_ptr());
    for (size_t i = 0; i < static_cast<size_t>(t.numel()) * t.itemsize(); ++i) sink = sink ^ p[i];
  } catch (const spore::Error&) {
  }
  return 0;
}
