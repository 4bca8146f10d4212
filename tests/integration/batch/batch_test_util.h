// Helpers for the batch integration tests: a scratch directory, request lines,
// reading output records, and running the deepbatch binary as a child process.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "default_model.h"
#include "scratch_dir.h"

namespace db::test {

std::string completion_line(const std::string& custom_id, const nlohmann::json& body);
std::string chat_line(const std::string& custom_id, const nlohmann::json& body);
void write_lines(const std::string& path, const std::vector<std::string>& lines);

// Every line of an output file parsed (a torn last line is an error).
std::vector<nlohmann::json> read_records(const std::string& path);
// Complete lines in the file (a torn last line not counted).
size_t count_complete_lines(const std::string& path);
// The generated texts of a success record's choices, in index order.
std::vector<std::string> choice_texts(const nlohmann::json& record);

// Starts `argv` (argv[0] is the program path) with stdout and stderr appended to `log_path`.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log_path);
// Waits for `pid` up to `timeout_s`; returns its exit status, or -1 after killing it on timeout.
int wait_exit(pid_t pid, double timeout_s);
// Whether `pid` has exited (reaps it; `status` receives its exit status).
bool try_reap(pid_t pid, int& status);

}  // namespace db::test
