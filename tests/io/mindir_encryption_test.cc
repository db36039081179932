// SPDX-License-Identifier: Apache-2.0
// Encrypted MindIR files (AES-GCM through OpenSSL): a round trip gives bitwise the same outputs
// and weights; the file holds no plaintext weights; a missing, wrong or wrong-sized key, a key
// for a plain file, and any flipped or missing byte fail with a clear error naming the file.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "error_matchers.h"
#include "io/mindir_file.h"
#include "mindir_test_util.h"
#include "spore/io/mindir.h"
#include "spore/io/model_file.h"
#include "spore/io/model_key.h"

namespace spore {
namespace {

using testing::read_all;
using testing::write_all;

const io::ModelKey& key256() {
  static const io::ModelKey k = io::ModelKey::from_hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  return k;
}

// A weight with a byte pattern that is easy to find in a file.
Tensor marker_weight() {
  std::vector<float> v(256);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1234.5f + static_cast<float>(i);
  return ops::from_vector(v, {256});
}

std::string export_encrypted(const std::string& name, const io::ModelKey& key) {
  const std::string path = testing::temp_model_path(name);
  const Tensor w = marker_weight();
  io::ExportOptions o;
  o.key = key;
  io::export_mindir([&w](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::tanh(in[0]) * w + 1.0f}; },
                    {ops::zeros({256})}, path, o);
  return path;
}

TEST(MindirEncryption, RoundTripIsBitwiseAndHidesTheWeights) {
  for (const char* hex : {"00112233445566778899aabbccddeeff", "00112233445566778899aabbccddeeff0011223344556677",
                          "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"}) {
    SCOPED_TRACE(hex);
    const io::ModelKey key = io::ModelKey::from_hex(hex);
    const std::string path = export_encrypted("enc.mindir", key);
    const std::string bytes = read_all(path);
    EXPECT_EQ(bytes.substr(0, 8), "SPOREENC");
    EXPECT_TRUE(io::file_is_encrypted_model(path));
    // Neither the plain file's magic nor the weights' bytes appear anywhere in the file.
    const Tensor w = marker_weight();
    const std::string wbytes(static_cast<const char*>(w.data_ptr()), 64);
    EXPECT_EQ(bytes.find(wbytes), std::string::npos);
    EXPECT_EQ(bytes.find("SPOREMIR"), std::string::npos);
    manual_seed(3);
    const Tensor x = ops::normal({256});
    io::GraphCell cell = io::load_mindir(path, key);
    const Tensor want = ops::tanh(x) * w + 1.0f;
    testing::expect_bitwise_equal(cell({x})[0], want, "output");
    const io::LoadedModel m = io::read_mindir(path, key);
    ASSERT_EQ(m.state.size(), 1u);
    testing::expect_bitwise_equal(m.state[0], w, "weight");
    // Saved again (encrypted) and through ModelFile, plain and encrypted.
    const std::string again = testing::temp_model_path("again.mindir");
    io::save_mindir(cell, again, key);
    testing::expect_bitwise_equal(io::load_mindir(again, key)({x})[0], want, "re-saved");
    const io::ModelFile mf = io::ModelFile::open(path, key);
    EXPECT_EQ(mf.format(), "mindir");
    const std::string plain = testing::temp_model_path("plain.mindir");
    mf.save(plain);
    EXPECT_FALSE(io::file_is_encrypted_model(plain));
    testing::expect_bitwise_equal(io::load_mindir(plain)({x})[0], want, "decrypted copy");
  }
  // Two files written with one key differ everywhere after the header's magic: a fresh nonce each.
  const std::string a = read_all(export_encrypted("a.mindir", key256())), b = read_all(export_encrypted("b.mindir", key256()));
  ASSERT_EQ(a.size(), b.size());
  EXPECT_NE(a.substr(24, 12), b.substr(24, 12));
  EXPECT_NE(a.substr(64), b.substr(64));
}

TEST(MindirEncryption, KeysAndTamperingFailClearly) {
  const std::string path = export_encrypted("k.mindir", key256());
  EXPECT_ERROR(io::load_mindir(path), "the file is encrypted (AES-GCM); give its key");
  EXPECT_ERROR(io::ModelFile::open(path), "the file is encrypted");
  const io::ModelKey wrong = io::ModelKey::from_hex("ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  EXPECT_ERROR(io::load_mindir(path, wrong), "the key is wrong or the file was modified");
  EXPECT_ERROR(io::load_mindir(path, io::ModelKey::from_hex("00112233445566778899aabbccddeeff")),
               "encrypted with a 256-bit key, but the key given has 128 bits");
  // A key for a plain file, and for an ONNX file.
  const std::string plain = testing::temp_model_path("p.mindir");
  io::export_mindir([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1.0f}; }, {ops::zeros({2})},
                    plain);
  EXPECT_ERROR(io::load_mindir(plain, key256()), "a key was given but the file is not encrypted");
  EXPECT_ERROR(io::ModelFile::open(plain).save(testing::temp_model_path("x.onnx"), key256()),
               "ONNX files have no encrypted form");
  // Bad keys.
  EXPECT_ERROR(io::ModelKey::from_hex("0011"), "give 32, 48 or 64 hex digits");
  EXPECT_ERROR(io::ModelKey::from_hex("zz112233445566778899aabbccddeeff"), "character 1 of the key is not a hex digit");
  EXPECT_ERROR(io::ModelKey::from_bytes(std::vector<uint8_t>(20, 1)), "the key has 20 bytes");
  EXPECT_ERROR(io::ModelKey::from_flag("@/nonexistent/key"), "cannot read the key file '/nonexistent/key'");
  const std::string keyfile = testing::temp_model_path("key.hex");
  write_all(keyfile, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n");
  EXPECT_EQ(io::ModelKey::from_flag("@" + keyfile).bytes, key256().bytes);
  // Every flipped byte (header, ciphertext, tag) and every truncation fails, naming the file.
  const std::string good = read_all(path);
  const std::string bad = testing::temp_model_path("bad.mindir");
  for (size_t i = 0; i < good.size(); i += std::max<size_t>(1, good.size() / 97)) {
    std::string b = good;
    b[i] = static_cast<char>(b[i] ^ 0x20);
    write_all(bad, b);
    try {
      (void)io::load_mindir(bad, key256());
      ADD_FAILURE() << "loaded with byte " << i << " flipped";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  for (size_t n : {size_t{0}, size_t{7}, size_t{63}, size_t{80}, good.size() - 1}) {
    write_all(bad, good.substr(0, n));
    SCOPED_TRACE(n);
    EXPECT_ERROR(io::load_mindir(bad, key256()), bad);
  }
  std::string newer = good;
  newer[8] = 9;
  write_all(bad, newer);
  EXPECT_ERROR(io::load_mindir(bad, key256()), "the encrypted container has version 9");
}

}  // namespace
}  // namespace spore
