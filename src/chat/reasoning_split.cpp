#include "chat/reasoning_split.h"

#include "chat/partial_tag.h"

namespace db::chat {

ReasoningParts split_reasoning(std::string_view text) {
  if (text.substr(0, kThinkOpen.size()) == kThinkOpen) text.remove_prefix(kThinkOpen.size());
  ReasoningParts p;
  const size_t end = text.find(kThinkClose);
  if (end == std::string_view::npos) {
    p.reasoning = std::string(text);
    return p;
  }
  p.reasoning = std::string(text.substr(0, end));
  p.content = std::string(text.substr(end + kThinkClose.size()));
  return p;
}

bool template_thinks(std::string_view template_source) {
  return template_source.find(kThinkClose) != std::string_view::npos;
}

ReasoningStreamSplitter::Delta ReasoningStreamSplitter::push(std::string_view text) {
  Delta d;
  if (in_content_) {
    d.content = std::string(text);
    return d;
  }
  std::string buf = pending_ + std::string(text);
  pending_.clear();
  if (at_start_) {
    if (buf.size() < kThinkOpen.size() && kThinkOpen.substr(0, buf.size()) == buf) {
      pending_ = std::move(buf);  // may yet be "<think>"
      return d;
    }
    if (std::string_view(buf).substr(0, kThinkOpen.size()) == kThinkOpen) buf.erase(0, kThinkOpen.size());
    at_start_ = false;
  }
  const size_t end = buf.find(kThinkClose);
  if (end != std::string::npos) {
    d.reasoning = buf.substr(0, end);
    d.content = buf.substr(end + kThinkClose.size());
    in_content_ = true;
    return d;
  }
  const size_t held = partial_tag_suffix(buf, kThinkClose);
  pending_ = buf.substr(buf.size() - held);
  d.reasoning = buf.substr(0, buf.size() - held);
  return d;
}

ReasoningStreamSplitter::Delta ReasoningStreamSplitter::flush() {
  Delta d;
  (in_content_ ? d.content : d.reasoning) = std::move(pending_);
  pending_.clear();
  return d;
}

}  // namespace db::chat
