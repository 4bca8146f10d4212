// Files and batches remember the tenant that created them across a reload; metadata
// written before tenants existed belongs to the default tenant "".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "batch_api_test_util.h"
#include "server/batch_api/atomic_file.h"
#include "server/batch_api/batch_state.h"
#include "server/batch_api/batch_store.h"
#include "server/batch_api/file_store.h"

namespace db::server {
namespace {

using test::ScratchDir;

TEST(Ownership, FileOwnerSurvivesAReloadAndStaysOutOfTheOpenAIObject) {
  ScratchDir dir("file_owner");
  std::string owned, unowned;
  {
    FileStore store(dir.file("files"));
    owned = store.create("a.jsonl", "batch", "A", "", "team-a").id;
    unowned = store.create("b.jsonl", "batch", "B").id;
  }
  FileStore reloaded(dir.file("files"));
  EXPECT_EQ(reloaded.get(owned)->owner, "team-a");
  EXPECT_EQ(reloaded.get(unowned)->owner, "");
  EXPECT_FALSE(file_json(*reloaded.get(owned)).contains("owner"));
}

TEST(Ownership, FileMetadataWithoutAnOwnerIsTheDefaultTenants) {
  ScratchDir dir("file_legacy");
  std::string id;
  {
    FileStore store(dir.file("files"));
    id = store.create("a.jsonl", "batch", "A", "", "team-a").id;
  }
  const std::string meta = dir.file("files/" + id + ".json");
  nlohmann::json j = nlohmann::json::parse(read_whole_file(meta));
  j.erase("owner");
  write_file_atomic(meta, j.dump());
  FileStore reloaded(dir.file("files"));
  ASSERT_TRUE(reloaded.get(id).has_value());
  EXPECT_EQ(reloaded.get(id)->owner, "");
}

TEST(Ownership, BatchOwnerIsStoredAndOldRecordsHaveNone) {
  BatchRecord b;
  b.id = "batch_0123";
  b.endpoint = "/v1/completions";
  b.input_file_id = "file-1";
  b.owner = "team-b";
  const std::string stored = batch_to_stored(b);
  EXPECT_EQ(batch_from_stored(stored).owner, "team-b");
  EXPECT_FALSE(batch_json(b).contains("owner"));
  nlohmann::json old = nlohmann::json::parse(stored);
  old.erase("owner");
  EXPECT_EQ(batch_from_stored(old.dump()).owner, "");
}

}  // namespace
}  // namespace db::server
