#include "model/gguf_convert.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "kernels/dequantize.h"
#include "kernels/quantize.h"
#include "util/error.h"

namespace db {

namespace {

constexpr const char* kFileType = "general.file_type";

struct TypeName {
  const char* name;
  DType type;
  uint32_t file_type;  // the GGUF general.file_type number of a file mostly of this type
};
constexpr TypeName kTypes[] = {{"f32", DType::F32, 0},   {"f16", DType::F16, 1},   {"q4_0", DType::Q4_0, 2},
                               {"q4_1", DType::Q4_1, 3}, {"q8_0", DType::Q8_0, 7}, {"q5_0", DType::Q5_0, 8},
                               {"q5_1", DType::Q5_1, 9}, {"bf16", DType::BF16, 32}};

const TypeName& entry(DType t) {
  for (const TypeName& e : kTypes)
    if (e.type == t) return e;
  throw Error("convert: cannot store weights as " + dtype_name(t));
}

bool converts(const GGUFTensorInfo& t, DType type) {
  return t.shape.size() >= 2 && t.dtype != type && kernels::can_dequantize(t.dtype) &&
         t.shape.back() % block_size(type) == 0;
}

}  // namespace

DType convert_type_from_name(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string known;
  for (const TypeName& e : kTypes) {
    if (lower == e.name) return e.type;
    known += known.empty() ? e.name : std::string(", ") + e.name;
  }
  throw Error("convert: unknown type '" + name + "' (expected one of " + known + ")");
}

GgufConvertReport convert_gguf(const std::string& in_path, const std::string& out_path, DType type) {
  const TypeName& target = entry(type);
  const auto in = GGUFFile::open(in_path);
  GGUFWriter w(in->alignment());
  for (const auto& [key, value] : in->metadata()) {
    if (key == "general.alignment") continue;
    if (key == kFileType)
      w.add_uint32(key, target.file_type);
    else
      w.add_value(key, value);
  }
  GgufConvertReport report;
  std::vector<float> row;
  std::vector<uint8_t> out;
  for (const GGUFTensorInfo& t : in->tensor_infos()) {
    const uint8_t* src = in->mapping().data() + in->data_offset() + t.offset;
    if (!converts(t, type)) {
      w.add_tensor(t.name, t.dtype, t.shape, src, t.nbytes);
      ++report.copied;
      continue;
    }
    const int64_t n = t.shape.back();
    const int64_t rows = static_cast<int64_t>(t.nbytes / row_bytes(t.dtype, n));
    const size_t in_row = row_bytes(t.dtype, n), out_row = row_bytes(type, n);
    row.resize(static_cast<size_t>(n));
    out.resize(out_row * static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      kernels::dequantize_row_data(t.dtype, src + static_cast<size_t>(r) * in_row, row.data(), n);
      kernels::quantize_row(type, row.data(), out.data() + static_cast<size_t>(r) * out_row, n);
    }
    w.add_tensor(t.name, type, t.shape, out.data(), out.size());
    ++report.converted;
  }
  w.write(out_path);
  report.bytes = w.header_bytes().size() + w.data_size();
  return report;
}

}  // namespace db
