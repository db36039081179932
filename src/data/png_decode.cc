// SPDX-License-Identifier: Apache-2.0
// PNG through libpng's low-level API: its transforms do every conversion (palette and low bit
// depths expanded, 16 bits cut to the high byte as PIL does, gray<->RGB, alpha dropped).
// libpng reports errors by longjmp: everything the libpng calls change lives in a PngJob in the
// caller's frame, and the frame holding setjmp has no C++ object a jump could skip.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "data/image_decode.h"

namespace spore::data {
namespace {

struct PngJob {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  int channels = 3;
  const std::string* what = nullptr;
  char error[256] = {};
  Tensor out;
  std::vector<png_bytep> rows;
};

[[noreturn]] void on_error(png_structp png, png_const_charp msg) {
  auto* job = static_cast<PngJob*>(png_get_error_ptr(png));
  std::snprintf(job->error, sizeof job->error, "%s", msg);
  png_longjmp(png, 1);
}

// Warnings are about ancillary chunks (a bad sRGB profile, a text chunk's CRC): the pixels are fine.
void on_warning(png_structp, png_const_charp) {}

void on_read(png_structp png, png_bytep out, size_t n) {
  auto* job = static_cast<PngJob*>(png_get_io_ptr(png));
  if (job->size - job->pos < n) png_error(png, "truncated file: the data ends inside a chunk");
  std::memcpy(out, job->data + job->pos, n);
  job->pos += n;
}

/// The libpng calls; false (job.error set) when libpng failed.
bool run_png(png_structp png, png_infop info, PngJob& job) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_read_fn(png, &job, on_read);
  png_read_info(png, info);
  const png_uint_32 width = png_get_image_width(png, info);
  const png_uint_32 height = png_get_image_height(png, info);
  const int color = png_get_color_type(png, info);
  const int depth = png_get_bit_depth(png, info);
  const bool is_color = (color & PNG_COLOR_MASK_COLOR) != 0;
  bool has_alpha = (color & PNG_COLOR_MASK_ALPHA) != 0;

  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  // A tRNS chunk (one transparent color or palette alphas) becomes an alpha channel when kept;
  // libpng's palette expansion makes it one anyway, so then it is stripped like any alpha.
  if ((job.channels == 0 || color == PNG_COLOR_TYPE_PALETTE) && png_get_valid(png, info, PNG_INFO_tRNS)) {
    png_set_tRNS_to_alpha(png);
    has_alpha = true;
  }
  if (depth == 16) png_set_strip_16(png);
  int out_c = job.channels;
  if (job.channels == 0) {
    out_c = (is_color ? 3 : 1) + (has_alpha ? 1 : 0);
  } else {
    if (has_alpha) png_set_strip_alpha(png);
    // ITU-R 601 weights, PIL's convert("L"); libpng rounds differently (off by at most 1).
    if (job.channels == 1 && is_color) png_set_rgb_to_gray_fixed(png, 1, 29900, 58700);
    if (job.channels == 3 && !is_color) png_set_gray_to_rgb(png);
  }
  png_set_interlace_handling(png);
  png_read_update_info(png, info);

  const uint64_t row_bytes = uint64_t{width} * static_cast<uint64_t>(out_c);
  SPORE_ASSERT(png_get_channels(png, info) == out_c && png_get_rowbytes(png, info) == row_bytes,
               "libpng gives ", int(png_get_channels(png, info)), " channels, expected ", out_c);
  // Thrown from this frame with no libpng call active: an ordinary C++ exception.
  SPORE_CHECK(row_bytes * height <= static_cast<uint64_t>(kMaxImageBytes), *job.what, ": image of ", width, "x",
              height, "x", out_c, " is larger than the ", kMaxImageBytes, "-byte limit");
  job.out = Tensor::empty(Shape{static_cast<Dim>(height), static_cast<Dim>(width), out_c}, DType::UInt8);
  job.rows.resize(height);
  auto* base = job.out.data<uint8_t>();
  for (png_uint_32 y = 0; y < height; ++y) job.rows[y] = base + y * row_bytes;
  png_read_image(png, job.rows.data());
  // Reads on to IEND, so a file cut after its pixel data is caught too.
  png_read_end(png, nullptr);
  return true;
}

}  // namespace

Tensor decode_png(std::span<const uint8_t> bytes, int channels, const std::string& what) {
  PngJob job;
  job.data = bytes.data();
  job.size = bytes.size();
  job.channels = channels;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, on_error, on_warning);
  SPORE_CHECK(png != nullptr, what, ": libpng could not allocate its decoder (out of memory)");
  png_infop info = png_create_info_struct(png);
  struct Destroy {
    png_structp* png;
    png_infop* info;
    ~Destroy() { png_destroy_read_struct(png, *info ? info : nullptr, nullptr); }
  } destroy{&png, &info};
  SPORE_CHECK(info != nullptr, what, ": libpng could not allocate its decoder (out of memory)");
  job.what = &what;
  const bool ok = run_png(png, info, job);
  SPORE_CHECK(ok, what, ": corrupt or truncated PNG (libpng: ", job.error, ")");
  return std::move(job.out);
}

}  // namespace spore::data
