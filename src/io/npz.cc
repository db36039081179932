// SPDX-License-Identifier: Apache-2.0
// .npz = a zip archive of .npy members ("<name>.npy"), stored (numpy.savez) or deflated
// (numpy.savez_compressed). libzip does the zip format; we bound what it reports before trusting it.
#include "io/npz.h"

#include <zip.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <set>

#include "io/npy_array.h"
#include "io/atomic_file.h"
#include "io/npy_header.h"
#include "spore/io/npy.h"

namespace spore::io {
namespace {

// Deflate cannot expand more than 1032:1; a member claiming more is lying about its size.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr zip_int64_t kMaxMembers = 1 << 20;

std::string zip_message(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string m = zip_error_strerror(&e);
  zip_error_fini(&e);
  return m;
}

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

/// Reads exactly n bytes of a member, or fails (short member, CRC mismatch, inflate error).
void read_member(zip_file_t* f, uint8_t* dst, uint64_t n, const std::string& what) {
  while (n > 0) {
    const zip_int64_t k = zip_fread(f, dst, n);
    SPORE_CHECK(k > 0, what, ": ", k < 0 ? std::string("cannot be read: ") + zip_file_strerror(f)
                                         : std::string("is shorter than the archive's directory says"));
    dst += k;
    n -= static_cast<uint64_t>(k);
  }
}

Tensor read_npy_member(zip_t* z, zip_uint64_t index, const zip_stat_t& st, const std::string& what) {
  SPORE_CHECK((st.valid & (ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD)) ==
                  (ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD),
              what, ": the archive's directory lacks its sizes");
  SPORE_CHECK(st.comp_method == ZIP_CM_STORE || st.comp_method == ZIP_CM_DEFLATE, what, ": compression method ",
              st.comp_method, " is not supported; numpy writes stored or deflated members");
  SPORE_CHECK(st.comp_method == ZIP_CM_DEFLATE ? st.size / kMaxDeflateRatio <= st.comp_size : st.size == st.comp_size,
              what, ": claims ", st.size, " bytes from ", st.comp_size, " compressed bytes, more than ",
              st.comp_method == ZIP_CM_DEFLATE ? "deflate can produce" : "it stores");
  std::unique_ptr<zip_file_t, ZipFileCloser> f(zip_fopen_index(z, index, 0));
  SPORE_CHECK(f != nullptr, what, ": cannot be opened: ", zip_strerror(z));
  std::vector<uint8_t> head(std::min<uint64_t>(st.size, 12 + kNpyMaxHeader));
  read_member(f.get(), head.data(), head.size(), what);
  const NpyHeader h = parse_npy_header(head, st.size, what);
  Tensor t = npy_to_tensor(
      h,
      [&](void* dst, size_t n) {
        // The header read may already hold the first bytes of the data.
        const size_t early = std::min<size_t>(n, head.size() - h.data_offset);
        std::memcpy(dst, head.data() + h.data_offset, early);
        read_member(f.get(), static_cast<uint8_t*>(dst) + early, n - early, what);
      },
      what);
  // Reading to the end makes libzip check the member's CRC.
  uint8_t extra = 0;
  const zip_int64_t k = zip_fread(f.get(), &extra, 1);
  SPORE_CHECK(k == 0, what, ": ", k < 0 ? std::string("is corrupted: ") + zip_file_strerror(f.get())
                                        : std::string("is longer than the archive's directory says"));
  return t;
}

std::vector<std::pair<std::string, Tensor>> read_archive(zip_t* z, const std::string& what) {
  const zip_int64_t n = zip_get_num_entries(z, 0);
  SPORE_CHECK(n >= 0 && n <= kMaxMembers, what, ": ", n, " members is more than the limit of ", kMaxMembers);
  std::vector<std::pair<std::string, Tensor>> out;
  std::set<std::string> seen;
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    SPORE_CHECK(zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) == 0 && (st.valid & ZIP_STAT_NAME), what,
                ": member ", i, " cannot be read: ", zip_strerror(z));
    const std::string name = st.name;
    const std::string member = what + " member '" + name + "'";
    SPORE_CHECK(name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0, member,
                " is not a .npy array; a .npz holds only '<name>.npy' members");
    std::string key = name.substr(0, name.size() - 4);
    SPORE_CHECK(seen.insert(key).second, what, ": two members are named '", name, "'");
    out.emplace_back(std::move(key), read_npy_member(z, static_cast<zip_uint64_t>(i), st, member));
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> load_npz_from_memory(std::span<const uint8_t> bytes,
                                                                 const std::string& what) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
  SPORE_CHECK(src != nullptr, what, ": ", zip_error_strerror(&err));
  ZipPtr z(zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &err));
  if (z == nullptr) {
    zip_source_free(src);
    const std::string m = zip_error_strerror(&err);
    zip_error_fini(&err);
    SPORE_CHECK(false, what, ": not a valid .npz (zip) archive: ", m);
  }
  zip_error_fini(&err);
  return read_archive(z.get(), what);
}

std::vector<std::pair<std::string, Tensor>> load_npz(const std::string& path) {
  const std::string what = "[load_npz] " + path;
  SPORE_CHECK(std::filesystem::is_regular_file(path), what, ": no such file (or not a regular file)");
  int code = 0;
  ZipPtr z(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  SPORE_CHECK(z != nullptr, what, ": not a valid .npz (zip) archive: ", zip_message(code));
  return read_archive(z.get(), what);
}

void save_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors, bool compressed) {
  const std::string what = "[save_npz] " + path;
  SPORE_CHECK(!tensors.empty(), what, ": no tensors given (an archive needs at least one)");
  // libzip reads the members' bytes at zip_close, so they live until then.
  std::vector<std::string> members;
  std::set<std::string> seen;
  for (const auto& [name, t] : tensors) {
    SPORE_CHECK(!name.empty(), what, ": a tensor has an empty name");
    SPORE_CHECK(seen.insert(name).second, what, ": two tensors are named '", name, "'");
    SPORE_CHECK(t.defined(), what, ": tensor '", name, "' is undefined");
    const Tensor c = t.contiguous();
    const std::vector<int64_t> shape(c.shape().begin(), c.shape().end());
    std::string bytes = format_npy_header(c.dtype(), shape, what + " tensor '" + name + "'");
    const auto* data = static_cast<const char*>(c.data_ptr());
    bytes.append(data, static_cast<size_t>(c.numel()) * c.itemsize());
    members.push_back(std::move(bytes));
  }
  const std::string tmp = temp_path_for(path);
  int code = 0;
  zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  SPORE_CHECK(z != nullptr, what, ": cannot create ", tmp, ": ", zip_message(code),
              "; check that the directory exists and is writable");
  auto fail = [&](const std::string& doing) {
    const std::string m = zip_strerror(z);
    zip_discard(z);
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    SPORE_CHECK(false, what, ": ", doing, " failed: ", m);
  };
  for (size_t i = 0; i < members.size(); ++i) {
    zip_source_t* src = zip_source_buffer(z, members[i].data(), members[i].size(), 0);
    if (src == nullptr) fail("adding '" + tensors[i].first + "'");
    const zip_int64_t idx = zip_file_add(z, (tensors[i].first + ".npy").c_str(), src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
      zip_source_free(src);
      fail("adding '" + tensors[i].first + "'");
    }
    if (zip_set_file_compression(z, static_cast<zip_uint64_t>(idx), compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0)
      fail("setting the compression of '" + tensors[i].first + "'");
  }
  if (zip_close(z) != 0) fail("writing the archive");
  commit_temp(tmp, path, what);
}

}  // namespace spore::io
