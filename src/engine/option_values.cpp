#include "engine/option_values.h"

#include "util/error.h"

namespace db {

namespace {
void check_not_negative(int n, const std::string& what) {
  if (n < 0) throw Error(what + " must not be negative (0 = auto), got " + std::to_string(n));
}
}  // namespace

AdmissionPolicy admission_policy_from_name(const std::string& name, const std::string& what) {
  if (name == "reserve") return AdmissionPolicy::Reserve;
  if (name == "first-chunk") return AdmissionPolicy::FirstChunk;
  throw Error(what + " must be reserve or first-chunk, got '" + name + "'");
}

void set_max_num_seqs(EngineConfig& c, int n, const std::string& what) {
  check_not_negative(n, what);
  c.max_num_seqs = n > 0 ? n : EngineConfig{}.max_num_seqs;
  c.auto_max_num_seqs = n == 0;
}

void set_max_num_batched_tokens(EngineConfig& c, int n, const std::string& what) {
  check_not_negative(n, what);
  c.max_num_batched_tokens = n > 0 ? n : EngineConfig{}.max_num_batched_tokens;
  c.auto_max_num_batched_tokens = n == 0;
}

}  // namespace db
