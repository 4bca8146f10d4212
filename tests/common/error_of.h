// The message of the db::Error a call throws, for tests that check what a refusal says.
#pragma once
#include <string>

#include "util/error.h"

namespace db::test {

// The db::Error message of `fn`, or "" when it throws none.
template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace db::test
