// SPDX-License-Identifier: Apache-2.0
#pragma once
// Decoding one encoded image (PNG through libpng, JPEG through libjpeg) into uint8 (H, W, C):
// what image_folder does at build time and the decode() transform does per sample.
#include <cstdint>
#include <span>
#include <string>

#include "spore/tensor.h"

namespace spore::data {

/// The image format, from the first bytes (extensions are not trusted).
enum class ImageFormat { Png, Jpeg, Unknown };
ImageFormat sniff_image(std::span<const uint8_t> bytes);

/// Decodes PNG or JPEG bytes to uint8 (H, W, C). `channels`: 1 (gray), 3 (RGB; alpha dropped)
/// or 0 (as stored: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA). Errors (corrupt, truncated, not an
/// image) are spore::Error messages starting with `what` (e.g. "[image_folder] a/b.png").
Tensor decode_image(std::span<const uint8_t> bytes, int channels, const std::string& what);

/// The two codecs behind decode_image.
Tensor decode_png(std::span<const uint8_t> bytes, int channels, const std::string& what);
Tensor decode_jpeg(std::span<const uint8_t> bytes, int channels, const std::string& what);

/// Largest decoded image accepted (bytes): a corrupt header must not ask for terabytes.
inline constexpr int64_t kMaxImageBytes = int64_t{1} << 32;

}  // namespace spore::data
