// One turn of a conversation, as a chat template receives it.
#pragma once
#include <string>

namespace db {

struct ChatMessage {
  std::string role;     // "system", "user" or "assistant"
  std::string content;  // message text
};

}  // namespace db
