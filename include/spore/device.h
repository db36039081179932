// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <cstdint>
#include <string>

namespace spore {

/// Where a tensor lives. `meta` tensors have types and shapes but no storage: models can be
/// built and shape-checked on it (and priced by the planner) without allocating.
enum class DeviceType : uint8_t { CPU, Meta };
inline constexpr int kNumDeviceTypes = 2;

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  friend bool operator==(const Device&, const Device&) = default;
  std::string str() const;
};

inline constexpr Device kCPU{DeviceType::CPU, 0};
inline constexpr Device kMeta{DeviceType::Meta, 0};

}  // namespace spore
