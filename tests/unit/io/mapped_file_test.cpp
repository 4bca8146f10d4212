#include "io/mapped_file.h"

#include <gtest/gtest.h>

#include "io_test_util.h"

namespace db {
namespace {

using test::expect_error;
using test::ScratchDir;

TEST(MappedFile, MapsTheWholeFile) {
  ScratchDir dir{"io"};
  std::vector<uint8_t> bytes(10000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  test::write_bytes(dir.file("a.bin"), bytes);

  auto m = MappedFile::open(dir.file("a.bin"));
  EXPECT_EQ(m->path(), dir.file("a.bin"));
  ASSERT_EQ(m->size(), bytes.size());
  EXPECT_EQ(std::vector<uint8_t>(m->data(), m->data() + m->size()), bytes);
  m->prefetch();
}

TEST(MappedFile, EmptyFileMapsToNoBytes) {
  ScratchDir dir{"io"};
  test::write_bytes(dir.file("empty"), {});
  auto m = MappedFile::open(dir.file("empty"));
  EXPECT_EQ(m->size(), 0u);
  m->prefetch();
}

TEST(MappedFile, MissingFileNamesPathAndReason) {
  ScratchDir dir{"io"};
  std::string path = dir.file("nope.gguf");
  expect_error([&] { MappedFile::open(path); }, {path, "cannot open", "No such file"});
}

TEST(MappedFile, DirectoryIsRejected) {
  ScratchDir dir{"io"};
  expect_error([&] { MappedFile::open(dir.path().string()); }, {dir.path().string(), "directory"});
}

}  // namespace
}  // namespace db
