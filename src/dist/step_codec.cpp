#include "dist/step_codec.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "util/error.h"

namespace db::dist {

namespace {

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out_.insert(out_.end(), p, p + sizeof(T));
  }
  template <class T>
  void put_array(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    const auto* p = reinterpret_cast<const std::byte*>(v.data());
    out_.insert(out_.end(), p, p + v.size() * sizeof(T));
  }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

class Reader {
 public:
  explicit Reader(const std::vector<std::byte>& in) : in_(in) {}

  template <class T>
  T get(const char* what) {
    T v;
    need(sizeof(T), what);
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  template <class T>
  void get_array(std::vector<T>& v, const char* what) {
    const uint64_t n = get<uint64_t>(what);
    if (n > (in_.size() - at_) / sizeof(T))
      throw Error(std::string("step message: ") + what + " of " + std::to_string(n) + " elements runs past the " +
                  std::to_string(in_.size()) + "-byte message");
    v.resize(n);
    std::memcpy(v.data(), in_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
  }
  void finish() const {
    if (at_ != in_.size())
      throw Error("step message: " + std::to_string(in_.size() - at_) + " bytes left over after the step");
  }

 private:
  void need(size_t n, const char* what) const {
    if (in_.size() - at_ < n)
      throw Error(std::string("step message: ") + what + " runs past the " + std::to_string(in_.size()) +
                  "-byte message");
  }
  const std::vector<std::byte>& in_;
  size_t at_ = 0;
};

}  // namespace

std::vector<std::byte> encode_step(const ForwardStep& step) {
  Writer w;
  w.put(step.kind);
  w.put(kStepFormatVersion);
  if (step.kind != StepKind::Forward) return w.take();
  w.put_array(step.copies);
  w.put_array(step.batch.token_ids);
  w.put_array(step.batch.positions);
  w.put_array(step.batch.query_start);
  w.put_array(step.batch.logits_indices);
  w.put(step.attn.block_size);
  w.put_array(step.attn.context_lens);
  w.put<uint64_t>(step.attn.block_tables.size());
  for (const std::vector<int32_t>& table : step.attn.block_tables) w.put_array(table);
  w.put_array(step.attn.slot_mapping);
  return w.take();
}

ForwardStep decode_step(const std::vector<std::byte>& bytes) {
  Reader r(bytes);
  ForwardStep step;
  const auto kind = r.get<uint8_t>("the kind");
  if (kind < static_cast<uint8_t>(StepKind::Forward) || kind > static_cast<uint8_t>(StepKind::Stop))
    throw Error("step message: unknown kind " + std::to_string(kind));
  step.kind = static_cast<StepKind>(kind);
  const auto version = r.get<uint32_t>("the format version");
  if (version != kStepFormatVersion)
    throw Error("step message: format version " + std::to_string(version) + ", this build reads version " +
                std::to_string(kStepFormatVersion) + " (every rank must run the same deepbatch)");
  if (step.kind == StepKind::Forward) {
    r.get_array(step.copies, "the block copies");
    r.get_array(step.batch.token_ids, "the token ids");
    r.get_array(step.batch.positions, "the positions");
    r.get_array(step.batch.query_start, "the query offsets");
    r.get_array(step.batch.logits_indices, "the logits rows");
    step.attn.block_size = r.get<int32_t>("the block size");
    r.get_array(step.attn.context_lens, "the context lengths");
    const auto n_tables = r.get<uint64_t>("the block table count");
    if (n_tables > bytes.size() / sizeof(uint64_t))
      throw Error("step message: " + std::to_string(n_tables) + " block tables cannot fit the " +
                  std::to_string(bytes.size()) + "-byte message");
    step.attn.block_tables.resize(n_tables);
    for (std::vector<int32_t>& table : step.attn.block_tables) r.get_array(table, "a block table");
    r.get_array(step.attn.slot_mapping, "the slot mapping");
  }
  r.finish();
  return step;
}

void heartbeat_round(Communicator& group) {
  const std::byte alive{1};
  std::vector<std::byte> all(static_cast<size_t>(group.size()));
  group.all_gather(std::span<const std::byte>(&alive, 1), all);
}

}  // namespace db::dist
