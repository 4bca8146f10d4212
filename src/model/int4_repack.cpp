#include "model/int4_repack.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/quant_blocks.h"
#include "util/error.h"
#include "util/fp16.h"

namespace db {

namespace {

// AWQ's nibble position of output 8j + c within word j: the inverse of the
// packing order {0, 2, 4, 6, 1, 3, 5, 7}.
constexpr int kAwqNibbleOf[8] = {0, 4, 1, 5, 2, 6, 3, 7};

std::string int4_shape_str(const std::vector<int64_t>& s) {
  TensorView v;
  v.shape = s;
  return v.shape_str();
}

void int4_expect(const TensorView& t, const char* name, DType dtype, const std::vector<int64_t>& shape,
                 const std::string& what) {
  if (t.dtype != dtype)
    throw Error(what + name + "': expected " + dtype_name(dtype) + ", got " + dtype_name(t.dtype));
  if (t.shape != shape)
    throw Error(what + name + "': expected shape " + int4_shape_str(shape) + ", got " + t.shape_str());
}

int32_t int4_load_i32(const TensorView& t, int64_t k) {
  int32_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(t.data) + 4 * k, sizeof v);
  return v;
}

uint16_t int4_load_u16(const TensorView& t, int64_t k) {
  uint16_t v;
  std::memcpy(&v, static_cast<const uint8_t*>(t.data) + 2 * k, sizeof v);
  return v;
}

// Random access to one layer's codes, zero points, scales and groups.
class Int4Reader {
 public:
  Int4Reader(const CheckpointQuant& q, const Int4Layer& t, const std::string& what) : q_(q), t_(t) {
    awq_ = q.method == CheckpointQuantMethod::Awq;
    if (t.qweight.shape.size() != 2)
      throw Error(what + "qweight': expected a matrix, got shape " + t.qweight.shape_str());
    in_ = awq_ ? t.qweight.shape[0] : t.qweight.shape[0] * 8;
    out_ = awq_ ? t.qweight.shape[1] * 8 : t.qweight.shape[1];
    const int64_t g = q.group_size;
    if (awq_ && in_ % g != 0)
      throw Error(what + "qweight': expected an input count divisible by the group size " + std::to_string(g) +
                  ", got " + std::to_string(in_));
    groups_ = (in_ + g - 1) / g;
    int4_expect(t.qweight, "qweight", DType::I32, t.qweight.shape, what);
    int4_expect(t.qzeros, "qzeros", DType::I32, {groups_, out_ / 8}, what);
    if (out_ % 8 != 0)
      throw Error(what + "qzeros': expected an output count divisible by 8, got " + std::to_string(out_));
    int4_expect(t.scales, "scales", DType::F16, {groups_, out_}, what);
    group_of_.resize(static_cast<size_t>(in_));
    for (int64_t i = 0; i < in_; ++i) group_of_[static_cast<size_t>(i)] = static_cast<int32_t>(i / g);
    if (t.g_idx) {
      int4_expect(*t.g_idx, "g_idx", DType::I32, {in_}, what);
      for (int64_t i = 0; i < in_; ++i) {
        const int32_t gi = int4_load_i32(*t.g_idx, i);
        if (gi < 0 || gi >= groups_)
          throw Error(what + "g_idx': expected groups in [0, " + std::to_string(groups_) + "), got " +
                      std::to_string(gi) + " at input " + std::to_string(i));
        group_of_[static_cast<size_t>(i)] = gi;
      }
    }
  }

  int64_t in() const { return in_; }
  int64_t out() const { return out_; }
  int32_t group(int64_t i) const { return group_of_[static_cast<size_t>(i)]; }

  int code(int64_t i, int64_t o) const {
    if (awq_) return nibble(int4_load_i32(t_.qweight, i * (out_ / 8) + o / 8), kAwqNibbleOf[o % 8]);
    return nibble(int4_load_i32(t_.qweight, (i / 8) * out_ + o), static_cast<int>(i % 8));
  }
  int zero(int64_t g, int64_t o) const {
    const int32_t w = int4_load_i32(t_.qzeros, g * (out_ / 8) + o / 8);
    const int z = nibble(w, awq_ ? kAwqNibbleOf[o % 8] : static_cast<int>(o % 8));
    return q_.zero_plus_one ? z + 1 : z;
  }
  uint16_t scale_bits(int64_t g, int64_t o) const { return int4_load_u16(t_.scales, g * out_ + o); }

  // True when every block of 32 inputs lies in one group (always without desc_act).
  bool blocks_in_one_group() const {
    for (int64_t b = 0; b + kernels::kQK <= in_; b += kernels::kQK)
      for (int64_t i = b + 1; i < b + kernels::kQK; ++i)
        if (group(i) != group(b)) return false;
    return true;
  }

 private:
  static int nibble(int32_t w, int k) { return static_cast<int>((static_cast<uint32_t>(w) >> (4 * k)) & 0xFu); }

  const CheckpointQuant& q_;
  const Int4Layer& t_;
  bool awq_ = false;
  int64_t in_ = 0, out_ = 0, groups_ = 0;
  std::vector<int32_t> group_of_;
};

void int4_store_u16(uint8_t* dst, uint16_t v) { std::memcpy(dst, &v, sizeof v); }

// Output row o as Q4_1 blocks, straight from the codes (every 32-block in one group).
void int4_row_q4_1(const Int4Reader& r, int64_t o, uint8_t* dst) {
  auto* blocks = reinterpret_cast<kernels::BlockQ4_1*>(dst);
  for (int64_t b = 0; b < r.in() / kernels::kQK; ++b) {
    const int64_t i0 = b * kernels::kQK;
    const int64_t g = r.group(i0);
    const uint16_t s = r.scale_bits(g, o);
    kernels::BlockQ4_1& blk = blocks[b];
    int4_store_u16(blk.d, s);
    int4_store_u16(blk.m, f32_to_fp16(-static_cast<float>(r.zero(g, o)) * fp16_to_f32(s)));
    for (int j = 0; j < kernels::kQK / 2; ++j)
      blk.qs[j] = static_cast<uint8_t>(r.code(i0 + j, o) | (r.code(i0 + j + kernels::kQK / 2, o) << 4));
  }
}

// Output row o dequantized: (q - z) * s, exact in float32.
void int4_row_floats(const Int4Reader& r, int64_t o, float* dst) {
  for (int64_t i = 0; i < r.in(); ++i) {
    const int64_t g = r.group(i);
    dst[i] = static_cast<float>(r.code(i, o) - r.zero(g, o)) * fp16_to_f32(r.scale_bits(g, o));
  }
}

}  // namespace

Int4Result repack_int4(const CheckpointQuant& q, const Int4Layer& t, std::optional<DType> target, ThreadPool* pool,
                       const std::string& what) {
  if (q.method != CheckpointQuantMethod::Awq && q.method != CheckpointQuantMethod::Gptq)
    throw Error(what + "qweight': expected an AWQ or GPTQ layer, got quant_method " + quant_method_name(q.method));
  if (q.bits != 4) throw Error(what + "qweight': expected 4-bit codes, got " + std::to_string(q.bits) + " bits");
  const Int4Reader r(q, t, what);
  const bool want_q4_1 = !target || *target == DType::Q4_1;
  const bool direct = want_q4_1 && r.in() % kernels::kQK == 0 && r.blocks_in_one_group();
  const DType type = direct ? DType::Q4_1 : converted_row_type(target && !want_q4_1 ? *target : DType::Q8_0, r.in());
  Int4Result res{ConvertedMatrix(type, r.out(), r.in()), direct ? Int4Path::Q4_1Direct : Int4Path::ThroughFloats};
  const ConvertedMatrix& m = res.matrix;
  auto rows = [&](int64_t begin, int64_t end) {
    std::vector<float> row(direct ? 0 : static_cast<size_t>(r.in()));
    for (int64_t o = begin; o < end; ++o) {
      if (direct) {
        int4_row_q4_1(r, o, m.row(o));
      } else {
        int4_row_floats(r, o, row.data());
        store_float_row(type, row.data(), m.row(o), r.in());
      }
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(r.out(), rows);
  } else {
    rows(0, r.out());
  }
  return res;
}

}  // namespace db
