// The batch input reader (src/batch/batch_input.h): a whole input file, one request per
// line. parse_batch_input must never throw; every non-blank line becomes exactly one item
// or one error record, in file order.
//
// Input: the file's bytes.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>

#include "batch/batch_input.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  db::batch::BatchInput parsed;
  try {
    parsed = db::batch::parse_batch_input(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parse_batch_input threw: %s\n", e.what());
    FUZZ_CHECK(false, "parse_batch_input never throws for bad lines");
  }
  FUZZ_CHECK(parsed.items.size() + parsed.errors.size() == parsed.lines, "one item or error per line");
  size_t last = 0;
  for (const auto& item : parsed.items) {
    FUZZ_CHECK(item.line_no > last, "items in file order");
    FUZZ_CHECK(!item.custom_id.empty(), "items have a custom_id");
    last = item.line_no;
  }
  last = 0;
  for (const auto& err : parsed.errors) {
    FUZZ_CHECK(err.line_no > last, "errors in file order");
    FUZZ_CHECK(!err.code.empty() && !err.message.empty(), "errors have a code and a message");
    last = err.line_no;
  }
  return 0;
}
