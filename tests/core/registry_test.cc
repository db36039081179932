// SPDX-License-Identifier: Apache-2.0
// The registry report: which rules each primitive has. Prints the table (kept in the test log)
// and checks the contract every primitive must meet today.
#include <gtest/gtest.h>

#include <cstdio>

#include "autodiff/frames.h"
#include "core/primitive.h"
#include "transforms/vmap_rules/vmap_rules.h"
#include "spore/spore.h"

namespace spore {
namespace {

TEST(Registry, EveryPrimitiveMeetsTheContract) {
  autodiff::install();  // jvp/vjp rules are filled when the first transform runs; fill them now
  transforms::vmap_rules::install_vmap_rules();
  auto prims = all_primitives();
  ASSERT_GT(prims.size(), 20u);
  int with_jvp = 0, with_vjp = 0, with_vmap = 0, with_sharding = 0;
  std::printf("%-24s %-10s %-6s %-6s %-4s %-4s %-4s %-4s\n", "primitive", "effect", "cpu", "cost", "jvp", "vjp", "vmap", "shard");
  for (const Primitive* p : prims) {
    SCOPED_TRACE(p->name);
    EXPECT_FALSE(p->name.empty());
    EXPECT_TRUE(static_cast<bool>(p->infer)) << "no type inference";
    EXPECT_TRUE(p->attrs.hash && p->attrs.equal && p->attrs.str && p->attrs.clone);
    const bool has_cpu = !p->kernels[static_cast<int>(DeviceType::CPU)].empty() || p->view != nullptr || p->eager != nullptr;
    EXPECT_TRUE(has_cpu) << "no CPU kernel";
    EXPECT_TRUE(static_cast<bool>(p->cost)) << "no cost (flops and bytes) for the cost model";
    with_jvp += p->jvp != nullptr;
    with_vjp += p->vjp != nullptr;
    with_vmap += p->vmap != nullptr;
    with_sharding += p->sharding != nullptr;
    std::printf("%-24s %-10s %-6s %-6s %-4s %-4s %-4s %-4s\n", p->name.c_str(),
                p->effect == Effect::Pure ? "pure" : p->effect == Effect::Random ? "random" : "other",
                has_cpu ? "yes" : "NO", p->cost ? "yes" : "-", p->jvp ? "yes" : "-", p->vjp ? "yes" : "-",
                p->vmap ? "yes" : "-", p->sharding ? "yes" : "-");
  }
  std::printf("registry: %zu primitives; rules: jvp %d, vjp %d, vmap %d, sharding %d \n",
              prims.size(), with_jvp, with_vjp, with_vmap, with_sharding);
}

TEST(Registry, NamesAreUniqueAndFindable) {
  for (const Primitive* p : all_primitives()) EXPECT_EQ(find_primitive(p->name), p);
  EXPECT_EQ(find_primitive("no_such_primitive"), nullptr);
}

}  // namespace
}  // namespace spore
