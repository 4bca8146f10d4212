// Writing a whole buffer to a POSIX file descriptor.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace db {

// Writes all of `data` to `fd`, continuing after short writes and retrying writes
// interrupted by a signal (EINTR). On any other error throws db::Error
// "<path>: write failed: <reason>" (`path` only names the file in the message); a
// prefix of `data` may have been written by then.
void write_all(int fd, std::string_view data, const std::string& path);

// As write_all, at byte `offset` of `fd` (pwrite), leaving the file offset alone.
void write_all_at(int fd, std::string_view data, uint64_t offset, const std::string& path);

}  // namespace db
