// The plan of a batch job against its output file: requests with a record are
// skipped, bad lines are matched to their records by (code, custom_id) counts, a
// torn last line is cut, and a file part with its own line numbers plans alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "batch/batch_input.h"
#include "batch/batch_plan.h"
#include "batch/batch_record.h"

namespace db::batch {
namespace {

namespace fs = std::filesystem;

std::string request(const std::string& id) {
  return R"({"custom_id": ")" + id + R"(", "method": "POST", "url": "/v1/completions", "body": {"prompt": "hi"}})";
}

class BatchPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("deepbatch_plan_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    output_ = (dir_ / "out.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write_output(const std::string& text) {
    std::ofstream out(output_, std::ios::binary);
    out << text;
  }
  BatchPlan plan(const std::string& input) {
    std::istringstream in(input);
    return plan_batch(parse_batch_input(in), output_);
  }
  fs::path dir_;
  std::string output_;
};

// a (1), bad JSON (2), a again (3), b (4), a third a (5), no custom_id (6)
const std::string kInput = request("a") + "\n{oops\n" + request("a") + "\n" + request("b") + "\n" + request("a") +
                           "\n" + R"({"method": "POST"})" + "\n";

TEST_F(BatchPlanTest, WithoutOutputEverythingIsToDo) {
  const BatchPlan p = plan(kInput);
  EXPECT_EQ(p.skipped, 0u);
  ASSERT_EQ(p.pending.size(), 2u);
  EXPECT_EQ(p.input.items[p.pending[0]].line_no, 1u);
  EXPECT_EQ(p.input.items[p.pending[1]].line_no, 4u);
  ASSERT_EQ(p.unrecorded_errors.size(), 4u);
  std::vector<std::string> codes;
  for (size_t i : p.unrecorded_errors) codes.push_back(p.input.errors[i].code);
  EXPECT_EQ(codes, (std::vector<std::string>{kInvalidJson, kDuplicateCustomId, kDuplicateCustomId, kMissingCustomId}));
}

TEST_F(BatchPlanTest, RecordsInTheOutputAreMatchedByCount) {
  // a's success, one of the two duplicate records, the bad JSON's record, and a torn line.
  write_output(success_record("a", {{"object", "text_completion"}}) + "\n" +
               error_record(std::string("a"), kDuplicateCustomId, "line 3: repeated") + "\n" +
               error_record(std::nullopt, kInvalidJson, "line 2: bad") + "\n" + R"({"custom_id": "b", "resp)");
  const BatchPlan p = plan(kInput);
  EXPECT_GT(p.journal.truncated_bytes, 0u);
  EXPECT_EQ(p.skipped, 3u);
  ASSERT_EQ(p.pending.size(), 1u);
  EXPECT_EQ(p.input.items[p.pending[0]].custom_id, "b");
  ASSERT_EQ(p.unrecorded_errors.size(), 2u);
  EXPECT_EQ(p.input.errors[p.unrecorded_errors[0]].line_no, 5u);  // the second duplicate still lacks its record
  EXPECT_EQ(p.input.errors[p.unrecorded_errors[1]].code, kMissingCustomId);
}

TEST_F(BatchPlanTest, NumberedLinesKeepTheirNumbers) {
  const BatchInput part = parse_numbered_lines({{7, request("x")}, {12, "{oops"}, {13, "  "}, {20, request("x")}});
  EXPECT_EQ(part.lines, 3u);
  ASSERT_EQ(part.items.size(), 1u);
  EXPECT_EQ(part.items[0].line_no, 7u);
  ASSERT_EQ(part.errors.size(), 2u);
  EXPECT_EQ(part.errors[0].line_no, 12u);
  EXPECT_EQ(part.errors[0].message.rfind("line 12: ", 0), 0u) << part.errors[0].message;
  EXPECT_EQ(part.errors[1].code, kDuplicateCustomId);
  EXPECT_EQ(part.errors[1].message.rfind("line 20: ", 0), 0u) << part.errors[1].message;
}

}  // namespace
}  // namespace db::batch
