#include "batch_test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace db::test {

namespace {

std::string line_for(const std::string& custom_id, const char* url, const nlohmann::json& body) {
  return nlohmann::json{{"custom_id", custom_id}, {"method", "POST"}, {"url", url}, {"body", body}}.dump();
}

}  // namespace

std::string completion_line(const std::string& custom_id, const nlohmann::json& body) {
  return line_for(custom_id, "/v1/completions", body);
}

std::string chat_line(const std::string& custom_id, const nlohmann::json& body) {
  return line_for(custom_id, "/v1/chat/completions", body);
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary);
  for (const std::string& l : lines) out << l << "\n";
}

std::vector<nlohmann::json> read_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) throw std::runtime_error(path + ": torn last line: " + line);
    out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

size_t count_complete_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  size_t n = 0;
  std::string line;
  while (std::getline(in, line))
    if (!in.eof()) ++n;
  return n;
}

std::vector<std::string> choice_texts(const nlohmann::json& record) {
  std::vector<std::string> texts;
  const auto& body = record.at("response").at("body");
  for (const auto& c : body.at("choices")) {
    if (c.contains("message")) texts.push_back(c["message"]["content"].get<std::string>());
    else texts.push_back(c["text"].get<std::string>());
  }
  return texts;
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

bool try_reap(pid_t pid, int& status) {
  int st = 0;
  const pid_t r = ::waitpid(pid, &st, WNOHANG);
  if (r != pid) return false;
  status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return true;
}

int wait_exit(pid_t pid, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (try_reap(pid, status)) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

}  // namespace db::test
