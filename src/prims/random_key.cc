// SPDX-License-Identifier: Apache-2.0
#include "prims/random_key.h"

#include <algorithm>
#include <array>

#include "prims/dropout.h"
#include "prims/random.h"
#include "spore/error.h"

namespace spore::prims {

RandomKey effective_key(uint64_t seed, uint64_t offset, std::span<const Buffer> in, size_t n_data) {
  if (in.size() <= n_data) return {seed, offset};
  const Buffer& k = in[n_data];
  const int64_t* d = k.ptr<int64_t>();
  return {static_cast<uint64_t>(d[0]), static_cast<uint64_t>(d[k.strides[0]]) + offset};
}

void check_key_input(const char* name, std::span<const TensorType> in, size_t n_data) {
  SPORE_CHECK(in.size() == n_data || in.size() == n_data + 1, "[", name, "] takes ", n_data, " input",
              n_data == 1 ? "" : "s", " (plus, in a jit graph, an int64 key [seed, offset]), got ", in.size());
  if (in.size() == n_data) return;
  const TensorType& k = in[n_data];
  SPORE_CHECK(k.dtype == DType::Int64 && k.shape.size() == 1 && k.shape[0] == 2, "[", name,
              "] the key input must be an int64 tensor of shape (2) holding [seed, offset], got ", dtype_name(k.dtype),
              shape_str(k.shape));
}

namespace {

struct KeyedPrimitive {
  const Primitive* p;
  int n_data;
  RandomKey (*get)(const void*);
  std::shared_ptr<const void> (*set)(const void*, RandomKey);
};

template <class A>
RandomKey get_key(const void* a) {
  const auto& x = *static_cast<const A*>(a);
  return {x.seed, x.offset};
}

template <class A>
std::shared_ptr<const void> set_key(const void* a, RandomKey k) {
  auto c = std::make_shared<A>(*static_cast<const A*>(a));
  c->seed = k.seed;
  c->offset = k.offset;
  return c;
}

template <class A>
KeyedPrimitive keyed(const Primitive& p, int n_data) {
  return {&p, n_data, &get_key<A>, &set_key<A>};
}

const KeyedPrimitive* find_keyed(const Primitive& p) {
  static const std::array<KeyedPrimitive, 8> table = {
      keyed<RandomFillAttrs>(uniform_primitive(), 0),          keyed<RandomFillAttrs>(normal_primitive(), 0),
      keyed<RandomFillAttrs>(truncated_normal_primitive(), 0), keyed<RandomFillAttrs>(bernoulli_scalar_primitive(), 0),
      keyed<RandomKeyAttrs>(bernoulli_primitive(), 1),         keyed<RandIntAttrs>(randint_primitive(), 0),
      keyed<RandIntAttrs>(permutation_primitive(), 0),         keyed<DropoutAttrs>(dropout_primitive(), 1),
  };
  for (const KeyedPrimitive& k : table)
    if (k.p == &p) return &k;
  return nullptr;
}

thread_local DrawLog* tls_log = nullptr;

}  // namespace

int random_data_inputs(const Primitive& p) {
  const KeyedPrimitive* k = find_keyed(p);
  return k ? k->n_data : -1;
}

RandomKey key_in_attrs(const Primitive& p, const void* attrs) { return find_keyed(p)->get(attrs); }

std::shared_ptr<const void> with_key_in_attrs(const Primitive& p, const void* attrs, RandomKey key) {
  return find_keyed(p)->set(attrs, key);
}

RandomKey draw_key(Device device, int64_t numel) {
  const bool cpu = device.type == DeviceType::CPU || device.type == DeviceType::Meta;
  Generator& g = default_generator(cpu ? kCPU : device);
  const RandomKey k = g.next(numel);
  DrawLog::note_draw(k, (static_cast<uint64_t>(numel) + 3) / 4 * 4, cpu);
  return k;
}

DrawLog::DrawLog() : seed_(default_generator(kCPU).seed()), base_(default_generator(kCPU).offset()) {
  outer_ = tls_log;
  tls_log = this;
}

DrawLog::~DrawLog() {
  tls_log = outer_;
}

bool DrawLog::state_is_fixed() const {
  const Generator& g = default_generator(kCPU);
  return reseeded_ || g.seed() != seed_ || g.offset() < base_;
}

std::optional<uint64_t> DrawLog::delta_of(RandomKey key) const {
  auto it = draws_.find({key.seed, key.offset});
  if (it == draws_.end() || it->second == Kind::Fixed) return std::nullopt;
  SPORE_CHECK(it->second == Kind::Relative, "[jit] the function drew the same random key (seed ", key.seed,
              ", offset ", key.offset, ") before and after reseeding the generator inside it; call manual_seed "
              "before the jitted function instead of inside it");
  return key.offset - base_;
}

void DrawLog::note_draw(RandomKey key, uint64_t step, bool from_cpu) {
  DrawLog* log = tls_log;
  if (log == nullptr) return;
  const bool relative = from_cpu && !log->reseeded_ && key.seed == log->seed_ && key.offset >= log->base_;
  const Kind kind = relative ? Kind::Relative : Kind::Fixed;
  auto [it, fresh] = log->draws_.emplace(std::make_pair(key.seed, key.offset), kind);
  if (!fresh && it->second != kind) it->second = Kind::Both;
  if (relative) log->advance_ = std::max(log->advance_, key.offset - log->base_ + step);
}

void DrawLog::note_reseed() {
  if (tls_log != nullptr) tls_log->reseeded_ = true;
}

}  // namespace spore::prims
