// Shared helpers for the io tests: a private temporary directory, whole-file
// reads and writes, byte patching, and checks on db::Error messages.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "util/error.h"

namespace db::test {

std::vector<uint8_t> read_bytes(const std::string& path);
// Reads at most `max_bytes` from the start of the file.
std::vector<uint8_t> read_prefix(const std::string& path, size_t max_bytes);
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);
void write_text(const std::string& path, const std::string& text);

// Offset of the first occurrence of `needle`; fails the test (and returns 0) when absent.
size_t find_bytes(const std::vector<uint8_t>& hay, const std::string& needle);

template <class T>
void patch(std::vector<uint8_t>& buf, size_t at, T value) {
  ASSERT_LE(at + sizeof(T), buf.size());
  std::memcpy(buf.data() + at, &value, sizeof(T));
}

// Runs `fn`; expects a db::Error whose message contains every string in `parts`.
// Returns the message ("" when nothing or something else was thrown).
std::string expect_error(const std::function<void()>& fn, const std::vector<std::string>& parts);

}  // namespace db::test
