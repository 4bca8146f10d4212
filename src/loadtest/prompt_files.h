// Workloads read from files: JSONL prompt files and ShareGPT-style conversation
// dumps. Prompt lengths of file requests are estimates (estimate_tokens: words x 1.3).
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "loadtest/workload.h"

namespace db::loadtest {

struct LoadedPrompts {
  std::vector<RequestSpec> requests;
  int64_t skipped = 0;  // well-formed entries that give no request (see each parser)
};

// One JSON object per line: {"prompt": "text"} or {"messages": [{"role": ..., "content": ...}, ...]}
// (an OpenAI chat list; content a string or a list of parts), optionally with "max_tokens"
// (an integer >= 1) overriding `default_max_tokens`. Blank lines are skipped. Throws
// db::Error "<source>:<line>: <what is wrong>" on the first malformed line.
LoadedPrompts parse_prompt_jsonl(std::istream& in, const std::string& source, int32_t default_max_tokens);
LoadedPrompts load_prompt_jsonl(const std::string& path, int32_t default_max_tokens);

// A JSON list of {"conversations": [{"from": "human"|"gpt"|..., "value": "text"}, ...]}.
// Rule: the first "human" turn becomes the prompt and the first "gpt" turn after it sets
// max_tokens = max(1, round(its words x 1.3)); a conversation without such a pair, or with
// an empty prompt, is skipped (counted). Other keys and turn kinds are ignored. Throws db::Error
// "<source>: entry <i>: <what is wrong>" (i from 0) on a structurally malformed entry.
LoadedPrompts parse_sharegpt(std::istream& in, const std::string& source);
LoadedPrompts load_sharegpt(const std::string& path);

}  // namespace db::loadtest
