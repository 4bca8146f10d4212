// Where `deepbatch serve` keeps the Batch API's files and batches when no --data-dir
// is given, so that /v1/files and /v1/batches work without flags.
#pragma once
#include <string>

namespace db::server {

// $XDG_DATA_HOME/deepbatch when XDG_DATA_HOME is an absolute path; else
// $HOME/.local/share/deepbatch when HOME is set; else ./deepbatch-data.
// `xdg_data_home` and `home` are the variables' values (nullptr when unset).
std::string default_data_dir(const char* xdg_data_home, const char* home);

// The same from this process's environment.
std::string default_data_dir();

}  // namespace db::server
