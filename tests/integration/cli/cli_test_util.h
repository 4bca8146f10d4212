// Running the deepbatch binary from a test: arguments in, exit status, stdout and
// stderr out. DB_DEEPBATCH_BINARY is the built binary (set by the test's CMakeLists).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace db::test {

struct CliResult {
  int exit_code = -1;  // the process's exit status (-1: it did not exit normally)
  std::string out;     // its stdout
  std::string err;     // its stderr
};

// Runs `deepbatch args...` with `stdin_text` on its standard input.
CliResult run_deepbatch(const std::vector<std::string>& args, const std::string& stdin_text = "");

// A fresh, empty directory for one test's files.
std::string make_temp_dir(const std::string& name);

// Whole contents of a file ("" when it cannot be read).
std::string read_text_file(const std::string& path);

}  // namespace db::test
