// Error handling in three tiers (see docs/DESIGN notes in the README):
//  - db::Error: user / configuration errors with an actionable message
//    (which file, which key or tensor, what was expected and what was found);
//  - DB_CHECK: internal invariants; failing one is a bug, reported as db::Error
//    with file:line so that it never crashes a server;
//  - std::optional / status returns for "does not fit right now".
#pragma once
#include <cerrno>
#include <stdexcept>
#include <string>

namespace db {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_check_failure(const char* cond, const char* file, int line, const std::string& msg);

// The message for a failed system call on `path`: "<path>: <what>: <strerror(err)>".
// `err` is the call's errno; read it before anything else can overwrite it.
std::string sys_error(const std::string& path, const char* what, int err = errno);

}  // namespace db

#define DB_CHECK(cond, msg)                                                         \
  do {                                                                             \
    if (!(cond)) ::db::throw_check_failure(#cond, __FILE__, __LINE__, (msg));      \
  } while (0)
