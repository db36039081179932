// SPDX-License-Identifier: Apache-2.0
// Cell::reset_parameters: a model built on the meta device, materialized with to_empty() and
// reset under the same seed is bit for bit the model built directly, and the generator ends at
// the same offset (every layer drew what its constructor drew, in the same order).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>

#include "error_matchers.h"
#include "spore/models/classic.h"
#include "spore/models/mobilenet.h"
#include "spore/models/resnet.h"
#include "spore/models/text.h"
#include "spore/models/vit.h"
#include "spore/nn.h"
#include "spore/spore.h"

namespace spore::nn {
namespace {

::testing::AssertionResult bitwise_equal(const Cell& a, const Cell& b) {
  const auto x = a.state_dict(), y = b.state_dict();
  if (x.size() != y.size()) return ::testing::AssertionFailure() << x.size() << " vs " << y.size() << " entries";
  for (size_t i = 0; i < x.size(); ++i) {
    const Tensor p = x[i].second.contiguous(), q = y[i].second.contiguous();
    if (x[i].first != y[i].first || p.dtype() != q.dtype() || p.shape() != q.shape())
      return ::testing::AssertionFailure() << x[i].first << " vs " << y[i].first;
    if (p.device() != kCPU || q.device() != kCPU) return ::testing::AssertionFailure() << x[i].first << " is not on the CPU";
    if (std::memcmp(p.data_ptr(), q.data_ptr(), static_cast<size_t>(p.numel()) * dtype_size(p.dtype())) != 0)
      return ::testing::AssertionFailure() << x[i].first << " differs";
  }
  return ::testing::AssertionSuccess();
}

// Builds with `make` directly under seed 11 and on the meta device, materializes and resets the
// second under seed 11, and checks both the weights and where the generator ended.
void expect_meta_reset_matches(const std::function<std::unique_ptr<Cell>()>& make) {
  manual_seed(11);
  auto direct = make();
  const uint64_t offset_direct = default_generator().offset();
  ASSERT_GT(offset_direct, 0u) << "the model draws nothing; the check would be empty";
  manual_seed(11);
  std::unique_ptr<Cell> meta;
  {
    init::DeviceScope scope(kMeta);
    meta = make();
  }
  EXPECT_EQ(default_generator().offset(), 0u);  // nothing drawn on the meta device
  meta->to_empty();
  meta->reset_parameters();
  EXPECT_EQ(default_generator().offset(), offset_direct);
  EXPECT_TRUE(bitwise_equal(*meta, *direct));
  // Under another seed the same reset gives other weights: the comparison can fail.
  manual_seed(12);
  meta->reset_parameters();
  EXPECT_FALSE(bitwise_equal(*meta, *direct));
}

std::unique_ptr<Cell> mlp() {
  auto net = std::make_unique<SequentialCell>();
  net->add(std::make_unique<Dense>(8, 16)).add(std::make_unique<ReLU>()).add(std::make_unique<Dense>(16, 4, false));
  return net;
}

std::unique_ptr<SequentialCell> conv_net() {
  auto net = std::make_unique<SequentialCell>();
  net->add(std::make_unique<Conv2d>(1, 4, 3, 1, 1))
      .add(std::make_unique<BatchNorm2d>(4))
      .add(std::make_unique<ReLU>())
      .add(std::make_unique<Conv2d>(4, 4, 3, 1, 1, 1, /*groups=*/2))
      .add(std::make_unique<Conv2dTranspose>(4, 2, 2, 2))
      .add(std::make_unique<Flatten>())
      .add(std::make_unique<Dense>(2 * 32 * 32, 3));
  return net;
}

// Embedding with a padding row, a two-layer bidirectional LSTM and a GRU, and a transformer
// layer (its attention draws, then builds a Dense that draws, then zeroes that Dense's bias).
class TextNet : public Cell {
 public:
  TextNet()
      : Cell("TextNet"),
        emb(20, 8, /*padding_idx=*/0),
        lstm(8, 6, {.num_layers = 2, .bidirectional = true}),
        gru(12, 8),
        encoder(8, 2, {.dim_feedforward = 16}),
        head(8, 5) {
    register_cell("emb", &emb);
    register_cell("lstm", &lstm);
    register_cell("gru", &gru);
    register_cell("encoder", &encoder);
    register_cell("head", &head);
  }
  Embedding emb;
  LSTM lstm;
  GRU gru;
  TransformerEncoderLayer encoder;
  Dense head;
};

TEST(NnReset, MetaThenResetEqualsDirectMlp) { expect_meta_reset_matches(mlp); }

TEST(NnReset, MetaThenResetEqualsDirectConvNetWithBatchNorm) {
  expect_meta_reset_matches([] { return std::unique_ptr<Cell>(conv_net()); });
}

TEST(NnReset, MetaThenResetEqualsDirectEmbeddingLstmGruTransformer) {
  expect_meta_reset_matches([] { return std::unique_ptr<Cell>(std::make_unique<TextNet>()); });
  manual_seed(3);
  TextNet t;
  t.reset_parameters();
  EXPECT_EQ(ops::sum(ops::abs(ops::select(t.emb.weight, 0, 0))).item<float>(), 0.0f);  // the padding row
  EXPECT_EQ(ops::sum(ops::abs(t.encoder.self_attn->out_proj->bias)).item<float>(), 0.0f);
}

// A zoo model's own post-init (torchvision's kaiming_normal_ on every convolution) is part of
// the reset: without it the convolutions would keep Conv2d's default init.
TEST(NnReset, MetaThenResetEqualsDirectResNet) {
  expect_meta_reset_matches([] {
    return std::unique_ptr<Cell>(std::make_unique<models::ResNet>(models::ResNet::Block::Basic,
                                                                   std::array<int64_t, 4>{1, 1, 1, 1}, 3, 1));
  });
}

// MobileNetV2: fan-out kaiming on every convolution, N(0, 0.01) classifier with a zero bias.
TEST(NnReset, MetaThenResetEqualsDirectMobileNetV2) {
  expect_meta_reset_matches([] { return std::unique_ptr<Cell>(std::make_unique<models::MobileNetV2>(3, 0.25, 1)); });
}

// The zoo's MLP and LeNet-5 have no post-init: the layers' own reset is the whole of it.
TEST(NnReset, MetaThenResetEqualsDirectZooMlpAndLeNet) {
  expect_meta_reset_matches([] { return std::unique_ptr<Cell>(models::mlp({12, 8, 3})); });
  expect_meta_reset_matches([] { return std::unique_ptr<Cell>(models::lenet5(10, 1)); });
}

// Text models: the classifier's positions (an own tensor between children, the embedding with
// a padding row), the LSTM classifier, and GPT's N(0, 0.02) embeddings over their default
// draw, tied head and untied.
TEST(NnReset, MetaThenResetEqualsDirectTextModels) {
  expect_meta_reset_matches([] {
    return std::unique_ptr<Cell>(models::transformer_classifier(
        30, 4, {.d_model = 8, .nhead = 2, .num_layers = 2, .dim_feedforward = 16, .max_len = 12, .pad_id = 0}));
  });
  expect_meta_reset_matches([] { return std::unique_ptr<Cell>(models::lstm_classifier(30, 4, 8, 6, 0)); });
  for (bool tie : {true, false})
    expect_meta_reset_matches([tie] {
      return std::unique_ptr<Cell>(
          models::gpt({.vocab_size = 20, .block_size = 8, .n_layer = 2, .n_head = 2, .n_embd = 8, .tie_weights = tie}));
    });
}

// ViT: own tensors (class token, positions) between children, a zeroed head.
TEST(NnReset, MetaThenResetEqualsDirectViT) {
  expect_meta_reset_matches([] {
    return std::unique_ptr<Cell>(std::make_unique<models::VisionTransformer>(models::ViTOptions{
        .image_size = 8, .patch_size = 4, .in_channels = 1, .num_classes = 3, .dim = 8, .depth = 2, .heads = 2,
        .mlp_dim = 16}));
  });
}

TEST(NnReset, ResetRestartsATrainedModel) {
  manual_seed(5);
  auto fresh = conv_net();
  manual_seed(5);
  auto trained = conv_net();
  // Move the weights and the running statistics away from their initial values.
  trained->train();
  (*trained)(ops::normal({4, 1, 16, 16}) * 3.0 + 1.0);
  for (Tensor& p : trained->parameters()) ops::copy_(p, p + 0.5);
  auto& bn = static_cast<BatchNorm2d&>((*trained)[1]);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  EXPECT_FALSE(bitwise_equal(*trained, *fresh));
  manual_seed(5);
  trained->reset_parameters();
  EXPECT_TRUE(bitwise_equal(*trained, *fresh));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 0);
}

// Tied weights: the second slot's constructor drew before the tie was made; the reset draws
// for it too (into scratch), keeps the first slot's values and the tie.
class Tied : public UnaryCell {
 public:
  Tied() : UnaryCell("Tied"), a(4, 4, false), b(4, 4, false), c(4, 2) {
    register_cell("a", &a);
    register_cell("b", &b);
    register_cell("c", &c);
    b.weight = a.weight;
  }
  Tensor construct(const Tensor& x) override { return c(b(a(x))); }
  Dense a, b, c;
};

// One child registered under two names: built once, so reset once.
class Shared : public UnaryCell {
 public:
  Shared() : UnaryCell("Shared"), block(4, 4), last(4, 2) {
    register_cell("first", &block);
    register_cell("again", &block);
    register_cell("last", &last);
  }
  Tensor construct(const Tensor& x) override { return last(block(block(x))); }
  Dense block, last;
};

TEST(NnReset, TiedAndSharedCells) {
  expect_meta_reset_matches([] { return std::unique_ptr<Cell>(std::make_unique<Tied>()); });
  expect_meta_reset_matches([] { return std::unique_ptr<Cell>(std::make_unique<Shared>()); });
  manual_seed(1);
  Tied t;
  t.reset_parameters();
  EXPECT_TRUE(t.a.weight.is_same(t.b.weight));
}

TEST(NnReset, LossClassWeightsAreKept) {
  CrossEntropyLoss loss({.weight = ops::from_vector(std::vector<float>{1, 2, 3})});
  loss.reset_parameters();
  EXPECT_EQ(loss.weight.to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

class Custom : public UnaryCell {
 public:
  Custom() : UnaryCell("Custom") {
    w = init::normal({3});
    register_parameter("w", &w);
  }
  Tensor construct(const Tensor& x) override { return x * w; }
  Tensor w;
};

// A subclass of a layer that adds a parameter but inherits the layer's reset_own(): the new
// parameter would keep stale values; reset_parameters names it. Overriding reset_own fixes it.
class ScaledDense : public Dense {
 public:
  ScaledDense() : Dense(4, 3) {
    scale = init::ones({3});
    register_parameter("scale", &scale);
  }
  Tensor scale;
};
class ScaledDenseReset : public ScaledDense {
 public:
  void reset_own() override {
    Dense::reset_own();
    init::ones_(scale);
  }
};

TEST(NnReset, AParameterNoResetOwnKnowsIsNamed) {
  SequentialCell net;
  net.add(std::make_unique<ScaledDense>());
  EXPECT_ERROR(net.reset_parameters(),
               "[SequentialCell.reset_parameters] parameter(s) '0.scale' were not redrawn: the cell holding them "
               "inherits a reset_own() that does not know them");
  SequentialCell fixed;
  fixed.add(std::make_unique<ScaledDenseReset>());
  fixed.reset_parameters();
  EXPECT_EQ(ops::sum(fixed.parameters().back()).item<float>(), 3.0f);
}

TEST(NnReset, Errors) {
  std::unique_ptr<Cell> meta;
  {
    init::DeviceScope scope(kMeta);
    meta = mlp();
  }
  EXPECT_ERROR(meta->reset_parameters(),
               "[SequentialCell.reset_parameters] '0.weight' is on the meta device and has no memory to fill; call "
               "to_empty() first");
  SequentialCell net;
  net.add(std::make_unique<Custom>());
  EXPECT_ERROR(net.reset_parameters(),
               "[Custom.reset_parameters] Custom holds tensors of its own (w) but does not override reset_own()");
}

}  // namespace
}  // namespace spore::nn
