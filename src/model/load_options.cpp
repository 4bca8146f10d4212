#include "model/load_options.h"

#include "util/error.h"

namespace db {

namespace {

constexpr DType kLoadQuantizeTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1,
                                        DType::Q4_K, DType::Q5_0, DType::Q5_1, DType::Q8_0};

}  // namespace

bool is_load_quantize_type(DType t) {
  for (DType k : kLoadQuantizeTypes)
    if (k == t) return true;
  return false;
}

DType load_quantize_type_from_name(const std::string& name) {
  std::string upper = name, accepted;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (DType k : kLoadQuantizeTypes) {
    if (dtype_name(k) == upper) return k;
    accepted += (accepted.empty() ? "" : ", ") + dtype_name(k);
  }
  throw Error("quantize type must be one of " + accepted + ", got '" + name + "'");
}

}  // namespace db
