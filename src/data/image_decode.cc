// SPDX-License-Identifier: Apache-2.0
// Chooses the codec by magic bytes, as PIL and torchvision do.
#include "data/image_decode.h"

#include <cstdio>
#include <cstring>

namespace spore::data {

ImageFormat sniff_image(std::span<const uint8_t> bytes) {
  static constexpr uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPng, 8) == 0) return ImageFormat::Png;
  if (bytes.size() >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff) return ImageFormat::Jpeg;
  return ImageFormat::Unknown;
}

Tensor decode_image(std::span<const uint8_t> bytes, int channels, const std::string& what) {
  SPORE_CHECK(channels == 0 || channels == 1 || channels == 3, what,
              ": channels must be 1 (gray), 3 (RGB) or 0 (as stored), got ", channels);
  switch (sniff_image(bytes)) {
    case ImageFormat::Png: return decode_png(bytes, channels, what);
    case ImageFormat::Jpeg: return decode_jpeg(bytes, channels, what);
    case ImageFormat::Unknown: break;
  }
  char head[40] = "";
  for (size_t i = 0, at = 0; i < std::min<size_t>(bytes.size(), 8); ++i)
    at += static_cast<size_t>(std::snprintf(head + at, sizeof head - at, i ? " %02x" : ", starting %02x", bytes[i]));
  SPORE_CHECK(false, what, ": not a PNG or JPEG image (", bytes.size(), " bytes", head,
              "); only PNG (89 50 4e 47 ...) and JPEG (ff d8 ff ...) are decoded");
  return {};
}

}  // namespace spore::data
