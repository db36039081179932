// SPDX-License-Identifier: Apache-2.0
// JPEG through libjpeg (libjpeg-turbo on Debian, the library PIL links, so pixels match PIL's).
// libjpeg's default error handler calls exit(); ours longjmps back to run_jpeg, whose frame
// holds no C++ object, and everything it changes lives in the caller's JpegJob.
#include <csetjmp>
#include <cstdio>
#include <cstring>
// jpeglib.h needs size_t and FILE declared first.
#include <jpeglib.h>

#include "data/image_decode.h"

namespace spore::data {
namespace {

struct JpegError {
  jpeg_error_mgr pub;  // first: libjpeg sees a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

struct JpegJob {
  jpeg_decompress_struct cinfo;
  JpegError err;
  const uint8_t* data = nullptr;
  size_t size = 0;
  int channels = 3;
  const std::string* what = nullptr;
  Tensor out;
};

[[noreturn]] void on_error(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegError*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

// Level -1 is a warning about the data: a premature end (libjpeg would fill the rest with gray)
// or corrupt entropy-coded data. A damaged image must not train silently, so these are errors.
void on_message(j_common_ptr c, int level) {
  if (level < 0) on_error(c);
}

/// The libjpeg calls; false (job.err.message set) when libjpeg failed.
bool run_jpeg(JpegJob& job) {
  if (setjmp(job.err.jump)) return false;
  jpeg_create_decompress(&job.cinfo);
  jpeg_mem_src(&job.cinfo, job.data, static_cast<unsigned long>(job.size));
  jpeg_read_header(&job.cinfo, TRUE);
  jpeg_decompress_struct& ci = job.cinfo;
  // Thrown from this frame with no libjpeg call active: an ordinary C++ exception.
  SPORE_CHECK(ci.jpeg_color_space == JCS_GRAYSCALE || ci.jpeg_color_space == JCS_YCbCr || ci.jpeg_color_space == JCS_RGB,
              *job.what, ": ", ci.num_components,
              "-component (CMYK/YCCK) JPEGs are not supported; convert the image to RGB");
  const bool gray = job.channels == 1 || (job.channels == 0 && ci.jpeg_color_space == JCS_GRAYSCALE);
  ci.out_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  const int out_c = gray ? 1 : 3;
  const uint64_t row_bytes = uint64_t{ci.image_width} * static_cast<uint64_t>(out_c);
  SPORE_CHECK(row_bytes * ci.image_height <= static_cast<uint64_t>(kMaxImageBytes), *job.what, ": image of ",
              ci.image_width, "x", ci.image_height, "x", out_c, " is larger than the ", kMaxImageBytes, "-byte limit");
  jpeg_start_decompress(&ci);
  SPORE_ASSERT(ci.output_components == out_c && ci.output_width == ci.image_width && ci.output_height == ci.image_height,
               "libjpeg output ", ci.output_width, "x", ci.output_height, "x", ci.output_components);
  job.out = Tensor::empty(Shape{static_cast<Dim>(ci.output_height), static_cast<Dim>(ci.output_width), out_c},
                          DType::UInt8);
  uint8_t* base = job.out.data<uint8_t>();
  while (ci.output_scanline < ci.output_height) {
    JSAMPROW row = base + ci.output_scanline * row_bytes;
    jpeg_read_scanlines(&ci, &row, 1);
  }
  // Reads on to EOI, so a file cut after its last scan is caught too.
  jpeg_finish_decompress(&ci);
  return true;
}

}  // namespace

Tensor decode_jpeg(std::span<const uint8_t> bytes, int channels, const std::string& what) {
  JpegJob job;
  std::memset(&job.cinfo, 0, sizeof job.cinfo);
  job.cinfo.err = jpeg_std_error(&job.err.pub);
  job.err.pub.error_exit = on_error;
  job.err.pub.emit_message = on_message;
  job.err.message[0] = '\0';
  job.data = bytes.data();
  job.size = bytes.size();
  job.channels = channels;
  job.what = &what;
  // jpeg_destroy_decompress is safe on a zeroed or half-created struct (it checks cinfo.mem).
  struct Destroy {
    jpeg_decompress_struct* cinfo;
    ~Destroy() { jpeg_destroy_decompress(cinfo); }
  } destroy{&job.cinfo};
  const bool ok = run_jpeg(job);
  SPORE_CHECK(ok, what, ": corrupt or truncated JPEG (libjpeg: ", job.err.message, ")");
  return std::move(job.out);
}

}  // namespace spore::data
