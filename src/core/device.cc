// SPDX-License-Identifier: Apache-2.0
#include "spore/device.h"

namespace spore {

std::string Device::str() const {
  return type == DeviceType::CPU ? "cpu" : "meta";
}

}  // namespace spore
