#include "engine/engine_types.h"

namespace db {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Abort: return "abort";
    case FinishReason::Error: return "error";
    case FinishReason::Timeout: return "timeout";
    case FinishReason::QueueTimeout: return "queue_timeout";
    case FinishReason::None: break;
  }
  return "";
}

}  // namespace db
