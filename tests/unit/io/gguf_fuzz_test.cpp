// Deterministic fuzzing of the reader with corrupted copies of the real model's
// header: random truncations and random byte changes. Each variant must either
// open (with every tensor inside the file) or throw db::Error; nothing else.
//
// The copies are sparse files: a header followed by a hole up to the full data
// size, so an intact header opens and no tensor data is written. Two headers are
// used: the real one verbatim (a few MB, dominated by the vocabulary, so only a
// few variants), and one derived from it that keeps every real key and tensor
// info but cuts each metadata array to its first elements (many variants).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "default_model.h"
#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "io_test_util.h"

namespace db {
namespace {

constexpr int kVerbatimIterations = 16;
constexpr int kDerivedIterations = 300;
constexpr size_t kKeptArrayElements = 500;

// Writes `header` and extends the file to `size` bytes with a hole (or cuts it there).
void write_sparse(const std::string& path, const std::vector<uint8_t>& header, size_t size) {
  auto end = header.begin() + static_cast<std::ptrdiff_t>(std::min(size, header.size()));
  test::write_bytes(path, std::vector<uint8_t>(header.begin(), end));
  std::filesystem::resize_file(path, size);
}

enum class Outcome { kOpened, kRejected };

Outcome open_checked(const std::string& path, const std::string& variant) {
  try {
    auto f = GGUFFile::open(path);
    const uint8_t* begin = f->mapping().data();
    const uint8_t* end = begin + f->mapping().size();
    for (const auto& info : f->tensor_infos()) {
      auto v = f->tensor(info.name);
      const auto* p = static_cast<const uint8_t*>(v.data);
      EXPECT_TRUE(p >= begin && p <= end && v.nbytes() <= static_cast<size_t>(end - p)) << variant << info.name;
    }
    return Outcome::kOpened;
  } catch (const db::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << variant << ": " << e.what();
    return Outcome::kRejected;
  }
}

struct Counts {
  int opened = 0, rejected = 0;
};

// `header` is everything before the data section; the intact file is `full_size` bytes.
Counts fuzz(const std::vector<uint8_t>& header, size_t full_size, int iterations, uint64_t seed) {
  const size_t infos_start = test::find_bytes(header, "token_embd.weight") - 8;  // first tensor info
  test::ScratchDir dir{"io"};
  const std::string path = dir.file("fuzz.gguf");
  write_sparse(path, header, full_size);
  EXPECT_EQ(open_checked(path, "intact"), Outcome::kOpened);

  std::mt19937_64 rng(seed);
  auto uniform = [&](size_t lo, size_t hi) { return std::uniform_int_distribution<size_t>(lo, hi - 1)(rng); };
  Counts counts;
  for (int it = 0; it < iterations; ++it) {
    std::string variant;
    if (it % 2 == 0) {
      // Truncation: half inside the header, half inside the data.
      size_t cut = it % 4 == 0 ? uniform(0, header.size()) : uniform(header.size(), full_size);
      variant = "truncated at " + std::to_string(cut) + ": ";
      write_sparse(path, header, cut);
    } else {
      // 1-4 changed bytes: near the start, among the tensor infos, or anywhere in the header.
      std::vector<uint8_t> bad = header;
      int n = static_cast<int>(uniform(1, 5));
      variant = "bytes changed at";
      for (int k = 0; k < n; ++k) {
        size_t region = uniform(0, 3);
        size_t pos = region == 0   ? uniform(0, std::min<size_t>(4096, header.size()))
                     : region == 1 ? uniform(infos_start, header.size())
                                   : uniform(0, header.size());
        bad[pos] ^= static_cast<uint8_t>(uniform(1, 256));
        variant += ' ';
        variant += std::to_string(pos);
      }
      variant += ": ";
      write_sparse(path, bad, full_size);
    }
    (open_checked(path, variant) == Outcome::kOpened ? counts.opened : counts.rejected)++;
  }
  return counts;
}

// Every key of `real` (arrays cut to kKeptArrayElements) and every tensor info, as a new header.
std::vector<uint8_t> derived_header(const GGUFFile& real, uint64_t& data_size) {
  GGUFWriter w(real.alignment());
  for (const auto& [key, value] : real.metadata()) {
    if (key == "general.alignment") continue;  // written by the writer itself
    GGUFValue v = value;
    if (auto* items = std::get_if<std::vector<GGUFValue>>(&v.v); items && items->size() > kKeptArrayElements)
      items->resize(kKeptArrayElements);
    w.add_value(key, v);
  }
  for (const auto& t : real.tensor_infos()) w.add_zero_tensor(t.name, t.dtype, t.shape);
  data_size = w.data_size();
  return w.header_bytes();
}

class GGUFFuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test::default_model_present());
    real_ = GGUFFile::open(test::kDefaultModelPath);
  }
  std::unique_ptr<GGUFFile> real_;
};

TEST_F(GGUFFuzz, VerbatimRealHeader) {
  const size_t full_size = std::filesystem::file_size(test::kDefaultModelPath);
  const std::vector<uint8_t> header = test::read_prefix(test::kDefaultModelPath, real_->data_offset());
  ASSERT_EQ(header.size(), real_->data_offset());
  Counts c = fuzz(header, full_size, kVerbatimIterations, 7);
  EXPECT_GE(c.rejected, kVerbatimIterations / 2);  // every truncation is rejected
}

TEST_F(GGUFFuzz, DerivedRealHeader) {
  uint64_t data_size = 0;
  const std::vector<uint8_t> header = derived_header(*real_, data_size);
  Counts c = fuzz(header, header.size() + data_size, kDerivedIterations, 20240601);
  // Both outcomes occur, so the corruption is neither always fatal nor always harmless.
  EXPECT_GT(c.opened, 0);
  EXPECT_GE(c.rejected, kDerivedIterations / 2);
  std::printf("fuzz: %d variants opened, %d rejected\n", c.opened, c.rejected);
}

}  // namespace
}  // namespace db
