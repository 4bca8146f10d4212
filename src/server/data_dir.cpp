#include "server/data_dir.h"

#include <cstdlib>

namespace db::server {

std::string default_data_dir(const char* xdg_data_home, const char* home) {
  // The XDG base-directory rule: a relative XDG_DATA_HOME is invalid and ignored.
  if (xdg_data_home && xdg_data_home[0] == '/') return std::string(xdg_data_home) + "/deepbatch";
  if (home && home[0] != '\0') return std::string(home) + "/.local/share/deepbatch";
  return "deepbatch-data";
}

std::string default_data_dir() { return default_data_dir(std::getenv("XDG_DATA_HOME"), std::getenv("HOME")); }

}  // namespace db::server
