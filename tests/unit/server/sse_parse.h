// Splits a server-sent-event body into its "data:" payloads, checking the framing.
#pragma once
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace db::server::testing {

struct SseStream {
  std::vector<nlohmann::json> chunks;  // parsed JSON payloads in order
  bool done = false;                   // ended with "data: [DONE]"
};

inline SseStream parse_sse(const std::string& body) {
  SseStream s;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << "unterminated event at " << pos;
    if (end == std::string::npos) break;
    const std::string event = body.substr(pos, end - pos);
    pos = end + 2;
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    EXPECT_FALSE(s.done) << "event after [DONE]";
    const std::string data = event.substr(6);
    if (data == "[DONE]")
      s.done = true;
    else
      s.chunks.push_back(nlohmann::json::parse(data));
  }
  return s;
}

}  // namespace db::server::testing
