#include "util/error.h"

#include <cstring>

namespace db {

void throw_check_failure(const char* cond, const char* file, int line, const std::string& msg) {
  throw Error(std::string("internal check failed: ") + cond + " at " + file + ":" + std::to_string(line) +
              (msg.empty() ? "" : ": " + msg));
}

std::string sys_error(const std::string& path, const char* what, int err) {
  return path + ": " + what + ": " + std::strerror(err);
}

}  // namespace db
