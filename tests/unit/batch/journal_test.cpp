// The output file as a journal: recovery after a crash (torn last line, line-level
// error records counted, duplicates), appends of whole lines, one writer at a time.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "batch/batch_record.h"
#include "batch/journal.h"
#include "util/error.h"

namespace db::batch {
namespace {

namespace fs = std::filesystem;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("deepbatch_journal_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "out.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write_file(const std::string& text) {
    std::ofstream out(path_, std::ios::binary);
    out << text;
  }
  std::string read_file() const {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
  std::string path_;
};

std::string ok(const std::string& id) { return success_record(id, {{"object", "text_completion"}}); }

// A JournalRecord with its own copy of the line.
struct Record {
  size_t line_no;
  std::string text, custom_id, error_code;
  bool is_error;
};

struct ReadBack {
  std::vector<Record> records;
  JournalScan scan;
};

ReadBack read_back(const std::string& path) {
  ReadBack out;
  out.scan = read_journal(path, [&](const JournalRecord& r) {
    out.records.push_back({r.line_no, std::string(r.text), r.custom_id, r.error_code, r.is_error});
  });
  return out;
}

TEST_F(JournalTest, ReaderMissingAndEmptyFilesHaveNoRecords) {
  ReadBack b = read_back(path_);
  EXPECT_TRUE(b.records.empty());
  EXPECT_EQ(b.scan.records, 0u);
  EXPECT_FALSE(fs::exists(path_));
  write_file("");
  b = read_back(path_);
  EXPECT_TRUE(b.records.empty());
  EXPECT_EQ(b.scan.complete_bytes, 0u);
  EXPECT_EQ(b.scan.torn_bytes, 0u);
}

TEST_F(JournalTest, ReaderYieldsRecordsInOrder) {
  const std::string a = ok("a");
  const std::string b = error_record(std::string("b"), "invalid_url", "bad");
  const std::string c = error_record(std::nullopt, "invalid_json", "line 4: not valid JSON");
  const std::string text = a + "\n\n" + b + "\n" + c + "\n";
  write_file(text);
  const ReadBack r = read_back(path_);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.scan.records, 3u);
  EXPECT_EQ(r.scan.complete_bytes, text.size());
  EXPECT_EQ(r.scan.torn_bytes, 0u);

  EXPECT_EQ(r.records[0].line_no, 1u);
  EXPECT_EQ(r.records[0].text, a);
  EXPECT_EQ(r.records[0].custom_id, "a");
  EXPECT_FALSE(r.records[0].is_error);
  EXPECT_EQ(r.records[0].error_code, "");

  EXPECT_EQ(r.records[1].line_no, 3u);  // the blank line 2 is skipped but counted
  EXPECT_EQ(r.records[1].text, b);
  EXPECT_EQ(r.records[1].custom_id, "b");
  EXPECT_TRUE(r.records[1].is_error);
  EXPECT_EQ(r.records[1].error_code, "invalid_url");

  EXPECT_EQ(r.records[2].line_no, 4u);
  EXPECT_EQ(r.records[2].custom_id, "");
  EXPECT_TRUE(r.records[2].is_error);
  EXPECT_EQ(r.records[2].error_code, "invalid_json");
}

TEST_F(JournalTest, ReaderLeavesTornLastLineOutAndTheFileAlone) {
  const std::string good = ok("a") + "\n" + ok("b") + "\n";
  for (const std::string& torn : {ok("c").substr(0, 25), ok("c"), std::string("{")}) {
    write_file(good + torn);
    const ReadBack r = read_back(path_);
    ASSERT_EQ(r.records.size(), 2u) << torn;
    EXPECT_EQ(r.records[1].custom_id, "b");
    EXPECT_EQ(r.scan.complete_bytes, good.size());
    EXPECT_EQ(r.scan.torn_bytes, torn.size());
    EXPECT_EQ(read_file(), good + torn);
  }
  write_file(ok("c").substr(0, 10));  // a torn first and only line
  const ReadBack r = read_back(path_);
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(r.scan.complete_bytes, 0u);
  EXPECT_EQ(r.scan.torn_bytes, 10u);
}

TEST_F(JournalTest, ReaderRefusesLinesThatAreNotRecords) {
  for (const std::string& bad : {std::string("not json"), std::string(R"([1, 2])"),
                                 std::string(R"({"custom_id": "a"})"), std::string(R"({"error": null})")}) {
    write_file(ok("a") + "\n" + bad + "\n");
    try {
      read_back(path_);
      FAIL() << "no error for " << bad;
    } catch (const JournalFormatError& e) {
      EXPECT_NE(std::string(e.what()).find(path_ + " line 2"), std::string::npos) << e.what();
    }
  }
  write_file(ok("a") + "\nnot json");  // a torn last line is not checked
  EXPECT_EQ(read_back(path_).records.size(), 1u);
}

TEST_F(JournalTest, MissingFileIsEmpty) {
  const JournalState s = recover_journal(path_);
  EXPECT_EQ(s.records, 0u);
  EXPECT_TRUE(s.finished.empty());
  EXPECT_FALSE(fs::exists(path_));
}

TEST_F(JournalTest, CompleteRecordsAreFinished) {
  write_file(ok("a") + "\n" + error_record(std::string("b"), "invalid_url", "bad") + "\n" + ok("c") + "\n");
  const JournalState s = recover_journal(path_);
  EXPECT_EQ(s.records, 3u);
  EXPECT_EQ(s.finished, (std::unordered_set<std::string>{"a", "b", "c"}));
  EXPECT_EQ(s.truncated_bytes, 0u);
}

TEST_F(JournalTest, TornLastLineIsCut) {
  const std::string good = ok("a") + "\n" + ok("b") + "\n";
  const std::string torn = ok("c").substr(0, 25);
  write_file(good + torn);
  const JournalState s = recover_journal(path_);
  EXPECT_EQ(s.records, 2u);
  EXPECT_EQ(s.finished.count("c"), 0u);
  EXPECT_EQ(s.truncated_bytes, torn.size());
  EXPECT_EQ(read_file(), good);
}

TEST_F(JournalTest, CompleteJsonWithoutNewlineIsStillTorn) {
  const std::string good = ok("a") + "\n";
  write_file(good + ok("b"));
  const JournalState s = recover_journal(path_);
  EXPECT_EQ(s.finished, (std::unordered_set<std::string>{"a"}));
  EXPECT_EQ(read_file(), good);
}

TEST_F(JournalTest, DuplicatesAndLineLevelErrors) {
  write_file(ok("a") + "\n" + ok("a") + "\n" +
             error_record(std::nullopt, "invalid_json", "line 3: not valid JSON") + "\n" +
             error_record(std::nullopt, "invalid_json", "line 5: not valid JSON") + "\n" +
             error_record(std::string("a"), "duplicate_custom_id", "line 6: dup") + "\n" +
             error_record(std::string("z"), "duplicate_custom_id", "line 9: dup") + "\n");
  const JournalState s = recover_journal(path_);
  EXPECT_EQ(s.records, 6u);
  // A duplicate-line error does not mark its custom_id finished: the first line with that id still runs.
  EXPECT_EQ(s.finished, (std::unordered_set<std::string>{"a"}));
  EXPECT_EQ(s.line_errors.at({"invalid_json", ""}), 2u);
  EXPECT_EQ(s.line_errors.at({"duplicate_custom_id", "a"}), 1u);
  EXPECT_EQ(s.line_errors.at({"duplicate_custom_id", "z"}), 1u);
}

TEST_F(JournalTest, ForeignFileIsRefused) {
  write_file(ok("a") + "\nthis is not json\n" + ok("b") + "\n");
  try {
    recover_journal(path_);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  write_file(R"({"hello": 1})" "\n");
  EXPECT_THROW(recover_journal(path_), Error);
}

TEST_F(JournalTest, WriterAppendsWholeLines) {
  {
    JournalWriter w(path_, {2, 100.0});
    w.append(ok("a"));
    w.append(ok("b"));
    w.append(ok("c"));
    EXPECT_EQ(w.appended(), 3u);
  }
  {
    JournalWriter w(path_);
    w.append(ok("d"));
  }
  const JournalState s = recover_journal(path_);
  EXPECT_EQ(s.records, 4u);
  EXPECT_EQ(s.finished.size(), 4u);
  const std::string text = read_file();
  EXPECT_EQ(text.back(), '\n');
}

TEST_F(JournalTest, RecoverThenAppendContinuesCleanly) {
  write_file(ok("a") + "\n" + ok("b").substr(0, 10));
  JournalWriter w(path_);
  recover_journal(path_);
  w.append(ok("b"));
  w.sync();
  const JournalState s = recover_journal(path_);
  EXPECT_EQ(s.finished, (std::unordered_set<std::string>{"a", "b"}));
  EXPECT_EQ(s.truncated_bytes, 0u);
}

TEST_F(JournalTest, OneWriterAtATime) {
  JournalWriter w(path_);
  EXPECT_THROW(JournalWriter second(path_), Error);
}

TEST_F(JournalTest, UnwritablePathThrows) {
  EXPECT_THROW(JournalWriter w((dir_ / "no-such-dir" / "out.jsonl").string()), Error);
}

}  // namespace
}  // namespace db::batch
