// SPDX-License-Identifier: Apache-2.0
#include "io/model_cipher.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "io/atomic_file.h"
#include "spore/error.h"

namespace spore::io {
namespace {

// Header layout (little-endian): magic[8], container version u32, cipher u32 (1 = AES-GCM),
// key bits u32, reserved u32, nonce[12], reserved[4], plaintext size u64, reserved[16].
constexpr uint32_t kContainerVersion = 1;
constexpr uint32_t kCipherAesGcm = 1;
constexpr size_t kNonceSize = 12;
constexpr size_t kNonceAt = 24, kSizeAt = 40;
// GCM's limit per (key, nonce): 2^39 - 256 bits of plaintext.
constexpr uint64_t kMaxPlaintext = (uint64_t{1} << 36) - 32;
constexpr size_t kChunk = size_t{1} << 20;

const EVP_CIPHER* cipher_for(const ModelKey& key, const char* what) {
  switch (key.bytes.size()) {
    case 16: return EVP_aes_128_gcm();
    case 24: return EVP_aes_192_gcm();
    case 32: return EVP_aes_256_gcm();
    default:
      throw Error(detail::cat(what, " the key has ", key.bytes.size(),
                              " bytes; AES-GCM takes 16, 24 or 32 (32, 48 or 64 hex digits)"));
  }
}

struct CtxDeleter {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using Ctx = std::unique_ptr<EVP_CIPHER_CTX, CtxDeleter>;

// The OpenSSL calls' failures (not the tag check) are our bug or an out-of-memory.
void ok(int r, const char* what, const char* call) { SPORE_CHECK(r == 1, what, " OpenSSL ", call, " failed"); }

template <class T>
void put(std::byte* b, size_t at, T v) {
  std::memcpy(b + at, &v, sizeof(T));
}
template <class T>
T get(const std::byte* b, size_t at) {
  T v;
  std::memcpy(&v, b + at, sizeof(T));
  return v;
}

// A 64-byte-aligned heap buffer holding a decrypted file; the loaded weights view it.
class DecryptedBytes final : public ModelBytes {
 public:
  DecryptedBytes(std::string path, size_t size) : path_(std::move(path)), size_(size) {
    data_ = static_cast<std::byte*>(std::aligned_alloc(kTensorAlignment, align_up(std::max<size_t>(size, 1))));
    SPORE_CHECK(data_ != nullptr, "[load_mindir] ", path_, ": out of memory for the ", size, "-byte decrypted model");
  }
  ~DecryptedBytes() override {
    // The plaintext does not outlive the model.
    if (data_ != nullptr) OPENSSL_cleanse(data_, size_);
    std::free(data_);
  }
  std::span<const std::byte> bytes() const override { return {data_, size_}; }
  std::byte* mutable_data() const override { return data_; }
  const std::string& path() const override { return path_; }

 private:
  std::string path_;
  std::byte* data_ = nullptr;
  size_t size_;
};

}  // namespace

ModelKey::~ModelKey() {
  if (!bytes.empty()) OPENSSL_cleanse(bytes.data(), bytes.size());
}

ModelKey ModelKey::from_bytes(std::vector<uint8_t> bytes) {
  SPORE_CHECK(bytes.size() == 16 || bytes.size() == 24 || bytes.size() == 32, "[model key] the key has ", bytes.size(),
              " bytes; AES-GCM takes 16, 24 or 32 (AES-128, -192, -256)");
  ModelKey k;
  k.bytes = std::move(bytes);
  return k;
}

ModelKey ModelKey::from_hex(std::string_view hex) {
  while (!hex.empty() && std::isspace(static_cast<unsigned char>(hex.front()))) hex.remove_prefix(1);
  while (!hex.empty() && std::isspace(static_cast<unsigned char>(hex.back()))) hex.remove_suffix(1);
  SPORE_CHECK(hex.size() == 32 || hex.size() == 48 || hex.size() == 64, "[model key] the key has ", hex.size(),
              " characters; give 32, 48 or 64 hex digits (a 16-, 24- or 32-byte AES key)");
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<uint8_t> b;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    SPORE_CHECK(hi >= 0 && lo >= 0, "[model key] character ", (hi < 0 ? i : i + 1) + 1,
                " of the key is not a hex digit (0-9, a-f)");
    b.push_back(static_cast<uint8_t>(hi * 16 + lo));
  }
  return from_bytes(std::move(b));  // moved: no copy of the key is left behind
}

ModelKey ModelKey::from_flag(const std::string& value) {
  if (value.empty() || value[0] != '@') return from_hex(value);
  const std::string path = value.substr(1);
  std::ifstream in(path, std::ios::binary);
  SPORE_CHECK(in.good(), "[model key] cannot read the key file '", path, "'");
  // At most 257 bytes: a device or a huge file is refused, not read to its end.
  std::string text(257, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  struct Wipe {
    std::string& s;
    ~Wipe() { OPENSSL_cleanse(s.data(), s.size()); }
  } wipe{text};
  SPORE_CHECK(text.size() <= 256, "[model key] the key file '", path, "' has ", text.size(),
              " bytes; it holds one key as 32, 48 or 64 hex digits");
  try {
    return from_hex(text);
  } catch (const Error& e) {
    throw Error(detail::cat(e.what(), " (in the key file '", path, "')"));
  }
}

bool is_encrypted_model(std::span<const std::byte> head) {
  return head.size() >= sizeof kEncryptedMagic && std::memcmp(head.data(), kEncryptedMagic, sizeof kEncryptedMagic) == 0;
}

bool file_is_encrypted_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<std::byte, sizeof kEncryptedMagic> head{};
  in.read(reinterpret_cast<char*>(head.data()), head.size());
  return in.gcount() == static_cast<std::streamsize>(head.size()) && is_encrypted_model(head);
}

struct ModelEncryptor::Impl {
  Ctx ctx;
  uint64_t expected = 0, seen = 0;
  std::vector<unsigned char> out;
};

ModelEncryptor::ModelEncryptor(const ModelKey& key, uint64_t plaintext_size, const char* what)
    : impl_(std::make_unique<Impl>()), what_(what) {
  const EVP_CIPHER* cipher = cipher_for(key, what);
  SPORE_CHECK(plaintext_size <= kMaxPlaintext, what, " the model has ", plaintext_size,
              " bytes, over AES-GCM's limit of ", kMaxPlaintext, " for one key and nonce");
  std::byte* h = header_.data();
  std::memcpy(h, kEncryptedMagic, sizeof kEncryptedMagic);
  put<uint32_t>(h, 8, kContainerVersion);
  put<uint32_t>(h, 12, kCipherAesGcm);
  put<uint32_t>(h, 16, static_cast<uint32_t>(key.bytes.size() * 8));
  // A fresh random nonce per file: a nonce used twice under one key breaks GCM.
  ok(RAND_bytes(reinterpret_cast<unsigned char*>(h + kNonceAt), kNonceSize), what, "RAND_bytes");
  put<uint64_t>(h, kSizeAt, plaintext_size);
  impl_->expected = plaintext_size;
  impl_->ctx.reset(EVP_CIPHER_CTX_new());
  SPORE_CHECK(impl_->ctx != nullptr, what, " out of memory (EVP_CIPHER_CTX_new)");
  EVP_CIPHER_CTX* c = impl_->ctx.get();
  ok(EVP_EncryptInit_ex(c, cipher, nullptr, nullptr, nullptr), what, "EVP_EncryptInit_ex");
  ok(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, kNonceSize, nullptr), what, "EVP_CTRL_GCM_SET_IVLEN");
  ok(EVP_EncryptInit_ex(c, nullptr, nullptr, key.bytes.data(), reinterpret_cast<const unsigned char*>(h + kNonceAt)),
     what, "EVP_EncryptInit_ex");
  int n = 0;
  ok(EVP_EncryptUpdate(c, nullptr, &n, reinterpret_cast<const unsigned char*>(h), kCipherHeaderSize), what,
     "EVP_EncryptUpdate (header)");
}

ModelEncryptor::~ModelEncryptor() = default;

void ModelEncryptor::update(std::span<const std::byte> in, const std::function<void(std::span<const std::byte>)>& out) {
  impl_->seen += in.size();
  SPORE_CHECK(impl_->seen <= impl_->expected, what_, " internal: more plaintext than the header's ", impl_->expected);
  while (!in.empty()) {
    const size_t k = std::min(in.size(), kChunk);
    impl_->out.resize(k + 32);
    int n = 0;
    ok(EVP_EncryptUpdate(impl_->ctx.get(), impl_->out.data(), &n, reinterpret_cast<const unsigned char*>(in.data()),
                         static_cast<int>(k)),
       what_, "EVP_EncryptUpdate");
    out({reinterpret_cast<const std::byte*>(impl_->out.data()), static_cast<size_t>(n)});
    in = in.subspan(k);
  }
}

std::array<std::byte, kGcmTagSize> ModelEncryptor::finish() {
  SPORE_CHECK(impl_->seen == impl_->expected, what_, " internal: ", impl_->seen, " bytes of plaintext, the header says ",
              impl_->expected);
  unsigned char rest[32];
  int n = 0;
  ok(EVP_EncryptFinal_ex(impl_->ctx.get(), rest, &n), what_, "EVP_EncryptFinal_ex");
  SPORE_CHECK(n == 0, what_, " internal: GCM returned bytes at the end");
  std::array<std::byte, kGcmTagSize> tag{};
  ok(EVP_CIPHER_CTX_ctrl(impl_->ctx.get(), EVP_CTRL_GCM_GET_TAG, kGcmTagSize, tag.data()), what_,
     "EVP_CTRL_GCM_GET_TAG");
  return tag;
}

std::shared_ptr<ModelBytes> decrypt_model_file(const std::string& path, const ModelKey& key) {
  const std::string where = detail::cat("[load_mindir] ", path, ":");
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  SPORE_CHECK(f.fd >= 0, "[load_mindir] cannot open ", path, ": ", std::strerror(errno));
  struct stat st {};
  SPORE_CHECK(::fstat(f.fd, &st) == 0 && S_ISREG(st.st_mode), "[load_mindir] ", path, " is not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  auto read_exact = [&](void* dst, size_t n) {
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
      const ssize_t k = ::read(f.fd, p, n);
      if (k < 0 && errno == EINTR) continue;
      SPORE_CHECK(k > 0, where, " cannot read: ", k < 0 ? std::strerror(errno) : "the file ended early");
      p += k;
      n -= static_cast<size_t>(k);
    }
  };
  SPORE_CHECK(size >= kCipherHeaderSize + kGcmTagSize, where, " the encrypted file is truncated: ", size,
              " bytes, less than its ", kCipherHeaderSize, "-byte header and ", kGcmTagSize, "-byte tag");
  std::array<std::byte, kCipherHeaderSize> h{};
  read_exact(h.data(), h.size());
  SPORE_CHECK(is_encrypted_model(h), where, " not an encrypted MindIR file (no SPOREENC magic)");
  const uint32_t version = get<uint32_t>(h.data(), 8), cipher = get<uint32_t>(h.data(), 12),
                 bits = get<uint32_t>(h.data(), 16);
  SPORE_CHECK(version >= 1 && version <= kContainerVersion, where, " the encrypted container has version ", version,
              "; this build reads version ", kContainerVersion, version > kContainerVersion ? " (load it with a newer Spore)" : "");
  SPORE_CHECK(cipher == kCipherAesGcm, where, " the file names cipher ", cipher, "; this build decrypts AES-GCM (1) only");
  const EVP_CIPHER* evp = cipher_for(key, where.c_str());
  SPORE_CHECK(bits == key.bytes.size() * 8, where, " the file was encrypted with a ", bits, "-bit key, but the key given has ",
              key.bytes.size() * 8, " bits");
  const uint64_t plain = get<uint64_t>(h.data(), kSizeAt);
  SPORE_CHECK(plain <= kMaxPlaintext && plain == size - kCipherHeaderSize - kGcmTagSize, where,
              " the header records ", plain, " bytes of model, but the file holds ", size - kCipherHeaderSize - kGcmTagSize,
              "; the file is truncated or corrupted");
  auto out = std::make_shared<DecryptedBytes>(path, static_cast<size_t>(plain));
  Ctx ctx(EVP_CIPHER_CTX_new());
  SPORE_CHECK(ctx != nullptr, where, " out of memory (EVP_CIPHER_CTX_new)");
  EVP_CIPHER_CTX* c = ctx.get();
  const char* what = where.c_str();
  ok(EVP_DecryptInit_ex(c, evp, nullptr, nullptr, nullptr), what, "EVP_DecryptInit_ex");
  ok(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, kNonceSize, nullptr), what, "EVP_CTRL_GCM_SET_IVLEN");
  ok(EVP_DecryptInit_ex(c, nullptr, nullptr, key.bytes.data(), reinterpret_cast<const unsigned char*>(h.data() + kNonceAt)),
     what, "EVP_DecryptInit_ex");
  int n = 0;
  ok(EVP_DecryptUpdate(c, nullptr, &n, reinterpret_cast<const unsigned char*>(h.data()), kCipherHeaderSize), what,
     "EVP_DecryptUpdate (header)");
  // Streamed: one chunk of ciphertext at a time, decrypted into the buffer in place.
  std::vector<unsigned char> chunk(kChunk);
  auto* dst = reinterpret_cast<unsigned char*>(out->mutable_data());
  for (uint64_t done = 0; done < plain;) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(kChunk, plain - done));
    read_exact(chunk.data(), k);
    ok(EVP_DecryptUpdate(c, dst + done, &n, chunk.data(), static_cast<int>(k)), what, "EVP_DecryptUpdate");
    SPORE_CHECK(static_cast<size_t>(n) == k, where, " internal: GCM returned ", n, " of ", k, " bytes");
    done += k;
  }
  std::array<unsigned char, kGcmTagSize> tag{};
  read_exact(tag.data(), tag.size());
  ok(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, kGcmTagSize, tag.data()), what, "EVP_CTRL_GCM_SET_TAG");
  unsigned char rest[32];
  // Nothing decrypted is used unless the tag matches.
  SPORE_CHECK(EVP_DecryptFinal_ex(c, rest, &n) == 1, where,
              " cannot decrypt: the key is wrong or the file was modified (its AES-GCM tag does not match)");
  return out;
}

}  // namespace spore::io
