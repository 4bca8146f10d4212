#include "util/error.h"

namespace db {

void throw_check_failure(const char* cond, const char* file, int line, const std::string& msg) {
  throw Error(std::string("internal check failed: ") + cond + " at " + file + ":" + std::to_string(line) +
              (msg.empty() ? "" : ": " + msg));
}

}  // namespace db
