// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: a .npz archive from bytes (libzip's reader, our bounds on what it reports,
// every member through the .npy decoder). Any exception other than spore::Error is a finding.
#include <cstddef>
#include <cstdint>

#include "io/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    volatile uint8_t sink = 0;
    for (const auto& [name, t] : spore::io::load_npz_from_memory({data, size}, "[fuzz] input.npz")) {
      const auto* p = static_cast<const uint8_t*>(t.data_ptr());
      for (size_t i = 0; i < static_cast<size_t>(t.numel()) * t.itemsize(); ++i) sink = sink ^ p[i];
    }
  } catch (const spore::Error&) {
  }
  return 0;
}
