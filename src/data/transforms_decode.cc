// SPDX-License-Identifier: Apache-2.0
// decode: encoded image bytes to uint8 (H, W, C). A block holds rows of one shape, so a block
// of encoded rows must decode to images of one shape; image_folder's encoded rows come one per
// block for that reason.
#include <cstring>

#include "data/image_decode.h"
#include "spore/data/transforms.h"

namespace spore::data {
namespace {

class Decode : public TransformOp {
 public:
  explicit Decode(int channels) : channels_(channels) {}
  std::string name() const override {
    return channels_ == 1 ? "decode(gray)" : channels_ == 3 ? "decode(rgb)" : "decode(as stored)";
  }
  Tensor apply(const Tensor& x, const SampleInfo& info) const override {
    SPORE_CHECK(x.dtype() == DType::UInt8 && x.dim() == 2,
                "[decode] expects encoded images as uint8 rows of bytes (bytes,), got ", dtype_name(x.dtype()), " samples of shape ",
                shape_str(std::span<const Dim>(x.shape().begin() + std::min<int64_t>(1, x.dim()), x.shape().end())));
    const Tensor src = x.contiguous();
    const int64_t n = src.size(0), len = src.size(1);
    std::vector<Tensor> images;
    images.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      const std::span<const uint8_t> bytes(src.data<uint8_t>() + i * len, static_cast<size_t>(len));
      images.push_back(decode_image(bytes, channels_, "[decode] sample " + std::to_string(info.ids[i])));
      SPORE_CHECK(images[i].shape() == images[0].shape(), "[decode] samples ", info.ids[0], " and ", info.ids[i],
                  " of one block decode to images of different shapes, ", shape_str(images[0].shape()), " and ",
                  shape_str(images[i].shape()),
                  "; a block holds rows of one shape: feed encoded rows one per block (image_folder with "
                  "decode = false does) or decode in the source (image_folder with decode = true)");
    }
    if (n == 1) return images[0].unsqueeze(0);
    Shape shape{n};
    for (Dim d : images[0].shape()) shape.push_back(d);
    Tensor out = Tensor::empty(shape, DType::UInt8);
    const size_t bytes = static_cast<size_t>(images[0].numel());
    for (int64_t i = 0; i < n; ++i) std::memcpy(out.data<uint8_t>() + i * bytes, images[i].data_ptr(), bytes);
    return out;
  }

 private:
  int channels_;
};

}  // namespace

Transform decode(int channels) {
  SPORE_CHECK(channels == 0 || channels == 1 || channels == 3,
              "[decode] channels must be 1 (gray), 3 (RGB) or 0 (as stored), got ", channels);
  return std::make_shared<Decode>(channels);
}

}  // namespace spore::data
