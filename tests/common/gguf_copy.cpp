#include "gguf_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "io/gguf.h"
#include "kernels/quantize.h"
#include "tokenizer/byte_level.h"

namespace db::test {

void copy_gguf(const std::string& from, const std::string& to, const std::function<void(GGUFWriter&)>& edit,
               const std::function<bool(const std::string&)>& keep,
               const std::function<DType(const std::string&, const TensorView&)>& retype) {
  auto in = GGUFFile::open(from);
  GGUFWriter w;
  for (const auto& [key, value] : in->metadata())
    if (key != "general.alignment" && (!keep || keep(key))) w.add_value(key, value);
  for (const GGUFTensorInfo& t : in->tensor_infos()) {
    if (keep && !keep(t.name)) continue;
    const TensorView v = in->tensor(t.name);
    const DType to_type = retype ? retype(t.name, v) : v.dtype;
    if (to_type == v.dtype) {
      w.add_tensor(t.name, v.dtype, v.shape, v.data, v.nbytes());
      continue;
    }
    ASSERT_EQ(v.dtype, DType::F32) << t.name;
    std::vector<uint8_t> bytes(row_bytes(to_type, v.cols()) * static_cast<size_t>(v.rows()));
    for (int64_t r = 0; r < v.rows(); ++r)
      kernels::quantize_row(to_type, reinterpret_cast<const float*>(v.row(r)),
                            bytes.data() + static_cast<size_t>(r) * row_bytes(to_type, v.cols()), v.cols());
    w.add_tensor(t.name, to_type, v.shape, bytes.data(), bytes.size());
  }
  edit(w);
  w.write(to);
}

void write_with_tokenizer(const std::string& from, const std::string& to) {
  copy_gguf(from, to, [](GGUFWriter& w) {
    std::vector<std::string> tokens;
    std::vector<int64_t> types;
    for (int b = 0; b < 256; ++b) {
      tokens.push_back(b == 2 ? "<eos>" : byte_level::char_of_byte(static_cast<uint8_t>(b)));
      types.push_back(b == 2 ? 3 : 1);  // 3: control, 1: normal
    }
    w.add_string("tokenizer.ggml.model", "gpt2");
    w.add_string_array("tokenizer.ggml.tokens", tokens);
    w.add_int_array("tokenizer.ggml.token_type", GGUFType::INT32, types);
    w.add_string_array("tokenizer.ggml.merges", {});
    w.add_uint32("tokenizer.ggml.eos_token_id", 2);
  });
}

}  // namespace db::test
