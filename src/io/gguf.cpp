#include "io/gguf.h"

#include <limits>

#include "io/gguf_parser.h"
#include "util/error.h"

namespace db {

std::string gguf_type_name(GGUFType t) {
  switch (t) {
    case GGUFType::UINT8: return "UINT8";
    case GGUFType::INT8: return "INT8";
    case GGUFType::UINT16: return "UINT16";
    case GGUFType::INT16: return "INT16";
    case GGUFType::UINT32: return "UINT32";
    case GGUFType::INT32: return "INT32";
    case GGUFType::FLOAT32: return "FLOAT32";
    case GGUFType::BOOL: return "BOOL";
    case GGUFType::STRING: return "STRING";
    case GGUFType::ARRAY: return "ARRAY";
    case GGUFType::UINT64: return "UINT64";
    case GGUFType::INT64: return "INT64";
    case GGUFType::FLOAT64: return "FLOAT64";
  }
  return "type#" + std::to_string(static_cast<uint32_t>(t));
}

std::string gguf_value_type_name(const GGUFValue& v) {
  if (v.type != GGUFType::ARRAY) return gguf_type_name(v.type);
  return "ARRAY[" + gguf_type_name(v.array_type) + "]";
}

std::unique_ptr<GGUFFile> GGUFFile::open(const std::string& path) {
  std::unique_ptr<GGUFFile> f(new GGUFFile());
  f->path_ = path;
  f->map_ = MappedFile::open(path);
  GGUFParser(*f).parse();
  return f;
}

const GGUFValue* GGUFFile::find(const std::string& key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

const GGUFTensorInfo* GGUFFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

TensorView GGUFFile::tensor(const std::string& name) const {
  const GGUFTensorInfo* t = find_tensor(name);
  if (!t) throw Error(path_ + ": tensor '" + name + "': expected a tensor of that name, got none in the file");
  TensorView v;
  v.dtype = t->dtype;
  v.shape = t->shape;
  v.layout = t->layout;
  v.data = map_->data() + data_offset_ + t->offset;
  return v;
}

// --- typed getters ---

namespace {

// Value conversions; each returns nullopt when the value's type or range does not fit.
std::optional<int64_t> as_int(const GGUFValue& v) {
  if (const auto* s = std::get_if<int64_t>(&v.v)) return *s;
  if (const auto* u = std::get_if<uint64_t>(&v.v))
    if (*u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return static_cast<int64_t>(*u);
  return std::nullopt;
}

std::optional<uint64_t> as_uint(const GGUFValue& v) {
  if (const auto* u = std::get_if<uint64_t>(&v.v)) return *u;
  if (const auto* s = std::get_if<int64_t>(&v.v))
    if (*s >= 0) return static_cast<uint64_t>(*s);
  return std::nullopt;
}

std::optional<double> as_float(const GGUFValue& v) {
  if (const auto* d = std::get_if<double>(&v.v)) return *d;
  if (const auto* s = std::get_if<int64_t>(&v.v)) return static_cast<double>(*s);
  if (const auto* u = std::get_if<uint64_t>(&v.v)) return static_cast<double>(*u);
  return std::nullopt;
}

// The value's type, plus the value itself for integers (to explain a range failure).
std::string describe(const GGUFValue& v) {
  std::string s = gguf_value_type_name(v);
  if (const auto* u = std::get_if<uint64_t>(&v.v)) s.append(" ").append(std::to_string(*u));
  if (const auto* i = std::get_if<int64_t>(&v.v)) s.append(" ").append(std::to_string(*i));
  return s;
}

[[noreturn]] void fail_key(const std::string& path, const std::string& key, const std::string& expected,
                           const std::string& got) {
  throw Error(path + ": metadata key '" + key + "': expected " + expected + ", got " + got);
}

const GGUFValue& require(const GGUFFile& f, const std::string& key, const char* expected) {
  const GGUFValue* v = f.find(key);
  if (!v) fail_key(f.path(), key, expected, "no such key");
  return *v;
}

template <class T, class Conv>
T convert(const GGUFFile& f, const std::string& key, const GGUFValue& v, const char* expected, Conv conv) {
  auto r = conv(v);
  if (!r) fail_key(f.path(), key, expected, describe(v));
  return *r;
}

template <class T, class Conv>
std::vector<T> convert_array(const GGUFFile& f, const std::string& key, const char* expected, Conv conv) {
  const GGUFValue& v = require(f, key, expected);
  const auto* items = std::get_if<std::vector<GGUFValue>>(&v.v);
  if (!items) fail_key(f.path(), key, expected, gguf_value_type_name(v));
  std::vector<T> out;
  out.reserve(items->size());
  for (size_t i = 0; i < items->size(); ++i) {
    auto r = conv((*items)[i]);
    if (!r)
      fail_key(f.path(), key, expected, gguf_value_type_name(v) + " whose element " + std::to_string(i) + " is " +
                                            describe((*items)[i]));
    out.push_back(std::move(*r));
  }
  return out;
}

constexpr const char* kString = "a STRING";
constexpr const char* kInt = "an integer that fits int64";
constexpr const char* kUint = "a non-negative integer";
constexpr const char* kFloat = "a number";
constexpr const char* kBool = "a BOOL";

std::optional<std::string> as_string(const GGUFValue& v) {
  if (const auto* s = std::get_if<std::string>(&v.v)) return *s;
  return std::nullopt;
}

std::optional<bool> as_bool(const GGUFValue& v) {
  if (const auto* b = std::get_if<bool>(&v.v)) return *b;
  return std::nullopt;
}

}  // namespace

std::string GGUFFile::get_string(const std::string& key) const {
  return convert<std::string>(*this, key, require(*this, key, kString), kString, as_string);
}
int64_t GGUFFile::get_int(const std::string& key) const {
  return convert<int64_t>(*this, key, require(*this, key, kInt), kInt, as_int);
}
uint64_t GGUFFile::get_uint(const std::string& key) const {
  return convert<uint64_t>(*this, key, require(*this, key, kUint), kUint, as_uint);
}
double GGUFFile::get_float(const std::string& key) const {
  return convert<double>(*this, key, require(*this, key, kFloat), kFloat, as_float);
}
bool GGUFFile::get_bool(const std::string& key) const {
  return convert<bool>(*this, key, require(*this, key, kBool), kBool, as_bool);
}

std::vector<std::string> GGUFFile::get_string_array(const std::string& key) const {
  return convert_array<std::string>(*this, key, "an ARRAY of STRING", as_string);
}
std::vector<int64_t> GGUFFile::get_int_array(const std::string& key) const {
  return convert_array<int64_t>(*this, key, "an ARRAY of integers that fit int64", as_int);
}
std::vector<double> GGUFFile::get_float_array(const std::string& key) const {
  return convert_array<double>(*this, key, "an ARRAY of numbers", as_float);
}

std::optional<std::string> GGUFFile::opt_string(const std::string& key) const {
  const GGUFValue* v = find(key);
  if (!v) return std::nullopt;
  return convert<std::string>(*this, key, *v, kString, as_string);
}
std::optional<int64_t> GGUFFile::opt_int(const std::string& key) const {
  const GGUFValue* v = find(key);
  if (!v) return std::nullopt;
  return convert<int64_t>(*this, key, *v, kInt, as_int);
}
std::optional<double> GGUFFile::opt_float(const std::string& key) const {
  const GGUFValue* v = find(key);
  if (!v) return std::nullopt;
  return convert<double>(*this, key, *v, kFloat, as_float);
}
std::optional<bool> GGUFFile::opt_bool(const std::string& key) const {
  const GGUFValue* v = find(key);
  if (!v) return std::nullopt;
  return convert<bool>(*this, key, *v, kBool, as_bool);
}

}  // namespace db
