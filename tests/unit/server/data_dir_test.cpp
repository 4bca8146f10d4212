#include "server/data_dir.h"

#include <gtest/gtest.h>

namespace db::server {
namespace {

TEST(DataDir, FollowsTheXdgBaseDirectoryRule) {
  EXPECT_EQ(default_data_dir("/data/xdg", "/home/u"), "/data/xdg/deepbatch");
  EXPECT_EQ(default_data_dir(nullptr, "/home/u"), "/home/u/.local/share/deepbatch");
  EXPECT_EQ(default_data_dir("relative/dir", "/home/u"), "/home/u/.local/share/deepbatch");  // invalid: ignored
  EXPECT_EQ(default_data_dir("", "/home/u"), "/home/u/.local/share/deepbatch");
  EXPECT_EQ(default_data_dir(nullptr, nullptr), "deepbatch-data");
  EXPECT_EQ(default_data_dir(nullptr, ""), "deepbatch-data");
}

}  // namespace
}  // namespace db::server
