// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the oneDNN conv kernels (onednn_conv.cc) can run on this machine, for tests and tools.

namespace spore::cpu::onednn {

/// True when 3x3 convs of Winograd's shapes run oneDNN's Winograd kernel here: it is not turned
/// off (SPORE_CONV_ALGO=direct) and oneDNN may use AVX-512 (the CPU has it and
/// ONEDNN_MAX_CPU_ISA does not cap it lower).
bool winograd_available();

}  // namespace spore::cpu::onednn
