// SPDX-License-Identifier: Apache-2.0
// Golden IR (issue 4): three small models are traced and run through the whole pipeline (O2),
// and the printed result is compared with the committed file in tests/passes/golden/. A change
// in the passes that changes the IR fails here unless the golden file is updated on purpose:
// run with SPORE_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include "codegen/fused.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "spore/spore.h"
#include "transforms/interpreter.h"
#include "trace_program.h"

namespace spore::passes {
namespace {

using namespace ops;
using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct Model {
  const char* name;
  Fn fn;
  std::vector<Tensor> inputs;
};


Tensor r(const Shape& s, uint64_t seed) {
  manual_seed(seed);
  return normal(s, 0, 0.5);
}

std::vector<Model> models() {
  std::vector<Model> m;
  // An MLP's gradient step: value and gradients of cross-entropy with respect to the weights.
  m.push_back({"mlp_grad", [](const std::vector<Tensor>& x) {
                 auto loss = [&](const Tensor& w1, const Tensor& b1, const Tensor& w2) {
                   return cross_entropy(matmul(relu(addmm(b1, x[0], w1)), w2), x[1]);
                 };
                 auto [v, g] = value_and_grad(loss, {0, 1, 2})(x[2], x[3], x[4]);
                 return std::vector<Tensor>{v, g[0], g[1], g[2]};
               },
               {r({4, 8}, 1), tensor({int64_t{0}, int64_t{2}, int64_t{1}, int64_t{2}}), r({8, 16}, 2), r({16}, 3), r({16, 3}, 4)}});
  // A conv block in training: conv, BatchNorm (its running statistics become state), relu, pool.
  m.push_back({"conv_block", [](const std::vector<Tensor>& x) {
                 Tensor rm = x[3], rv = x[4];
                 Tensor y = batch_norm(conv2d(x[0], x[1], x[2]), {}, {}, rm, rv, true, 0.1);
                 return std::vector<Tensor>{max_pool2d(relu(y), PoolOptions{.kernel = {2, 2}, .stride = {}})};
               },
               {r({2, 3, 8, 8}, 5), r({4, 3, 3, 3}, 6), r({4}, 7), zeros({4}), ones({4})}});
  // A pre-norm attention block: layer norm, single-head attention, residual, gelu MLP.
  m.push_back({"attention_block", [](const std::vector<Tensor>& x) {
                 const Tensor h = layer_norm(x[0], {8});
                 const Tensor q = matmul(h, x[1]), k = matmul(h, x[2]), v = matmul(h, x[3]);
                 const Tensor a = matmul(softmax(matmul(q, transpose(k, 0, 1)) * 0.35355339059327373, -1), v);
                 const Tensor y = x[0] + a;
                 return std::vector<Tensor>{y + matmul(gelu(matmul(layer_norm(y, {8}), x[4])), x[5])};
               },
               {r({5, 8}, 8), r({8, 8}, 9), r({8, 8}, 10), r({8, 8}, 11), r({8, 16}, 12), r({16, 8}, 13)}});
  return m;
}

std::string golden_path(const std::string& name) { return std::string(SPORE_TESTS_DIR) + "/passes/golden/" + name + ".mir"; }

TEST(GoldenIr, ThreeModelsAfterThePipeline) {
  const bool update = getenv("SPORE_UPDATE_GOLDEN") != nullptr;
  // The matmul epilogues a CPU with brgemm kernels (AVX-512) takes, on every CPU: without it
  // the pass forms none (passes/matmul_epilogue.h), and the IR would depend on the machine.
  struct Env {
    Env() { ::setenv("SPORE_MATMUL_POST_OPS", "always", 1); }
    ~Env() { ::unsetenv("SPORE_MATMUL_POST_OPS"); }
  } env;
  for (const Model& m : models()) {
    SCOPED_TRACE(m.name);
    const ir::GraphPtr raw = spore::testing::trace_program(m.fn, m.inputs).graph;
    const ir::GraphPtr opt = optimize(raw, 2);
    const std::string text = ir::print_graph(*opt);
    const std::string path = golden_path(m.name);
    if (update) {
      std::ofstream(path) << text;
      continue;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << "no golden file " << path << "; create it with SPORE_UPDATE_GOLDEN=1";
    std::stringstream want;
    want << in.rdbuf();
    EXPECT_EQ(text, want.str()) << "the pipeline's IR for " << m.name << " changed; if that is intended, rerun with "
                                << "SPORE_UPDATE_GOLDEN=1 and review the diff of " << path;
    // The golden text parses back to the same graph.
    codegen::register_fused_ir_op();
    EXPECT_EQ(ir::print_graph(*ir::parse_graph(want.str())), want.str());
  }
}

}  // namespace
}  // namespace spore::passes
