// SPDX-License-Identifier: Apache-2.0
// Building cells on the meta device: shapes only, no memory, no random draws; materialized later.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "spore/models/classic.h"
#include "spore/nn.h"
#include "spore/spore.h"

namespace spore::nn {
namespace {

TEST(NnMeta, BuildOnMetaThenLoadOrMaterialize) {
  manual_seed(9);
  const uint64_t offset_before = default_generator().offset();
  std::unique_ptr<SequentialCell> meta_net;
  {
    init::DeviceScope scope(kMeta);
    meta_net = models::lenet5();
  }
  EXPECT_EQ(init::current_device(), kCPU);
  EXPECT_EQ(default_generator().offset(), offset_before);  // nothing was drawn
  for (const auto& [n, t] : meta_net->named_parameters()) EXPECT_EQ(t.device(), kMeta) << n;
  // Shapes propagate through a forward on meta tensors.
  EXPECT_EQ((*meta_net)(ops::empty({5, 1, 28, 28}, {DType::Float32, kMeta})).shape(), (Shape{5, 10}));
  // load_state_dict gives the meta slots real tensors with the checkpoint's values.
  auto cpu_net = models::lenet5();
  meta_net->load_state_dict(cpu_net->state_dict());
  Tensor x = ops::normal({2, 1, 28, 28});
  EXPECT_TRUE(ops::all(ops::equal((*meta_net)(x), (*cpu_net)(x))).item<bool>());
  // to_empty: zero-filled CPU tensors in place of meta ones.
  std::unique_ptr<SequentialCell> other;
  {
    init::DeviceScope scope(kMeta);
    other = models::lenet5();
  }
  other->to_empty();
  for (const auto& [n, t] : other->named_parameters()) {
    EXPECT_EQ(t.device(), kCPU) << n;
    EXPECT_EQ(ops::sum(ops::abs(t)).item<float>(), 0.0f) << n;
  }
  EXPECT_ERROR(other->to_empty(kMeta), "must be a real device");
}

TEST(NnMeta, BatchNormBuffersFollowTheScope) {
  init::DeviceScope scope(kMeta);
  BatchNorm2d bn(4);
  for (const auto& [n, t] : bn.named_buffers()) EXPECT_EQ(t.device(), kMeta) << n;
}

}  // namespace
}  // namespace spore::nn
