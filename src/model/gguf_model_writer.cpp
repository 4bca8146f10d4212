#include "model/gguf_model_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "io/mapped_range.h"
#include "kernels/packed_weights.h"
#include "model/gguf_pack.h"
#include "tensor/panel_layout.h"
#include "util/error.h"
#include "util/fd_write.h"

namespace db {

namespace {

// Pre-packed tensors start on page boundaries: whole pages per matrix, so a
// loader that unpacks one can hand its pages back (io/mapped_range.h).
constexpr uint64_t kPackedAlignment = 4096;

}  // namespace

GgufModelWriter::GgufModelWriter(std::string out_path, std::optional<IsaLevel> level, ThreadPool* pool,
                                 int64_t chunk_bytes)
    : path_(std::move(out_path)),
      tmp_path_(path_ + ".tmp"),
      level_(level),
      pool_(pool),
      chunk_bytes_(chunk_bytes),
      w_(level ? kPackedAlignment : kGGUFDefaultAlignment) {
  if (level_) {
    w_.add_uint32(kGGUFPanelVersionKey, kPanelLayoutVersion);
    w_.add_string(kGGUFPanelLevelKey, isa_name(*level_));
  }
}

GgufModelWriter::~GgufModelWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (begun_ && !finished_) std::remove(tmp_path_.c_str());
}

size_t GgufModelWriter::declare(const std::string& name, size_t rank, int64_t parts) {
  DB_CHECK(!begun_, "GgufModelWriter::declare after the first write");
  DB_CHECK(parts >= 1 && (parts == 1 || rank == 3), "GgufModelWriter::declare: a stack of parts is {parts, rows, cols}");
  declared_.push_back({name, rank, parts});
  return declared_.size() - 1;
}

bool GgufModelWriter::would_pack(const std::string& name, DType dtype, size_t rank) const {
  return level_ && rank >= 2 && loader_multiplies_whole(name) && kernels::prefers_packed(dtype, *level_);
}

void GgufModelWriter::begin() {
  // The header's size depends on the names, ranks and metadata, not on the
  // types or offsets (fixed-width fields): F32 stands in for the types to come.
  GGUFWriter sizing = w_;
  for (const Declared& d : declared_) sizing.reserve_tensor(d.name, DType::F32, std::vector<int64_t>(d.rank, 1));
  header_size_ = sizing.header_bytes().size();
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd_ < 0) throw Error(sys_error(tmp_path_, "cannot create file"));
  begun_ = true;
}

void GgufModelWriter::write_at(uint64_t offset, const void* p, size_t n) {
  write_all_at(fd_, std::string_view(static_cast<const char*>(p), n), offset, tmp_path_);
}

void GgufModelWriter::write(size_t index, const TensorView& t, int64_t part, bool release_mapped) {
  if (!begun_) begin();
  DB_CHECK(index == next_ && index < declared_.size(), "GgufModelWriter::write: tensors out of declaration order");
  const Declared& d = declared_[index];
  const std::string where = path_ + ": tensor '" + d.name + "'";
  const size_t part_rank = d.parts == 1 ? d.rank : 2;
  if (t.shape.size() != part_rank || t.layout != TensorLayout::Rows)
    throw Error(where + ": expected rows of " + std::to_string(part_rank) + " dimensions, got " + t.shape_str() +
                (t.layout == TensorLayout::Rows ? "" : " pre-packed"));
  if (part != cur_.next_part) throw Error(where + ": expected part " + std::to_string(cur_.next_part) + " next");
  if (part == 0) {
    std::vector<int64_t> shape = t.shape;
    if (d.parts > 1) shape.insert(shape.begin(), d.parts);
    cur_.dtype = t.dtype;
    cur_.part_shape = t.shape;
    cur_.packed = would_pack(d.name, t.dtype, shape.size());
    cur_.offset = w_.reserve_tensor(d.name, t.dtype, shape, cur_.packed ? TensorLayout::Panels16 : TensorLayout::Rows);
    const int64_t rows = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
    cur_.part_bytes = cur_.packed ? static_cast<uint64_t>(panel_matrix_bytes(t.dtype, rows, t.cols())) *
                                        static_cast<uint64_t>(t.rows() / std::max<int64_t>(rows, 1))
                                  : t.nbytes();
  } else if (t.dtype != cur_.dtype || t.shape != cur_.part_shape) {
    throw Error(where + ": part " + std::to_string(part) + " is " + dtype_name(t.dtype) + " " + t.shape_str() +
                ", the parts before it " + dtype_name(cur_.dtype) + " " +
                TensorView{cur_.dtype, cur_.part_shape, nullptr}.shape_str());
  }
  const uint64_t at = header_size_ + cur_.offset + static_cast<uint64_t>(part) * cur_.part_bytes;
  // Rows go out chunk_bytes_ at a time (a whole number of panel groups), so a
  // large matrix (an output head of 1.85 GB) never has more than one chunk of
  // its mapped pages or of its packed copy in memory.
  const int64_t cols = t.cols(), rows = t.shape.size() >= 2 ? t.shape[t.shape.size() - 2] : t.rows();
  const auto row_size = static_cast<int64_t>(t.row_nbytes());
  const int64_t chunk =
      std::max<int64_t>(kPanelRows, chunk_bytes_ / std::max<int64_t>(row_size, 1) / kPanelRows * kPanelRows);
  const auto* src = static_cast<const uint8_t*>(t.data);
  std::vector<uint8_t> buf;
  for (int64_t m = 0; rows > 0 && m < t.rows() / rows; ++m) {  // each {rows, cols} matrix of a stack
    const uint64_t matrix_at = at + static_cast<uint64_t>(m) * static_cast<uint64_t>(
                                         cur_.packed ? panel_matrix_bytes(t.dtype, rows, cols) : rows * row_size);
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t n = std::min(chunk, rows - r0);
      const uint8_t* p = src + static_cast<size_t>((m * rows + r0) * row_size);
      if (cur_.packed) {
        buf.resize(static_cast<size_t>(panel_matrix_bytes(t.dtype, n, cols)));
        kernels::pack_matrix(TensorView{t.dtype, {n, cols}, p}, buf.data(), pool_);
        write_at(matrix_at + static_cast<uint64_t>(r0 / kPanelRows * panel_group_bytes(t.dtype, cols)), buf.data(),
                 buf.size());
      } else {
        write_at(matrix_at + static_cast<uint64_t>(r0 * row_size), p, static_cast<size_t>(n * row_size));
      }
      if (release_mapped) release_mapped_range(p, static_cast<size_t>(n * row_size));
    }
  }
  if (++cur_.next_part < d.parts) return;
  ++(cur_.packed ? report_.packed : report_.rows);
  cur_ = Current{};
  ++next_;
}

GgufModelWriter::Report GgufModelWriter::finish() {
  if (!begun_) begin();
  if (next_ != declared_.size())
    throw Error(path_ + ": tensor '" + declared_[next_].name + "' was declared but never written");
  const std::vector<uint8_t> header = w_.header_bytes();
  DB_CHECK(header.size() == header_size_, "GgufModelWriter: the header's size changed with the tensor types");
  write_at(0, header.data(), header.size());
  report_.bytes = header.size() + w_.data_size();
  const int fd = fd_;
  fd_ = -1;
  const bool sized = ::ftruncate(fd, static_cast<off_t>(report_.bytes)) == 0;
  if (::close(fd) != 0 || !sized) throw Error(sys_error(tmp_path_, "write failed"));
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const std::string what = "cannot rename it to " + path_;
    throw Error(sys_error(tmp_path_, what.c_str()));
  }
  finished_ = true;
  return report_;
}

}  // namespace db
