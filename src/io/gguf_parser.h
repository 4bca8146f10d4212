// Internal: decodes the GGUF header, metadata and tensor infos of a mapped file
// into a GGUFFile, validating every length, count, offset and size against the
// bytes that remain so that no corrupt value can read out of bounds or trigger
// an oversized allocation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "io/gguf.h"

namespace db {

// Limits that turn implausible (corrupt) files into errors instead of huge allocations.
struct GGUFLimits {
  static constexpr int kMaxArrayDepth = 16;                      // nesting levels of metadata arrays
  static constexpr uint64_t kMaxMetadataElements = uint64_t{1} << 23;  // array elements over all keys
  static constexpr uint32_t kMaxDims = 4;                         // GGML_MAX_DIMS
};

class GGUFParser {
 public:
  // `out.map_` and `out.path_` must be set; fills every other field or throws db::Error.
  explicit GGUFParser(GGUFFile& out);
  void parse();

 private:
  void read_header(uint64_t& n_tensors, uint64_t& n_kv);
  void read_metadata(uint64_t n_kv);
  void read_alignment();
  void read_tensor_infos(uint64_t n_tensors);
  void read_tensor_info();
  void place_data_section();
  // A pre-packed tensor's type (kGGUFPanelTypeBase + ggml_id): sets t's dtype and
  // layout, or fails when the type has no panel layout or the file's panel layout
  // version is not this build's.
  void read_panel_type(const std::string& where, size_t at, uint32_t ggml_id, uint32_t n_dims, GGUFTensorInfo& t);

  GGUFType read_type(const std::string& where, const char* field);
  // Values are decoded in place (no temporaries: vocabularies hold ~10^5 strings).
  void read_value(GGUFValue& out, GGUFType type, const std::string& where, int depth);
  void read_array(GGUFValue& out, const std::string& where, int depth);
  // A length-prefixed string: a view into the mapping, valid while the mapping lives.
  std::string_view read_text(const std::string& where, const char* field);
  std::string read_string(const std::string& where, const char* field);
  // Reads a count of items each at least `min_item_bytes` long; rejects counts the file cannot hold.
  uint64_t read_count(const std::string& where, const char* field, uint64_t min_item_bytes);
  uint32_t read_u32(const std::string& where, const char* field);
  uint64_t read_u64(const std::string& where, const char* field);
  template <class T>
  T read_raw(const std::string& where, const char* field);

  // Throws "<path>: <where>: <field> at byte <at>: expected X, got Y".
  [[noreturn]] void fail(const std::string& where, const std::string& field, size_t at, const std::string& expected,
                         const std::string& got) const;
  [[noreturn]] void fail_truncated(const std::string& where, const char* field, size_t need) const;

  GGUFFile& f_;
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  uint64_t elements_ = 0;  // metadata array elements read so far
};

}  // namespace db
