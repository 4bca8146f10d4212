#include "io/gguf_writer.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "tensor/panel_layout.h"
#include "util/error.h"

namespace db {

namespace {


template <class T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t n = out.size();
  out.resize(n + sizeof(T));
  std::memcpy(out.data() + n, &v, sizeof(T));
}

void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

[[noreturn]] void bad_value(const std::string& key, const std::string& what) {
  throw Error("GGUF writer: metadata key '" + key + "': " + what);
}

bool holds_for(const GGUFValue& v) {
  switch (v.type) {
    case GGUFType::UINT8: case GGUFType::UINT16: case GGUFType::UINT32: case GGUFType::UINT64:
      return std::holds_alternative<uint64_t>(v.v);
    case GGUFType::INT8: case GGUFType::INT16: case GGUFType::INT32: case GGUFType::INT64:
      return std::holds_alternative<int64_t>(v.v);
    case GGUFType::FLOAT32: case GGUFType::FLOAT64: return std::holds_alternative<double>(v.v);
    case GGUFType::BOOL: return std::holds_alternative<bool>(v.v);
    case GGUFType::STRING: return std::holds_alternative<std::string>(v.v);
    case GGUFType::ARRAY: return std::holds_alternative<std::vector<GGUFValue>>(v.v);
  }
  return false;
}

bool in_range(const GGUFValue& v) {
  if (const auto* u = std::get_if<uint64_t>(&v.v)) {
    switch (v.type) {
      case GGUFType::UINT8: return *u <= 0xff;
      case GGUFType::UINT16: return *u <= 0xffff;
      case GGUFType::UINT32: return *u <= 0xffffffffu;
      default: return true;
    }
  }
  if (const auto* s = std::get_if<int64_t>(&v.v)) {
    switch (v.type) {
      case GGUFType::INT8: return *s >= -128 && *s <= 127;
      case GGUFType::INT16: return *s >= -32768 && *s <= 32767;
      case GGUFType::INT32:
        return *s >= std::numeric_limits<int32_t>::min() && *s <= std::numeric_limits<int32_t>::max();
      default: return true;
    }
  }
  return true;
}

void check_value(const std::string& key, const GGUFValue& v) {
  if (static_cast<uint32_t>(v.type) > static_cast<uint32_t>(GGUFType::FLOAT64))
    bad_value(key, "unknown value type " + gguf_type_name(v.type));
  if (!holds_for(v)) bad_value(key, "the value's variant does not hold the alternative for " + gguf_type_name(v.type));
  if (!in_range(v)) bad_value(key, "integer value out of range for " + gguf_type_name(v.type));
  if (v.type != GGUFType::ARRAY) return;
  for (const auto& item : std::get<std::vector<GGUFValue>>(v.v)) {
    if (item.type != v.array_type)
      bad_value(key, "array of " + gguf_type_name(v.array_type) + " holds an element of type " +
                         gguf_type_name(item.type));
    check_value(key, item);
  }
}

void put_value(std::vector<uint8_t>& out, const GGUFValue& v) {
  switch (v.type) {
    case GGUFType::UINT8: put<uint8_t>(out, static_cast<uint8_t>(std::get<uint64_t>(v.v))); break;
    case GGUFType::INT8: put<int8_t>(out, static_cast<int8_t>(std::get<int64_t>(v.v))); break;
    case GGUFType::UINT16: put<uint16_t>(out, static_cast<uint16_t>(std::get<uint64_t>(v.v))); break;
    case GGUFType::INT16: put<int16_t>(out, static_cast<int16_t>(std::get<int64_t>(v.v))); break;
    case GGUFType::UINT32: put<uint32_t>(out, static_cast<uint32_t>(std::get<uint64_t>(v.v))); break;
    case GGUFType::INT32: put<int32_t>(out, static_cast<int32_t>(std::get<int64_t>(v.v))); break;
    case GGUFType::UINT64: put<uint64_t>(out, std::get<uint64_t>(v.v)); break;
    case GGUFType::INT64: put<int64_t>(out, std::get<int64_t>(v.v)); break;
    case GGUFType::FLOAT32: put<float>(out, static_cast<float>(std::get<double>(v.v))); break;
    case GGUFType::FLOAT64: put<double>(out, std::get<double>(v.v)); break;
    case GGUFType::BOOL: put<uint8_t>(out, std::get<bool>(v.v) ? 1 : 0); break;
    case GGUFType::STRING: put_string(out, std::get<std::string>(v.v)); break;
    case GGUFType::ARRAY: {
      const auto& items = std::get<std::vector<GGUFValue>>(v.v);
      put<uint32_t>(out, static_cast<uint32_t>(v.array_type));
      put<uint64_t>(out, items.size());
      for (const auto& item : items) put_value(out, item);
      break;
    }
  }
}

GGUFValue scalar_u(GGUFType t, uint64_t x) { return GGUFValue{t, x, GGUFType::UINT8}; }
GGUFValue scalar_i(GGUFType t, int64_t x) { return GGUFValue{t, x, GGUFType::UINT8}; }
GGUFValue scalar_f(GGUFType t, double x) { return GGUFValue{t, x, GGUFType::UINT8}; }

}  // namespace

GGUFWriter::GGUFWriter(uint64_t alignment) : alignment_(alignment) {
  if (alignment == 0 || !std::has_single_bit(alignment) || alignment > 0xffffffffu)
    throw Error("GGUF writer: alignment: expected a nonzero power of two below 2^32, got " +
                std::to_string(alignment));
  if (alignment != kGGUFDefaultAlignment) kv_.emplace_back("general.alignment", scalar_u(GGUFType::UINT32, alignment));
}

void GGUFWriter::add_value(const std::string& key, const GGUFValue& v) {
  if (has(key)) bad_value(key, "expected each key once, got a second definition");
  if (key == "general.alignment") bad_value(key, "set the alignment through the GGUFWriter constructor");
  check_value(key, v);
  kv_.emplace_back(key, v);
}

bool GGUFWriter::has(const std::string& key) const {
  for (const auto& [k, unused] : kv_)
    if (k == key) return true;
  return false;
}

void GGUFWriter::add_uint8(const std::string& k, uint8_t v) { add_value(k, scalar_u(GGUFType::UINT8, v)); }
void GGUFWriter::add_int8(const std::string& k, int8_t v) { add_value(k, scalar_i(GGUFType::INT8, v)); }
void GGUFWriter::add_uint16(const std::string& k, uint16_t v) { add_value(k, scalar_u(GGUFType::UINT16, v)); }
void GGUFWriter::add_int16(const std::string& k, int16_t v) { add_value(k, scalar_i(GGUFType::INT16, v)); }
void GGUFWriter::add_uint32(const std::string& k, uint32_t v) { add_value(k, scalar_u(GGUFType::UINT32, v)); }
void GGUFWriter::add_int32(const std::string& k, int32_t v) { add_value(k, scalar_i(GGUFType::INT32, v)); }
void GGUFWriter::add_uint64(const std::string& k, uint64_t v) { add_value(k, scalar_u(GGUFType::UINT64, v)); }
void GGUFWriter::add_int64(const std::string& k, int64_t v) { add_value(k, scalar_i(GGUFType::INT64, v)); }
void GGUFWriter::add_float32(const std::string& k, float v) { add_value(k, scalar_f(GGUFType::FLOAT32, v)); }
void GGUFWriter::add_float64(const std::string& k, double v) { add_value(k, scalar_f(GGUFType::FLOAT64, v)); }
void GGUFWriter::add_bool(const std::string& k, bool v) { add_value(k, GGUFValue{GGUFType::BOOL, v, GGUFType::UINT8}); }
void GGUFWriter::add_string(const std::string& k, const std::string& v) {
  add_value(k, GGUFValue{GGUFType::STRING, v, GGUFType::UINT8});
}

void GGUFWriter::add_string_array(const std::string& key, const std::vector<std::string>& v) {
  std::vector<GGUFValue> items;
  items.reserve(v.size());
  for (const auto& s : v) items.push_back(GGUFValue{GGUFType::STRING, s, GGUFType::UINT8});
  add_value(key, GGUFValue{GGUFType::ARRAY, std::move(items), GGUFType::STRING});
}

void GGUFWriter::add_int_array(const std::string& key, GGUFType elem, const std::vector<int64_t>& v) {
  bool is_unsigned = elem == GGUFType::UINT8 || elem == GGUFType::UINT16 || elem == GGUFType::UINT32 ||
                     elem == GGUFType::UINT64;
  bool is_signed =
      elem == GGUFType::INT8 || elem == GGUFType::INT16 || elem == GGUFType::INT32 || elem == GGUFType::INT64;
  if (!is_unsigned && !is_signed) bad_value(key, "expected an integer element type, got " + gguf_type_name(elem));
  std::vector<GGUFValue> items;
  items.reserve(v.size());
  for (int64_t x : v) {
    if (is_signed) {
      items.push_back(scalar_i(elem, x));
    } else {
      if (x < 0) bad_value(key, "negative value " + std::to_string(x) + " for " + gguf_type_name(elem));
      items.push_back(scalar_u(elem, static_cast<uint64_t>(x)));
    }
  }
  add_value(key, GGUFValue{GGUFType::ARRAY, std::move(items), elem});
}

void GGUFWriter::add_float_array(const std::string& key, GGUFType elem, const std::vector<double>& v) {
  if (elem != GGUFType::FLOAT32 && elem != GGUFType::FLOAT64)
    bad_value(key, "expected FLOAT32 or FLOAT64 elements, got " + gguf_type_name(elem));
  std::vector<GGUFValue> items;
  items.reserve(v.size());
  for (double x : v) items.push_back(scalar_f(elem, x));
  add_value(key, GGUFValue{GGUFType::ARRAY, std::move(items), elem});
}

size_t GGUFWriter::checked_size(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                                TensorLayout layout) const {
  const std::string where = "GGUF writer: tensor '" + name + "': ";
  for (const auto& t : tensors_)
    if (t.name == name) throw Error(where + "expected each tensor name once, got a second definition");
  if (shape.size() > 4) throw Error(where + "expected at most 4 dimensions, got " + std::to_string(shape.size()));
  if (layout == TensorLayout::Panels16 && (!has_panel_layout(dtype) || shape.size() < 2))
    throw Error(where + "expected a matrix of a type with a panel layout to pre-pack, got " + dtype_name(dtype) + " " +
                TensorView{dtype, shape, nullptr}.shape_str());
  TensorView view{dtype, shape, nullptr, layout};
  int64_t numel = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel))
      throw Error(where + "expected non-negative dimensions with fewer than 2^63 elements, got " + view.shape_str());
  try {
    return view.nbytes();
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
}

void GGUFWriter::append(Tensor t) {
  t.offset = tensors_.empty() ? 0 : gguf_align_up(data_size_, alignment_);
  data_size_ = t.offset + t.nbytes;
  tensors_.push_back(std::move(t));
}

void GGUFWriter::add_tensor(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                            const void* data, size_t nbytes) {
  size_t expected = checked_size(name, dtype, shape);
  if (nbytes != expected)
    throw Error("GGUF writer: tensor '" + name + "': expected " + std::to_string(expected) + " bytes for " +
                dtype_name(dtype) + " " + TensorView{dtype, shape, nullptr}.shape_str() + ", got " +
                std::to_string(nbytes));
  const auto* p = static_cast<const uint8_t*>(data);
  append(Tensor{name, dtype, shape, TensorLayout::Rows, std::vector<uint8_t>(p, p + nbytes), nbytes, 0});
}

void GGUFWriter::add_zero_tensor(const std::string& name, DType dtype, const std::vector<int64_t>& shape) {
  append(Tensor{name, dtype, shape, TensorLayout::Rows, {}, checked_size(name, dtype, shape), 0});
}

uint64_t GGUFWriter::reserve_tensor(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                                    TensorLayout layout) {
  append(Tensor{name, dtype, shape, layout, {}, checked_size(name, dtype, shape, layout), 0});
  return tensors_.back().offset;
}

std::vector<uint8_t> GGUFWriter::header_bytes() const {
  std::vector<uint8_t> out;
  put<uint32_t>(out, 0x46554747);  // "GGUF"
  put<uint32_t>(out, 3);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, kv_.size());
  for (const auto& [key, value] : kv_) {
    put_string(out, key);
    put<uint32_t>(out, static_cast<uint32_t>(value.type));
    put_value(out, value);
  }
  for (const auto& t : tensors_) {
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) put<uint64_t>(out, static_cast<uint64_t>(*it));
    const uint32_t panel_base = t.layout == TensorLayout::Panels16 ? kGGUFPanelTypeBase : 0;
    put<uint32_t>(out, panel_base + static_cast<uint32_t>(t.dtype));
    put<uint64_t>(out, t.offset);
  }
  out.resize(gguf_align_up(out.size(), alignment_), 0);
  return out;
}

std::vector<uint8_t> GGUFWriter::to_bytes() const {
  std::vector<uint8_t> out = header_bytes();
  size_t data_start = out.size();
  out.resize(data_start + data_size_, 0);
  for (const auto& t : tensors_)
    if (!t.bytes.empty()) std::memcpy(out.data() + data_start + t.offset, t.bytes.data(), t.bytes.size());
  return out;
}

void GGUFWriter::write(const std::string& path) const {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw Error(sys_error(path, "cannot create file"));
  auto write_all = [&](const void* p, size_t n) {
    if (n != 0 && std::fwrite(p, 1, n, f.get()) != n) throw Error(sys_error(path, "write failed"));
  };
  std::vector<uint8_t> header = header_bytes();
  write_all(header.data(), header.size());
  const std::vector<uint8_t> zeros(std::max<uint64_t>(alignment_, 1 << 16), 0);
  auto write_zeros = [&](uint64_t n) {
    while (n > 0) {
      const uint64_t chunk = std::min<uint64_t>(n, zeros.size());
      write_all(zeros.data(), chunk);
      n -= chunk;
    }
  };
  uint64_t pos = 0;
  for (const auto& t : tensors_) {
    write_zeros(t.offset - pos);
    if (t.bytes.empty()) {
      write_zeros(t.nbytes);
    } else {
      write_all(t.bytes.data(), t.bytes.size());
    }
    pos = t.offset + t.nbytes;
  }
  if (std::fflush(f.get()) != 0) throw Error(sys_error(path, "write failed"));
  FILE* raw = f.release();
  if (std::fclose(raw) != 0) throw Error(sys_error(path, "close failed"));
}

}  // namespace db
