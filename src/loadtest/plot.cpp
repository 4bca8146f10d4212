#include "loadtest/plot.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/error.h"

extern char** environ;

namespace db::loadtest {

namespace {

// Runs argv (argv[0] looked up on PATH, no shell: arguments are passed as they are)
// with this process's stdio and environment; returns its exit status, 128 + N when
// signal N ended it. Throws db::Error when it cannot be started.
int run_program(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);  // what this process printed comes before the child's output
  pid_t pid = 0;
  const int err = ::posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ);
  if (err == ENOENT) throw Error("--plot: " + argv[0] + " not found on PATH (the plot needs Python 3 with matplotlib)");
  if (err != 0) throw Error("--plot: cannot start " + argv[0] + ": " + std::strerror(err));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(std::string("--plot: waiting for ") + argv[0] + ": " + std::strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::string plot_script_path() {
  const char* dir = std::getenv("DB_SCRIPTS_DIR");
  return std::string(dir && *dir ? dir : DB_SOURCE_SCRIPTS_DIR) + "/plot_loadtest.py";
}

void check_plot_path(const std::string& out) {
  if (!ends_with(out, ".svg") && !ends_with(out, ".png"))
    throw Error("--plot: expected a FILE.svg or FILE.png, got '" + out + "'");
}

void check_plotter() {
  const std::string script = plot_script_path();
  struct stat st{};
  if (::stat(script.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error("--plot: the plot script " + script + " is missing (set DB_SCRIPTS_DIR to the directory holding it)");
  const int rc = run_program({"python3", script, "--check"});
  if (rc != 0)
    throw Error("--plot: `python3 " + script + " --check` failed (exit " + std::to_string(rc) +
                "); is matplotlib installed? (scripts/setup.sh installs it)");
}

void plot_report(const std::string& report_json, const std::string& out) {
  const std::string script = plot_script_path();
  const int rc = run_program({"python3", script, report_json, out});
  if (rc != 0) throw Error("--plot: " + script + " failed (exit " + std::to_string(rc) + ") drawing " + out);
}

}  // namespace db::loadtest
