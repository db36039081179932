// SPDX-License-Identifier: Apache-2.0
#include "io/mindir_file.h"

#include <climits>
#include <cstring>

#include <google/protobuf/text_format.h>

#include "io/mindir.pb.h"
#include "io/mindir_graph.h"
#include "io/model_cipher.h"
#include "io/tensor_section.h"
#include "ir/error.h"
#include "spore/error.h"
#include "transforms/ir_bridge.h"

namespace spore::io {
namespace {

// Header: magic, format version, header checksum, then the message and section placement.
constexpr char kMagic[8] = {'S', 'P', 'O', 'R', 'E', 'M', 'I', 'R'};
constexpr uint64_t kHeaderSize = 64;
// protobuf parses at most 2 GB; tensors are outside the message, so a graph this large is hostile.
constexpr uint64_t kMaxMessageBytes = uint64_t{1} << 30;

struct Header {
  uint32_t version = 0;
  uint32_t header_crc = 0;  // crc32 of bytes [16, 64)
  uint64_t message_offset = 0;
  uint64_t message_size = 0;
  uint64_t section_offset = 0;
  uint64_t section_size = 0;
  uint32_t message_crc = 0;
};

template <class T>
T get(std::span<const std::byte> b, size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof(T));
  return v;
}
template <class T>
void put(std::byte* b, size_t at, T v) {
  std::memcpy(b + at, &v, sizeof(T));
}

std::array<std::byte, kHeaderSize> encode(const Header& h) {
  std::array<std::byte, kHeaderSize> b{};
  std::memcpy(b.data(), kMagic, 8);
  put(b.data(), 8, h.version);
  put(b.data(), 16, h.message_offset);
  put(b.data(), 24, h.message_size);
  put(b.data(), 32, h.section_offset);
  put(b.data(), 40, h.section_size);
  put(b.data(), 48, h.message_crc);
  put(b.data(), 12, crc32_of(std::span<const std::byte>(b).subspan(16)));
  return b;
}

std::string state_role_name(ir::Role r) { return ir::role_name(r); }

// True when a concrete shape fits an IR tensor type (symbols take any size).
bool fits(const ir::TensorType& want, DType dtype, const Shape& shape) {
  if (transforms::to_ir(dtype) != want.dtype || want.shape.size() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (want.shape[d].is_const() && want.shape[d].value() != shape[d]) return false;
  return true;
}

// The checks a LoadedModel must pass to be written (and that a read one passes).
void check_model(const LoadedModel& m, const std::string& where) {
  SPORE_CHECK(m.graph != nullptr, where, " the model has no graph");
  const auto& params = m.graph->params();
  SPORE_CHECK(m.num_data <= params.size(), where, " num_data ", m.num_data, " is more than the graph's ", params.size(),
              " inputs");
  const size_t n_state = params.size() - m.num_data;
  SPORE_CHECK(m.state.size() == n_state && m.state_names.size() == n_state, where, " the graph has ", n_state,
              " state inputs but the model gives ", m.state.size(), " state tensors and ", m.state_names.size(), " names");
  for (size_t i = 0; i < n_state; ++i) {
    const ir::Param& p = params[m.num_data + i];
    SPORE_CHECK(p.role != ir::Role::Data && !ir::is_token(p.type), where, " graph input ", m.num_data + i,
                " is a state input ('", m.state_names[i], "') but has role data or is a token");
    const Tensor& t = m.state[i];
    SPORE_CHECK(t.defined() && fits(std::get<ir::TensorType>(p.type), t.dtype(), t.shape()), where, " state tensor '",
                m.state_names[i], "' is ", t.defined() ? dtype_name(t.dtype()) : "undefined",
                t.defined() ? shape_str(t.shape()) : "", " but the graph expects ", ir::type_str(p.type));
  }
  for (size_t i = 0; i < m.num_data; ++i)
    SPORE_CHECK(params[i].role == ir::Role::Data, where, " graph input ", i, " is a call argument but has role ",
                ir::role_name(params[i].role));
}

size_t num_results(const ir::Graph& g) {
  size_t n = 0;
  for (const auto& o : g.outputs()) n += o.updates ? 0 : 1;
  return n;
}

}  // namespace

void write_mindir(const LoadedModel& m, const std::string& path, const std::optional<ModelKey>& key) {
  const std::string where = detail::cat("[save_mindir] ", path, ":");
  write_atomically(path, "[save_mindir]", [&](FileWriter& w) {
    check_model(m, where);
    const ir::Graph& g = *m.graph;
    mindir::Model model;
    model.set_format_version(kMindirFormatVersion);
    auto meta = m.metadata;
    model.set_producer(meta.count("producer") ? meta["producer"] : "spore");
    model.set_producer_version(meta.count("producer_version") ? meta["producer_version"] : "");
    for (const char* k : {"producer", "producer_version", "format", "format_version"}) meta.erase(k);
    for (const auto& [k, v] : meta) (*model.mutable_metadata())[k] = v;
    try {
      graph_to_proto(g, model.mutable_graph());
    } catch (const std::exception& e) {
      throw Error(detail::cat(where, " the graph cannot be serialized: ", e.what()));
    }
    model.set_num_data(m.num_data);
    const size_t n_out = num_results(g);
    for (size_t i = 0; i < m.num_data; ++i) {
      auto* vi = model.add_inputs();
      vi->set_name(i < m.input_names.size() ? m.input_names[i] : detail::cat("input_", i));
      type_to_proto(g.params()[i].type, vi->mutable_type());
    }
    size_t k = 0;
    for (const auto& o : g.outputs()) {
      if (o.updates) continue;
      auto* vi = model.add_outputs();
      vi->set_name(k < m.output_names.size() ? m.output_names[k] : detail::cat("output_", k));
      type_to_proto(g.type_of(o.value), vi->mutable_type());
      ++k;
    }
    SPORE_CHECK(k == n_out, where, " internal: output count");
    std::vector<Tensor> data;
    uint64_t offset = 0;
    for (size_t i = 0; i < m.state.size(); ++i) {
      Tensor t = m.state[i].contiguous();
      const uint64_t nbytes = static_cast<uint64_t>(t.numel()) * t.itemsize();
      auto* e = model.add_tensors();
      e->set_name(m.state_names[i]);
      e->set_role(state_role_name(g.params()[m.num_data + i].role));
      e->set_dtype(std::string(dtype_name(t.dtype())));
      for (int64_t d : t.shape()) e->add_shape(d);
      e->set_offset(offset);
      e->set_nbytes(nbytes);
      e->set_crc32(crc32_of({static_cast<const std::byte*>(t.data_ptr()), nbytes}));
      offset = align_up(offset + nbytes);
      data.push_back(std::move(t));
    }
    std::string msg;
    SPORE_CHECK(model.SerializeToString(&msg) && msg.size() <= kMaxMessageBytes, where,
                " the graph message is too large to serialize (", model.ByteSizeLong(), " bytes)");
    Header h;
    h.version = kMindirFormatVersion;
    h.message_offset = kHeaderSize;
    h.message_size = msg.size();
    h.section_offset = align_up(kHeaderSize + msg.size());
    h.section_size = offset;
    h.message_crc = crc32_of({reinterpret_cast<const std::byte*>(msg.data()), msg.size()});
    const auto hb = encode(h);
    // Encrypted: the container's header, the whole file above as its ciphertext, the tag.
    std::optional<ModelEncryptor> enc;
    if (key) {
      enc.emplace(*key, h.section_offset + h.section_size, "[save_mindir]");
      w.write_raw(enc->header());
      w.encrypt_with(&*enc);
    }
    w.write(hb);
    w.write({reinterpret_cast<const std::byte*>(msg.data()), msg.size()});
    w.pad_to_alignment();
    for (const Tensor& t : data) {
      w.write({static_cast<const std::byte*>(t.data_ptr()), static_cast<size_t>(t.numel()) * t.itemsize()});
      w.pad_to_alignment();
    }
    SPORE_CHECK(w.position() == h.section_offset + h.section_size, where, " internal: section size");
    if (enc) {
      w.encrypt_with(nullptr);
      w.write_raw(enc->finish());
    }
  });
}

LoadedModel read_mindir(const std::string& path, const std::optional<ModelKey>& key) {
  const std::string where = detail::cat("[load_mindir] ", path, ":");
  transforms::register_ir_ops();  // the graph names its ops; a fresh process has not traced any yet
  // Shared by every loaded tensor: the weights stay in the mapping (no copy; the kernel pages
  // them in from the page cache) until the last tensor viewing them is gone. An encrypted
  // file is decrypted into memory instead, and the tensors view that.
  std::shared_ptr<ModelBytes> mapping;
  if (file_is_encrypted_model(path)) {
    SPORE_CHECK(key.has_value(), where, " the file is encrypted (AES-GCM); give its key (--key, or the key argument of ",
                "load_mindir / ModelFile::open)");
    mapping = decrypt_model_file(path, *key);
  } else {
    SPORE_CHECK(!key.has_value(), where, " a key was given but the file is not encrypted; load it without one");
    mapping = std::make_shared<MappedFile>(path);
  }
  const ModelBytes& file = *mapping;
  const auto b = file.bytes();
  SPORE_CHECK(b.size() >= kHeaderSize, where, " the file is truncated: ", b.size(),
              " bytes, but a MindIR file starts with a ", kHeaderSize, "-byte header");
  SPORE_CHECK(std::memcmp(b.data(), kMagic, 8) == 0, where,
              " not a MindIR file (its first bytes are not the SPOREMIR magic)");
  Header h;
  h.version = get<uint32_t>(b, 8);
  SPORE_CHECK(h.version != 0, where, " the header's format version is 0, which no writer uses; the file is corrupted");
  SPORE_CHECK(h.version <= kMindirFormatVersion, where, " the file has MindIR format version ", h.version,
              ", newer than version ", kMindirFormatVersion, " that this build reads; load it with a newer Spore");
  h.header_crc = get<uint32_t>(b, 12);
  SPORE_CHECK(crc32_of(b.subspan(16, kHeaderSize - 16)) == h.header_crc, where,
              " the header is corrupted (its checksum does not match)");
  h.message_offset = get<uint64_t>(b, 16);
  h.message_size = get<uint64_t>(b, 24);
  h.section_offset = get<uint64_t>(b, 32);
  h.section_size = get<uint64_t>(b, 40);
  h.message_crc = get<uint32_t>(b, 48);
  const uint64_t size = b.size();
  SPORE_CHECK(h.message_offset == kHeaderSize && h.message_size <= kMaxMessageBytes &&
                  h.section_offset == align_up(kHeaderSize + h.message_size),
              where, " the header places the graph message at ", h.message_offset, " (", h.message_size,
              " bytes) and the tensor section at ", h.section_offset, ", which is inconsistent");
  SPORE_CHECK(h.section_offset <= size && h.section_size == size - h.section_offset, where,
              " the file is truncated or has trailing bytes: the header says ", h.section_offset, " + ", h.section_size,
              " bytes, the file has ", size);
  const auto msg = b.subspan(h.message_offset, h.message_size);
  SPORE_CHECK(crc32_of(msg) == h.message_crc, where, " the graph message is corrupted (its checksum does not match)");
  mindir::Model model;
  SPORE_CHECK(model.ParseFromArray(msg.data(), static_cast<int>(msg.size())), where,
              " the graph message does not parse as a MindIR Model");
  SPORE_CHECK(model.format_version() == h.version, where, " the message's format version ", model.format_version(),
              " differs from the header's ", h.version);

  LoadedModel m;
  try {
    m.graph = graph_from_proto(model.graph());
  } catch (const Error& e) {
    throw Error(detail::cat(where, " bad graph: ", e.what()));
  } catch (const std::exception& e) {
    throw Error(detail::cat(where, " bad graph: ", e.what()));
  }
  const ir::Graph& g = *m.graph;
  const auto& params = g.params();
  SPORE_CHECK(model.num_data() <= params.size(), where, " num_data ", model.num_data(), " is more than the graph's ",
              params.size(), " inputs");
  m.num_data = static_cast<size_t>(model.num_data());
  const size_t n_state = params.size() - m.num_data;
  SPORE_CHECK(static_cast<size_t>(model.inputs_size()) == m.num_data &&
                  static_cast<size_t>(model.outputs_size()) == num_results(g) &&
                  static_cast<size_t>(model.tensors_size()) == n_state,
              where, " the metadata lists ", model.inputs_size(), " inputs, ", model.outputs_size(), " outputs and ",
              model.tensors_size(), " tensors, but the graph has ", m.num_data, ", ", num_results(g), " and ", n_state);
  for (const auto& vi : model.inputs()) m.input_names.push_back(vi.name());
  for (const auto& vi : model.outputs()) m.output_names.push_back(vi.name());
  const auto section = b.subspan(h.section_offset, h.section_size);
  for (size_t i = 0; i < n_state; ++i) {
    const mindir::TensorEntry& e = model.tensors(static_cast<int>(i));
    const ir::Param& p = params[m.num_data + i];
    const std::string t_where = detail::cat(where, " tensor ", i, " ('", e.name(), "')");
    SPORE_CHECK(!ir::is_token(p.type) && e.role() == ir::role_name(p.role), t_where, " has role '", e.role(),
                "' but graph input ", m.num_data + i, " is ", ir::role_name(p.role));
    auto dt = ir::dtype_from_name(e.dtype());
    SPORE_CHECK(dt.has_value(), t_where, " has unknown dtype '", e.dtype(), "'");
    SPORE_CHECK(e.shape_size() <= kMaxRank, t_where, " has rank ", e.shape_size(), ", over the limit of ", kMaxRank);
    Shape shape;
    uint64_t numel = 1;
    for (int64_t d : e.shape()) {
      SPORE_CHECK(d >= 0 && !__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel), t_where,
                  " has a negative or overflowing dimension ", d);
      shape.push_back(d);
    }
    const DType dtype = transforms::from_ir(*dt);
    uint64_t nbytes = 0;
    SPORE_CHECK(!__builtin_mul_overflow(numel, dtype_size(dtype), &nbytes) && nbytes == e.nbytes(), t_where,
                " records ", e.nbytes(), " bytes but its shape ", shape_str(shape), " of ", e.dtype(), " needs ",
                numel * dtype_size(dtype));
    SPORE_CHECK(e.offset() % kTensorAlignment == 0 && e.offset() <= section.size() &&
                    nbytes <= section.size() - e.offset(),
                t_where, " lies at offset ", e.offset(), " (", nbytes, " bytes), outside the ", section.size(),
                "-byte tensor section or not ", kTensorAlignment, "-byte aligned");
    SPORE_CHECK(fits(std::get<ir::TensorType>(p.type), dtype, shape), t_where, " is ", e.dtype(), shape_str(shape),
                " but the graph expects ", ir::type_str(p.type));
    const auto bytes = section.subspan(e.offset(), nbytes);
    SPORE_CHECK(crc32_of(bytes) == e.crc32(), t_where, " is corrupted (its checksum does not match)");
    // A view of the mapping (64-byte aligned: the section and every offset are).
    std::byte* at = mapping->mutable_data() + (bytes.data() - b.data());
    auto storage = std::make_shared<Storage>(static_cast<void*>(at), static_cast<size_t>(nbytes), mapping);
    Tensor t = Tensor::view_of(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
    m.state_names.push_back(e.name());
    m.state.push_back(std::move(t));
  }
  m.metadata = {model.metadata().begin(), model.metadata().end()};
  m.metadata["format"] = "mindir";
  m.metadata["format_version"] = std::to_string(h.version);
  m.metadata["producer"] = model.producer();
  m.metadata["producer_version"] = model.producer_version();
  return m;
}

std::string mindir_message_text(const std::string& file) {
  SPORE_CHECK(file.size() >= kHeaderSize, "[mindir_message_text] not a MindIR file");
  uint64_t n = 0;
  std::memcpy(&n, file.data() + 24, 8);
  SPORE_CHECK(n <= file.size() - kHeaderSize, "[mindir_message_text] bad message size");
  mindir::Model m;
  SPORE_CHECK(m.ParseFromArray(file.data() + kHeaderSize, static_cast<int>(n)), "[mindir_message_text] bad message");
  std::string text;
  google::protobuf::TextFormat::PrintToString(m, &text);
  return text;
}

std::string replace_mindir_message(const std::string& file, const std::string& text) {
  SPORE_CHECK(file.size() >= kHeaderSize, "[replace_mindir_message] not a MindIR file");
  mindir::Model m;
  SPORE_CHECK(google::protobuf::TextFormat::ParseFromString(text, &m), "[replace_mindir_message] bad text");
  const std::string msg = m.SerializeAsString();
  Header h;
  std::memcpy(&h.version, file.data() + 8, 4);
  std::memcpy(&h.section_size, file.data() + 40, 8);
  SPORE_CHECK(h.section_size <= file.size(), "[replace_mindir_message] bad section size");
  h.message_offset = kHeaderSize;
  h.message_size = msg.size();
  h.section_offset = align_up(kHeaderSize + msg.size());
  h.message_crc = crc32_of({reinterpret_cast<const std::byte*>(msg.data()), msg.size()});
  const auto hb = encode(h);
  std::string out(reinterpret_cast<const char*>(hb.data()), hb.size());
  out += msg;
  out.resize(h.section_offset, '\0');
  out += file.substr(file.size() - h.section_size);
  return out;
}

}  // namespace spore::io
