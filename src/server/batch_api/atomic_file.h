// Small durable file operations for the batch API's state under its data dir.
#pragma once
#include <string>
#include <string_view>

namespace db::server {

// Replaces `path` with `data` atomically: writes "<path>.tmp", fsyncs it, renames it
// over `path` and fsyncs the directory, so a crash leaves either the old or the new
// content. Throws db::Error naming the path.
void write_file_atomic(const std::string& path, std::string_view data);
// The whole file. Throws db::Error naming the path when it cannot be read.
std::string read_whole_file(const std::string& path);
// fsyncs the directory `dir` (after creating, renaming or removing entries in it).
void sync_directory(const std::string& dir);

}  // namespace db::server
