#include "tensor/dtype.h"

#include "util/error.h"

namespace db {

namespace {
struct TypeInfo {
  const char* name;
  int64_t block;
  size_t bytes;
};

std::optional<TypeInfo> info(DType t) {
  switch (t) {
    case DType::F32: return TypeInfo{"F32", 1, 4};
    case DType::F16: return TypeInfo{"F16", 1, 2};
    case DType::BF16: return TypeInfo{"BF16", 1, 2};
    case DType::F64: return TypeInfo{"F64", 1, 8};
    case DType::I8: return TypeInfo{"I8", 1, 1};
    case DType::I16: return TypeInfo{"I16", 1, 2};
    case DType::I32: return TypeInfo{"I32", 1, 4};
    case DType::I64: return TypeInfo{"I64", 1, 8};
    case DType::Q4_0: return TypeInfo{"Q4_0", 32, 2 + 16};
    case DType::Q4_1: return TypeInfo{"Q4_1", 32, 2 + 2 + 16};
    case DType::Q5_0: return TypeInfo{"Q5_0", 32, 2 + 4 + 16};
    case DType::Q5_1: return TypeInfo{"Q5_1", 32, 2 + 2 + 4 + 16};
    case DType::Q8_0: return TypeInfo{"Q8_0", 32, 2 + 32};
    case DType::Q8_1: return TypeInfo{"Q8_1", 32, 4 + 32};
    case DType::Q2_K: return TypeInfo{"Q2_K", 256, 256 / 16 + 256 / 4 + 2 + 2};
    case DType::Q3_K: return TypeInfo{"Q3_K", 256, 256 / 8 + 256 / 4 + 12 + 2};
    case DType::Q4_K: return TypeInfo{"Q4_K", 256, 2 + 2 + 12 + 256 / 2};
    case DType::Q5_K: return TypeInfo{"Q5_K", 256, 2 + 2 + 12 + 256 / 8 + 256 / 2};
    case DType::Q6_K: return TypeInfo{"Q6_K", 256, 256 / 2 + 256 / 4 + 256 / 16 + 2};
    case DType::Q8_K: return TypeInfo{"Q8_K", 256, 4 + 256 + 256 / 16 * 2};
    case DType::F8_E4M3: return TypeInfo{"F8_E4M3", 1, 1};
    case DType::F8_E5M2: return TypeInfo{"F8_E5M2", 1, 1};
  }
  return std::nullopt;
}

TypeInfo must_info(DType t) {
  auto i = info(t);
  if (!i) throw Error("unknown dtype id " + std::to_string(static_cast<uint32_t>(t)));
  return *i;
}
}  // namespace

int64_t block_size(DType t) { return must_info(t).block; }
size_t block_bytes(DType t) { return must_info(t).bytes; }

size_t row_bytes(DType t, int64_t n) {
  auto i = must_info(t);
  if (n % i.block != 0)
    throw Error("row of " + std::to_string(n) + " elements is not a multiple of the " + i.name + " block size " +
                std::to_string(i.block));
  return static_cast<size_t>(n / i.block) * i.bytes;
}

std::string dtype_name(DType t) {
  auto i = info(t);
  return i ? i->name : "type#" + std::to_string(static_cast<uint32_t>(t));
}

std::optional<DType> dtype_from_ggml(uint32_t id) {
  auto t = static_cast<DType>(id);
  if (!info(t) || t == DType::F8_E4M3 || t == DType::F8_E5M2) return std::nullopt;
  return t;
}

bool is_quantized(DType t) { return block_size(t) > 1; }

DType kv_dtype_from_name(const std::string& name, const std::string& what) {
  if (name == "f16") return DType::F16;
  if (name == "bf16") return DType::BF16;
  if (name == "f32") return DType::F32;
  if (name == "q8_0") return DType::Q8_0;
  throw Error(what + " must be f16, bf16, f32 or q8_0, got '" + name + "'");
}

}  // namespace db
