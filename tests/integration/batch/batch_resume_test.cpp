// Crash safety of `deepbatch run`: the real binary is killed with SIGKILL at
// random moments and rerun until it finishes; the output must then hold every
// custom_id exactly once, with the same texts as an uninterrupted run.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "batch_test_util.h"

namespace db::test {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kRequests = 120;

std::vector<std::string> resume_batch() {
  const char* subjects[] = {"the ocean", "a robot", "the moon", "coffee", "a small village", "winter", "music",
                            "a lost key", "the library", "mountains", "a red fox", "the city at night"};
  std::vector<std::string> lines;
  for (int i = 0; i < kRequests; ++i) {
    const std::string subject = subjects[i % 12];
    const int max_tokens = 6 + (i * 7) % 14;
    const std::string id = "req-" + std::to_string(i);
    json body = {{"max_tokens", max_tokens}, {"temperature", 0}};
    if (i % 10 == 9) {  // a few sampled with a seed: just as reproducible
      body["temperature"] = 0.9;
      body["seed"] = 1000 + i;
    }
    if (i % 2 == 0) {
      body["prompt"] = "Write one sentence about " + subject + " (" + std::to_string(i) + "):";
      lines.push_back(completion_line(id, body));
    } else {
      body["messages"] = json::array({{{"role", "user"}, {"content", "Tell me about " + subject + ", item " +
                                                                         std::to_string(i) + "."}}});
      lines.push_back(chat_line(id, body));
    }
  }
  return lines;
}

std::vector<std::string> run_args(const std::string& in, const std::string& out) {
  return {DB_BINARY, "run", "-m", kDefaultModelPath, "-i", in, "-o", out, "-t", "2", "--max-num-seqs", "32",
          "--kv-cache-memory", "128M"};
}

// custom_id -> choice texts; fails on a duplicate or an error record.
std::map<std::string, std::vector<std::string>> texts_by_id(const std::string& path) {
  std::map<std::string, std::vector<std::string>> out;
  for (const json& r : read_records(path)) {
    const std::string id = r.at("custom_id");
    EXPECT_TRUE(r.at("error").is_null()) << r;
    EXPECT_EQ(out.count(id), 0u) << "custom_id " << id << " appears twice";
    if (r.at("error").is_null()) out[id] = choice_texts(r);
  }
  return out;
}

TEST(BatchResume, KillNineAndResumeGivesEachRecordOnce) {
  ASSERT_TRUE(default_model_present());
  ASSERT_TRUE(std::filesystem::exists(DB_BINARY)) << "missing " << DB_BINARY;
  ScratchDir dir("batch_resume");
  const std::string in = dir.file("in.jsonl"), ref = dir.file("ref.jsonl"), out = dir.file("out.jsonl");
  const std::string log = dir.file("log.txt");
  write_lines(in, resume_batch());

  // The uninterrupted reference run.
  ASSERT_EQ(wait_exit(spawn(run_args(in, ref), log), 150.0), 0) << "reference run failed; see the log";
  const auto expected = texts_by_id(ref);
  ASSERT_EQ(expected.size(), static_cast<size_t>(kRequests));

  // Killed runs: one during start-up, then three once the output has reached a
  // random share of the requests, after a random extra delay.
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> jitter_ms(0, 250);
  const std::vector<double> shares = {0.0, 0.15, 0.4, 0.65};
  size_t kills_mid_run = 0;
  for (double share : shares) {
    const size_t target = static_cast<size_t>(share * kRequests);
    const pid_t pid = spawn(run_args(in, out), log);
    const auto deadline = Clock::now() + std::chrono::seconds(150);
    int status = 0;
    bool exited = false;
    auto done_now = [&] { return std::filesystem::exists(out) ? count_complete_lines(out) : 0; };
    while (Clock::now() < deadline && !(exited = try_reap(pid, status)) && target > 0 && done_now() < target)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!exited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(target == 0 ? 50 : jitter_ms(rng)));
      exited = try_reap(pid, status);
    }
    if (exited) {
      ASSERT_EQ(status, 0) << "run exited with an error before it was killed";
      break;  // it finished on its own
    }
    ::kill(pid, SIGKILL);
    wait_exit(pid, 10.0);
    const size_t done = done_now();
    std::printf("killed at %zu/%d records\n", done, kRequests);
    if (done > 0 && done < static_cast<size_t>(kRequests)) ++kills_mid_run;
  }
  EXPECT_GE(kills_mid_run, 2u) << "the kills did not land in the middle of the run";

  // Rerun until it completes.
  ASSERT_EQ(wait_exit(spawn(run_args(in, out), log), 150.0), 0) << "final run failed; see the log";
  const auto got = texts_by_id(out);
  EXPECT_EQ(got.size(), static_cast<size_t>(kRequests));
  for (const auto& [id, texts] : expected) {
    auto it = got.find(id);
    ASSERT_NE(it, got.end()) << id << " missing after resume";
    EXPECT_EQ(it->second, texts) << id << " differs from the uninterrupted run";
  }
  // And one more run has nothing left to do.
  const size_t lines_before = count_complete_lines(out);
  ASSERT_EQ(wait_exit(spawn(run_args(in, out), log), 60.0), 0);
  EXPECT_EQ(count_complete_lines(out), lines_before);
}

}  // namespace
}  // namespace db::test
