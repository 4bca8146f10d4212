#include "io/safetensors.h"

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "util/error.h"

namespace db {

namespace {

using json = nlohmann::json;

std::optional<DType> dtype_from_safetensors(const std::string& s) {
  if (s == "F32") return DType::F32;
  if (s == "F16") return DType::F16;
  if (s == "BF16") return DType::BF16;
  if (s == "F64") return DType::F64;
  if (s == "I8") return DType::I8;
  if (s == "I16") return DType::I16;
  if (s == "I32") return DType::I32;
  if (s == "I64") return DType::I64;
  if (s == "F8_E4M3") return DType::F8_E4M3;
  if (s == "F8_E5M2") return DType::F8_E5M2;
  return std::nullopt;
}

// Parses the header; a repeated top-level key is an error (the format forbids it).
json parse_header_json(const std::string& path, const char* begin, const char* end) {
  std::set<std::string> seen;
  std::string duplicate;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::key && depth == 1 && !seen.insert(parsed.get<std::string>()).second &&
        duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  json j;
  try {
    j = json::parse(begin, end, cb);
  } catch (const json::exception& e) {
    throw Error(path + ": header: expected valid JSON, got a parse error: " + e.what());
  }
  if (!duplicate.empty()) throw Error(path + ": header: expected each tensor once, got '" + duplicate + "' twice");
  if (!j.is_object()) throw Error(path + ": header: expected a JSON object, got " + std::string(j.type_name()));
  return j;
}

}  // namespace

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->path_ = path;
  f->map_ = MappedFile::open(path);
  f->parse_header();
  return f;
}

void SafetensorsFile::parse_header() {
  const size_t size = map_->size();
  if (size < 8)
    throw Error(path_ + ": header length: expected an 8-byte little-endian length, got a file of " +
                std::to_string(size) + " bytes");
  uint64_t header_len = 0;
  std::memcpy(&header_len, map_->data(), 8);
  if (header_len > size - 8)
    throw Error(path_ + ": header length: expected at most " + std::to_string(size - 8) +
                " (bytes after the length field), got " + std::to_string(header_len));
  const char* hdr = reinterpret_cast<const char*>(map_->data() + 8);
  json j = parse_header_json(path_, hdr, hdr + header_len);

  const size_t data_start = 8 + static_cast<size_t>(header_len);
  const uint64_t data_size = size - data_start;
  for (const auto& [name, spec] : j.items()) {
    if (name == "__metadata__") continue;
    const std::string where = path_ + ": tensor '" + name + "': ";
    if (!spec.is_object()) throw Error(where + "expected an object, got " + std::string(spec.type_name()));
    auto dtype_it = spec.find("dtype");
    if (dtype_it == spec.end() || !dtype_it->is_string())
      throw Error(where + "dtype: expected a string, got " +
                  (dtype_it == spec.end() ? std::string("none") : std::string(dtype_it->type_name())));
    auto dtype = dtype_from_safetensors(dtype_it->get<std::string>());
    if (!dtype)
      throw Error(where + "dtype: expected one of F32, F16, BF16, F64, I8, I16, I32, I64, F8_E4M3, F8_E5M2, got " +
                  dtype_it->get<std::string>());

    auto shape_it = spec.find("shape");
    if (shape_it == spec.end() || !shape_it->is_array())
      throw Error(where + "shape: expected an array of non-negative integers, got " +
                  (shape_it == spec.end() ? std::string("none") : shape_it->dump()));
    std::vector<int64_t> shape;
    uint64_t numel = 1;
    for (const auto& d : *shape_it) {
      if (!d.is_number_unsigned() ||
          d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(numel, d.get<uint64_t>(), &numel))
        throw Error(where + "shape: expected non-negative integers with a product below 2^64, got " +
                    shape_it->dump());
      shape.push_back(d.get<int64_t>());
    }
    uint64_t nbytes = 0;
    if (__builtin_mul_overflow(numel, block_bytes(*dtype), &nbytes))
      throw Error(where + "shape: expected a size below 2^64 bytes, got " + shape_it->dump());

    auto off_it = spec.find("data_offsets");
    if (off_it == spec.end() || !off_it->is_array() || off_it->size() != 2 || !(*off_it)[0].is_number_unsigned() ||
        !(*off_it)[1].is_number_unsigned())
      throw Error(where + "data_offsets: expected [begin, end] as non-negative integers, got " +
                  (off_it == spec.end() ? std::string("none") : off_it->dump()));
    uint64_t begin = (*off_it)[0].get<uint64_t>(), end = (*off_it)[1].get<uint64_t>();
    if (begin > end || end > data_size)
      throw Error(where + "data_offsets out of range: expected 0 <= begin <= end <= " + std::to_string(data_size) +
                  " (data section size), got [" + std::to_string(begin) + ", " + std::to_string(end) + "]");
    if (end - begin != nbytes)
      throw Error(where + "data size: expected " + std::to_string(nbytes) + " bytes for " + dtype_name(*dtype) +
                  " " + shape_it->dump() + ", got " + std::to_string(end - begin) + " (data_offsets [" +
                  std::to_string(begin) + ", " + std::to_string(end) + "])");
    tensors_.emplace(name, Entry{*dtype, std::move(shape), data_start + static_cast<size_t>(begin)});
  }
}

std::vector<std::string> SafetensorsFile::tensor_names() const {
  std::vector<std::string> names;
  names.reserve(tensors_.size());
  for (const auto& [name, unused] : tensors_) names.push_back(name);
  return names;
}

std::optional<TensorView> SafetensorsFile::find(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return std::nullopt;
  return TensorView{it->second.dtype, it->second.shape, map_->data() + it->second.offset};
}

TensorView SafetensorsFile::tensor(const std::string& name) const {
  auto v = find(name);
  if (!v) throw Error(path_ + ": tensor '" + name + "': expected a tensor of that name, got none in the file");
  return *v;
}

}  // namespace db
