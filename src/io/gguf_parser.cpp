#include "io/gguf_parser.h"

#include <bit>
#include <cstring>
#include <limits>
#include <string_view>

#include "tensor/panel_layout.h"
#include "util/error.h"

namespace db {

static_assert(std::endian::native == std::endian::little, "GGUF files are read in little-endian byte order");

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kMaxTypeId = static_cast<uint32_t>(GGUFType::FLOAT64);
// Smallest encodings, used to reject counts the remaining bytes cannot hold.
constexpr uint64_t kMinStringBytes = 8;                    // u64 length, empty text
constexpr uint64_t kMinKVBytes = kMinStringBytes + 4 + 1;  // key, type, one-byte value
constexpr uint64_t kMinTensorInfoBytes = kMinStringBytes + 4 + 4 + 8;  // name, n_dims, type, offset

uint64_t min_value_bytes(GGUFType t) {
  switch (t) {
    case GGUFType::UINT8: case GGUFType::INT8: case GGUFType::BOOL: return 1;
    case GGUFType::UINT16: case GGUFType::INT16: return 2;
    case GGUFType::UINT32: case GGUFType::INT32: case GGUFType::FLOAT32: return 4;
    case GGUFType::UINT64: case GGUFType::INT64: case GGUFType::FLOAT64: return 8;
    case GGUFType::STRING: return kMinStringBytes;
    case GGUFType::ARRAY: return 4 + 8;  // element type, count
  }
  return 1;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

// Printable rendering of up to four raw bytes (for the magic).
std::string show_bytes(const uint8_t* p, size_t n) {
  static const char* hex = "0123456789abcdef";
  std::string s = "\"";
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\') {
      s += static_cast<char>(p[i]);
    } else {
      s += "\\x";
      s += hex[p[i] >> 4];
      s += hex[p[i] & 15];
    }
  }
  return s + "\"";
}

}  // namespace

GGUFParser::GGUFParser(GGUFFile& out) : f_(out), data_(out.map_->data()), size_(out.map_->size()) {}

void GGUFParser::parse() {
  uint64_t n_tensors = 0, n_kv = 0;
  read_header(n_tensors, n_kv);
  read_metadata(n_kv);
  read_alignment();
  read_tensor_infos(n_tensors);
  place_data_section();
}

// --- primitive reads ---

void GGUFParser::fail(const std::string& where, const std::string& field, size_t at, const std::string& expected,
                      const std::string& got) const {
  std::string what = where.empty() ? field : where + ": " + field;
  throw Error(f_.path_ + ": " + what + " at byte " + std::to_string(at) + ": expected " + expected + ", got " + got);
}

void GGUFParser::fail_truncated(const std::string& where, const char* field, size_t need) const {
  fail(where, std::string("truncated file while reading ") + field, pos_, std::to_string(need) + " more bytes",
       std::to_string(size_ - pos_) + " (file size " + std::to_string(size_) + ")");
}

template <class T>
T GGUFParser::read_raw(const std::string& where, const char* field) {
  if (size_ - pos_ < sizeof(T)) fail_truncated(where, field, sizeof(T));
  T v;
  std::memcpy(&v, data_ + pos_, sizeof(T));
  pos_ += sizeof(T);
  return v;
}

uint32_t GGUFParser::read_u32(const std::string& where, const char* field) {
  return read_raw<uint32_t>(where, field);
}

uint64_t GGUFParser::read_u64(const std::string& where, const char* field) {
  return read_raw<uint64_t>(where, field);
}

uint64_t GGUFParser::read_count(const std::string& where, const char* field, uint64_t min_item_bytes) {
  size_t at = pos_;
  uint64_t n = read_u64(where, field);
  uint64_t fits = (size_ - pos_) / min_item_bytes;
  if (n > fits)
    fail(where, field, at,
         "at most " + std::to_string(fits) + " (what the " + std::to_string(size_ - pos_) +
             " remaining bytes can hold)",
         std::to_string(n));
  return n;
}

std::string_view GGUFParser::read_text(const std::string& where, const char* field) {
  size_t at = pos_;
  uint64_t len = read_u64(where, field);
  if (len > size_ - pos_)
    fail(where, std::string(field) + " length", at,
         "at most " + std::to_string(size_ - pos_) + " (bytes remaining in the file)", std::to_string(len));
  std::string_view text(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
  pos_ += static_cast<size_t>(len);
  return text;
}

std::string GGUFParser::read_string(const std::string& where, const char* field) {
  return std::string(read_text(where, field));
}

GGUFType GGUFParser::read_type(const std::string& where, const char* field) {
  size_t at = pos_;
  uint32_t id = read_u32(where, field);
  if (id > kMaxTypeId)
    fail(where, field, at, "a GGUF value type id 0.." + std::to_string(kMaxTypeId), std::to_string(id));
  return static_cast<GGUFType>(id);
}

// --- header and metadata ---

void GGUFParser::read_header(uint64_t& n_tensors, uint64_t& n_kv) {
  if (size_ < 4)
    fail("", "not a GGUF file: magic", 0, "4 bytes \"GGUF\"", "a file of " + std::to_string(size_) + " bytes");
  uint32_t magic = read_u32("", "magic");
  if (magic != kMagic) fail("", "not a GGUF file: magic", 0, "\"GGUF\"", show_bytes(data_, 4));

  uint32_t version = read_u32("", "version");
  if (version == 1)
    fail("", "unsupported GGUF version (version 1 used 32-bit counts; re-convert the model)", 4, "version 2 or 3",
         "1");
  if (version == 0x02000000u || version == 0x03000000u)
    fail("", "unsupported GGUF byte order", 4, "a little-endian file", "a big-endian file");
  if (version != 2 && version != 3) fail("", "unsupported GGUF version", 4, "version 2 or 3", std::to_string(version));
  f_.version_ = version;

  n_tensors = read_u64("", "tensor count");
  n_kv = read_u64("", "metadata key count");
  // Tensor infos follow the metadata, so both counts must fit in the remaining bytes together.
  uint64_t rem = size_ - pos_;
  if (n_kv > rem / kMinKVBytes)
    fail("", "metadata key count", 16, "at most " + std::to_string(rem / kMinKVBytes) + " (what the file can hold)",
         std::to_string(n_kv));
  if (n_tensors > rem / kMinTensorInfoBytes)
    fail("", "tensor count", 8, "at most " + std::to_string(rem / kMinTensorInfoBytes) + " (what the file can hold)",
         std::to_string(n_tensors));
}

void GGUFParser::read_metadata(uint64_t n_kv) {
  for (uint64_t i = 0; i < n_kv; ++i) {
    size_t at = pos_;
    std::string key = read_string("metadata key #" + std::to_string(i), "key");
    std::string where = "metadata key " + quote(key);
    if (f_.kv_.count(key)) fail(where, "duplicate key", at, "each key once", "a second definition");
    GGUFType type = read_type(where, "value type");
    read_value(f_.kv_[std::move(key)], type, where, 0);
  }
}

void GGUFParser::read_value(GGUFValue& out, GGUFType type, const std::string& where, int depth) {
  out.type = type;
  switch (type) {
    case GGUFType::UINT8: out.v.emplace<uint64_t>(read_raw<uint8_t>(where, "UINT8 value")); break;
    case GGUFType::INT8: out.v.emplace<int64_t>(read_raw<int8_t>(where, "INT8 value")); break;
    case GGUFType::UINT16: out.v.emplace<uint64_t>(read_raw<uint16_t>(where, "UINT16 value")); break;
    case GGUFType::INT16: out.v.emplace<int64_t>(read_raw<int16_t>(where, "INT16 value")); break;
    case GGUFType::UINT32: out.v.emplace<uint64_t>(read_raw<uint32_t>(where, "UINT32 value")); break;
    case GGUFType::INT32: out.v.emplace<int64_t>(read_raw<int32_t>(where, "INT32 value")); break;
    case GGUFType::UINT64: out.v.emplace<uint64_t>(read_raw<uint64_t>(where, "UINT64 value")); break;
    case GGUFType::INT64: out.v.emplace<int64_t>(read_raw<int64_t>(where, "INT64 value")); break;
    case GGUFType::FLOAT32: out.v.emplace<double>(read_raw<float>(where, "FLOAT32 value")); break;
    case GGUFType::FLOAT64: out.v.emplace<double>(read_raw<double>(where, "FLOAT64 value")); break;
    case GGUFType::BOOL: out.v.emplace<bool>(read_raw<uint8_t>(where, "BOOL value") != 0); break;
    case GGUFType::STRING: out.v.emplace<std::string>(read_text(where, "string")); break;
    case GGUFType::ARRAY: read_array(out, where, depth); break;
  }
}

void GGUFParser::read_array(GGUFValue& out, const std::string& where, int depth) {
  size_t at = pos_;
  if (depth >= GGUFLimits::kMaxArrayDepth)
    fail(where, "array nesting", at, "at most " + std::to_string(GGUFLimits::kMaxArrayDepth) + " levels",
         "a deeper array");
  out.array_type = read_type(where, "array element type");
  at = pos_;
  uint64_t n = read_count(where, "array element count", min_value_bytes(out.array_type));
  if (n > GGUFLimits::kMaxMetadataElements - elements_)
    fail(where, "array element count", at,
         "at most " + std::to_string(GGUFLimits::kMaxMetadataElements) + " metadata array elements in all",
         std::to_string(elements_ + n));
  elements_ += n;
  // Elements are filled in place; memory grows only as elements actually parse.
  auto& items = out.v.emplace<std::vector<GGUFValue>>();
  items.reserve(static_cast<size_t>(std::min<uint64_t>(n, 4096)));
  for (uint64_t i = 0; i < n; ++i) read_value(items.emplace_back(), out.array_type, where, depth + 1);
}

void GGUFParser::read_alignment() {
  auto it = f_.kv_.find("general.alignment");
  if (it == f_.kv_.end()) {
    f_.alignment_ = kGGUFDefaultAlignment;
    return;
  }
  const GGUFValue& v = it->second;
  const auto* u = std::get_if<uint64_t>(&v.v);
  const auto* s = std::get_if<int64_t>(&v.v);
  if (!u && !s)
    throw Error(f_.path_ + ": metadata key 'general.alignment': expected an integer (UINT32), got " +
                gguf_value_type_name(v));
  uint64_t a = u ? *u : (*s > 0 ? static_cast<uint64_t>(*s) : 0);
  if (a == 0 || !std::has_single_bit(a))
    throw Error(f_.path_ + ": metadata key 'general.alignment': expected a nonzero power of two, got " +
                (u ? std::to_string(*u) : std::to_string(*s)));
  f_.alignment_ = a;
}

// --- tensor infos and data ---

void GGUFParser::read_tensor_infos(uint64_t n_tensors) {
  // The count was bounded by the file size; reserve only a modest amount up front.
  f_.tensors_.reserve(static_cast<size_t>(std::min<uint64_t>(n_tensors, 4096)));
  for (uint64_t i = 0; i < n_tensors; ++i) read_tensor_info();
}

void GGUFParser::read_tensor_info() {
  size_t at = pos_;
  GGUFTensorInfo t;
  t.name = read_string("tensor info " + std::to_string(f_.tensors_.size()), "name");
  std::string where = "tensor " + quote(t.name);
  if (f_.tensor_index_.count(t.name)) fail(where, "duplicate tensor name", at, "each name once", "a second tensor");

  at = pos_;
  const size_t dims_at = at;
  uint32_t n_dims = read_u32(where, "n_dims");
  if (n_dims > GGUFLimits::kMaxDims)
    fail(where, "n_dims", at, "at most " + std::to_string(GGUFLimits::kMaxDims), std::to_string(n_dims));
  std::vector<uint64_t> ne(n_dims);
  uint64_t numel = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    at = pos_;
    ne[d] = read_u64(where, "dimension");
    if (ne[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(numel, ne[d], &numel) || numel > uint64_t{std::numeric_limits<int64_t>::max()})
      fail(where, "ne[" + std::to_string(d) + "]", at, "an element count below 2^63 in total",
           std::to_string(ne[d]));
  }

  at = pos_;
  uint32_t type_id = read_u32(where, "ggml type");
  if (type_id >= kGGUFPanelTypeBase) read_panel_type(where, at, type_id - kGGUFPanelTypeBase, n_dims, t);
  auto dtype = dtype_from_ggml(type_id);
  if (t.layout == TensorLayout::Rows && !dtype)
    fail(where, "ggml type", at, "a supported ggml type id", std::to_string(type_id));
  if (dtype) t.dtype = *dtype;

  at = pos_;
  t.offset = read_u64(where, "data offset");
  if (t.offset % f_.alignment_ != 0)
    fail(where, "data offset", at, "a multiple of the alignment " + std::to_string(f_.alignment_),
         std::to_string(t.offset));

  uint64_t cols = n_dims ? ne[0] : 1;
  uint64_t block = static_cast<uint64_t>(block_size(t.dtype));
  if (cols % block != 0)
    fail(where, "ne[0] (row length)", dims_at + 4,
         "a multiple of the " + dtype_name(t.dtype) + " block size " + std::to_string(block), std::to_string(cols));
  uint64_t rows = cols == 0 ? 0 : numel / cols;
  uint64_t row_nbytes = 0, nbytes = 0;
  if (__builtin_mul_overflow(cols / block, uint64_t{block_bytes(t.dtype)}, &row_nbytes) ||
      __builtin_mul_overflow(row_nbytes, rows, &nbytes) || nbytes > std::numeric_limits<size_t>::max())
    fail(where, "data size", dims_at, "a size below 2^64 bytes", "an overflowing size");
  t.nbytes = static_cast<size_t>(nbytes);
  if (t.layout == TensorLayout::Panels16) {  // n_dims >= 2: outer matrices of ne[1] rows each
    if (cols > (uint64_t{1} << 40))
      fail(where, "ne[0] (row length)", dims_at + 4, "at most 2^40 for a pre-packed matrix", std::to_string(cols));
    const uint64_t matrix_rows = ne[1], matrices = matrix_rows == 0 ? 0 : rows / matrix_rows;
    const unsigned __int128 bytes = static_cast<unsigned __int128>(matrices) *
                                    static_cast<uint64_t>(panel_group_bytes(t.dtype, static_cast<int64_t>(cols))) *
                                    ((matrix_rows + kPanelRows - 1) / kPanelRows);
    if (bytes > std::numeric_limits<size_t>::max() / 2)
      fail(where, "data size", dims_at, "a size below 2^63 bytes", "an overflowing size");
    t.nbytes = static_cast<size_t>(bytes);
  }

  t.shape.assign(ne.rbegin(), ne.rend());  // GGUF lists ne[] innermost first
  f_.tensor_index_.emplace(t.name, f_.tensors_.size());
  f_.tensors_.push_back(std::move(t));
}

void GGUFParser::read_panel_type(const std::string& where, size_t at, uint32_t ggml_id, uint32_t n_dims,
                                 GGUFTensorInfo& t) {
  const auto dtype = dtype_from_ggml(ggml_id);
  if (!dtype || !has_panel_layout(*dtype) || n_dims < 2)
    fail(where, "ggml type", at, "a supported ggml type id (or a pre-packed matrix of one)",
         std::to_string(kGGUFPanelTypeBase + ggml_id));
  const GGUFValue* version = f_.find(kGGUFPanelVersionKey);
  const auto* v = version ? std::get_if<uint64_t>(&version->v) : nullptr;
  if (v == nullptr || *v != kPanelLayoutVersion)
    fail(where, "pre-packed " + dtype_name(*dtype) + " matrix", at,
         std::string("the panel layout version ") + std::to_string(kPanelLayoutVersion) +
             " of this build (key " + kGGUFPanelVersionKey + ")",
         (v ? "version " + std::to_string(*v) : std::string("no version key")) +
             ": convert the original model file again with `deepbatch convert --pack`");
  t.dtype = *dtype;
  t.layout = TensorLayout::Panels16;
}

void GGUFParser::place_data_section() {
  uint64_t data_offset = gguf_align_up(pos_, f_.alignment_);  // pos_ <= size_, alignment is a power of two
  f_.data_offset_ = static_cast<size_t>(std::min<uint64_t>(data_offset, size_));
  for (const auto& t : f_.tensors_) {
    uint64_t avail = data_offset <= size_ ? size_ - data_offset : 0;
    if (data_offset > size_ || t.offset > avail || t.nbytes > avail - t.offset) {
      unsigned __int128 end = static_cast<unsigned __int128>(data_offset) + t.offset + t.nbytes;
      std::string got = end > std::numeric_limits<uint64_t>::max()
                            ? std::string("an end beyond 2^64")
                            : "bytes [" + std::to_string(data_offset + t.offset) + ", " +
                                  std::to_string(static_cast<uint64_t>(end)) + ")";
      throw Error(f_.path_ + ": tensor " + quote(t.name) + ": data out of range: expected " +
                  std::to_string(t.nbytes) + " bytes of " + dtype_name(t.dtype) +
                  " data inside the file of " + std::to_string(size_) + " bytes, got " + got);
    }
  }
}

}  // namespace db
