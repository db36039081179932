// SPDX-License-Identifier: Apache-2.0
// Untrusted MindIR files: a newer format version, truncation, flipped bytes in the header, the
// message and the tensor section, bad offsets and references all fail with a clear spore::Error
// naming the file, never a crash.
#include <gtest/gtest.h>

#include <cstring>

#include <fstream>
#include <iterator>

#include "error_matchers.h"
#include "io/mindir_file.h"
#include "io/tensor_section.h"
#include "mindir_test_util.h"
#include "spore/io/mindir.h"

namespace spore {
namespace {

using testing::read_all;
using testing::write_all;

// A small model with one weight (so the tensor section is not empty).
std::string good_file() {
  const std::string path = testing::temp_model_path("good.mindir");
  const Tensor w = ops::tensor({1.5f, -2.0f, 0.25f});
  io::export_mindir([&w](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::exp(in[0]) * w}; },
                    {ops::zeros({3})}, path);
  return read_all(path);
}

// Re-encodes a file with an edited message (text format), fixing every checksum, so the
// reader's semantic checks (not the crc) are what fail. `from` must occur after `anchor`.
std::string edited(const std::string& file, const std::string& anchor, const std::string& from, const std::string& to) {
  std::string text = io::mindir_message_text(file);
  const size_t a = text.find(anchor);
  EXPECT_NE(a, std::string::npos) << anchor << "\n" << text;
  const size_t at = text.find(from, a);
  EXPECT_NE(at, std::string::npos) << from << "\n" << text;
  if (a == std::string::npos || at == std::string::npos) return file;
  text.replace(at, from.size(), to);
  return io::replace_mindir_message(file, text);
}

void expect_load_error(const std::string& bytes, const std::string& text) {
  const std::string path = testing::temp_model_path("bad.mindir");
  write_all(path, bytes);
  EXPECT_ERROR(io::load_mindir(path), text);
  EXPECT_ERROR(io::load_mindir(path), path);  // names the file
}

TEST(MindirErrors, NewerFormatVersionIsRefused) {
  std::string f = good_file();
  const uint32_t v = io::kMindirFormatVersion + 1;
  std::memcpy(f.data() + 8, &v, 4);
  expect_load_error(f, "has MindIR format version 2, newer than version 1 that this build reads");
}

TEST(MindirErrors, NewerOpSchemaVersionIsRefused) {
  expect_load_error(edited(good_file(), "nodes {", "op_version: 1", "op_version: 7"),
                    "has schema version 7 but this build reads versions 1 to 1");
}

TEST(MindirErrors, TruncatedFiles) {
  const std::string f = good_file();
  expect_load_error("", "the file is truncated: 0 bytes");
  expect_load_error(f.substr(0, 40), "the file is truncated: 40 bytes");
  expect_load_error(f.substr(0, 100), "the file is truncated or has trailing bytes");
  expect_load_error(f.substr(0, f.size() - 1), "the file is truncated or has trailing bytes");
  expect_load_error(f + "x", "the file is truncated or has trailing bytes");
  EXPECT_ERROR(io::load_mindir("/nonexistent/model.mindir"), "cannot open /nonexistent/model.mindir");
}

TEST(MindirErrors, FlippedBytes) {
  const std::string f = good_file();
  std::string magic = f;
  magic[0] = 'X';
  expect_load_error(magic, "not a MindIR file");
  std::string header = f;
  header[30] ^= 0x10;
  expect_load_error(header, "the header is corrupted");
  std::string msg = f;
  msg[70] ^= 0x01;
  expect_load_error(msg, "the graph message is corrupted");
  std::string data = f;
  data[data.size() - 64] ^= 0x01;  // inside the (only) tensor: 3 floats at the section's start
  expect_load_error(data, "tensor 0 ('const_0') is corrupted");
  // Every single flipped byte fails cleanly (spore::Error, never a crash), except the alignment
  // padding, which no checksum covers: after the message up to the tensor section, and after
  // the one tensor (3 float32, 12 bytes, at the section's start).
  uint64_t msg_size = 0, section = 0;
  std::memcpy(&msg_size, f.data() + 24, 8);
  std::memcpy(&section, f.data() + 32, 8);
  auto is_padding = [&](size_t i) {
    return (i >= 64 + msg_size && i < section) || i >= section + 12;
  };
  for (size_t i = 0; i < f.size(); ++i) {
    std::string g = f;
    g[i] = static_cast<char>(g[i] ^ 0x5a);
    const std::string path = testing::temp_model_path("flip.mindir");
    write_all(path, g);
    const std::string err = error_of([&] { (void)io::load_mindir(path); });
    if (is_padding(i)) {
      EXPECT_TRUE(err == "(no error)" || err.find("[load_mindir]") != std::string::npos) << "byte " << i << ": " << err;
      continue;
    }
    EXPECT_NE(err.find("[load_mindir]"), std::string::npos) << "byte " << i << " (covered by a checksum): " << err;
  }
}

TEST(MindirErrors, BadOffsetsAndReferences) {
  const std::string f = good_file();
  // The unedited re-encoding loads: the edits below are what fail.
  {
    const std::string path = testing::temp_model_path("reencoded.mindir");
    write_all(path, io::replace_mindir_message(f, io::mindir_message_text(f)));
    EXPECT_EQ(io::load_mindir(path).named_buffers().size(), 1u);
  }
  expect_load_error(edited(f, "tensors {", "tensors {", "tensors {\n  offset: 1024"), "outside the 64-byte tensor section");
  expect_load_error(edited(f, "tensors {", "tensors {", "tensors {\n  offset: 8"), "not 64-byte aligned");
  expect_load_error(edited(f, "tensors {", "nbytes: 12", "nbytes: 16"), "records 16 bytes but its shape (3,) of float32 needs 12");
  expect_load_error(edited(f, "tensors {", "shape: 3", "shape: 4611686018427387904"), "records 12 bytes");
  expect_load_error(edited(f, "tensors {", "shape: 3", "shape: -3"), "negative or overflowing dimension -3");
  expect_load_error(edited(f, "tensors {", "\"float32\"", "\"float128\""), "unknown dtype 'float128'");
  expect_load_error(edited(f, "nodes {", "node: -1", "node: -1\n index: 99"), "refers to value (node -1, output 99)");
  expect_load_error(edited(f, "nodes {", "op: \"", "op: \"no_such_op_"), "unknown op 'no_such_op_");
  expect_load_error(edited(f, "graph {", "role: \"data\"", "role: \"weights\""), "unknown input role 'weights'");
  expect_load_error(edited(f, "num_data", "num_data: 1", "num_data: 9"), "num_data 9 is more than");
  expect_load_error(edited(f, "outputs {\n    value {", "node: ", "node: 5"), "refers to value (node 5");
  expect_load_error(edited(f, "nodes {", "attrs: \"", "attrs: \"garbage="), "graph @main, node ");
}

}  // namespace
}  // namespace spore
