// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstddef>
#include <cstdint>

#include "spore/device.h"

namespace spore {

/// Counters of a device's caching allocator.
struct MemoryStats {
  size_t bytes_in_use = 0;        // held by live tensors (rounded to size classes)
  size_t peak_bytes_in_use = 0;   // since start or reset_peak_memory_stats()
  size_t bytes_cached = 0;        // freed blocks kept for reuse
  uint64_t system_allocations = 0;  // calls that went to the system (malloc/mmap)
  uint64_t system_frees = 0;
};

MemoryStats memory_stats(Device device = kCPU);
void reset_peak_memory_stats(Device device = kCPU);
/// Returns every cached block to the system.
void empty_cache(Device device = kCPU);
/// Caps the bytes the allocator holds (in use + cached); 0 removes the cap. Also read at start
/// from SPORE_MEMORY_LIMIT (bytes, or with a K/M/G suffix).
void set_memory_limit(size_t bytes, Device device = kCPU);
size_t memory_limit(Device device = kCPU);

}  // namespace spore
