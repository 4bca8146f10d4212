#include <cstdlib>
#include <string>

#include "dist/world.h"

namespace db::dist {

int launched_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 1) throw Error(std::string(name) + "=" + v + ": not a process count");
    return static_cast<int>(n);
  }
  return 1;
}

}  // namespace db::dist
