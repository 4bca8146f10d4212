#include "cli_test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace db::test {

namespace {

// The argument quoted for /bin/sh.
std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

}  // namespace

std::string make_temp_dir(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("deepbatch_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

CliResult run_deepbatch(const std::vector<std::string>& args, const std::string& stdin_text) {
  const std::string dir = make_temp_dir("cli");
  const std::string in = dir + "/stdin.txt", out = dir + "/stdout.txt", err = dir + "/stderr.txt";
  std::ofstream(in, std::ios::binary) << stdin_text;
  std::string cmd = shell_quote(DB_DEEPBATCH_BINARY);
  for (const std::string& a : args) cmd.append(" ").append(shell_quote(a));
  cmd.append(" <").append(shell_quote(in)).append(" >").append(shell_quote(out));
  cmd.append(" 2>").append(shell_quote(err));
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text_file(out);
  r.err = read_text_file(err);
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace db::test
