#include "engine/output_processor.h"

#include <algorithm>
#include <cstdio>
#include <exception>

namespace db {

namespace {

FinishReason finish_of(RequestStatus s) {
  switch (s) {
    case RequestStatus::FinishedStopped: return FinishReason::Stop;
    case RequestStatus::FinishedLength: return FinishReason::Length;
    case RequestStatus::FinishedAborted: return FinishReason::Abort;
    case RequestStatus::FinishedError: return FinishReason::Error;
    case RequestStatus::FinishedTimeout: return FinishReason::Timeout;
    case RequestStatus::FinishedQueueTimeout: return FinishReason::QueueTimeout;
    default: return FinishReason::None;
  }
}

double seconds(EngineClock::time_point from, EngineClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

OutputProcessor::OutputProcessor(const Tokenizer& tokenizer, std::function<void(RequestId)> finish_sequence,
                                 std::function<void()> group_done)
    : tokenizer_(tokenizer), finish_sequence_(std::move(finish_sequence)), group_done_(std::move(group_done)) {}

void OutputProcessor::handle(const OutputEvent& e) {
  if (e.kind == OutputEvent::Kind::Register) {
    Group g;
    g.info = e.group;
    g.samples.reserve(static_cast<size_t>(e.group->n));
    for (int32_t i = 0; i < e.group->n; ++i)
      g.samples.push_back(Sample{IncrementalDetokenizer(tokenizer_, e.group->skip_special_tokens),
                                 StopStringMatcher(e.group->stop), false});
    g.stats.prompt_tokens = e.group->prompt_tokens;
    groups_.emplace(e.group_id, std::move(g));
    return;
  }
  auto it = groups_.find(e.group_id);
  if (it == groups_.end()) return;  // already delivered in full
  Group& g = it->second;
  switch (e.kind) {
    case OutputEvent::Kind::Scheduled:
      if (!g.scheduled) {
        g.scheduled = true;
        g.stats.queue_seconds = seconds(g.info->submit_time, e.time);
        g.stats.cached_prompt_tokens = e.num_cached_tokens;
      }
      break;
    case OutputEvent::Kind::Tokens: on_tokens(g, e); break;
    case OutputEvent::Kind::PromptLogprobs: on_prompt_logprobs(g, e); break;
    case OutputEvent::Kind::Aborted: finish_unfinished(g, e, FinishReason::Abort); break;
    case OutputEvent::Kind::Failed: finish_unfinished(g, e, e.reason); break;
    default: break;
  }
}

void OutputProcessor::on_tokens(Group& g, const OutputEvent& e) {
  if (e.sample_index < 0 || e.sample_index >= static_cast<int32_t>(g.samples.size())) return;
  Sample& s = g.samples[static_cast<size_t>(e.sample_index)];
  if (s.finished) return;  // tokens sampled past a stop string
  if (!g.has_token) {
    g.has_token = true;
    g.stats.ttft_seconds = seconds(g.info->submit_time, e.time);
  }
  SampleOutput out;
  out.index = e.sample_index;
  FinishReason finish = finish_of(e.status);
  const bool ended_by_token = finish == FinishReason::Stop && e.stop_token >= 0;
  // Token by token, so that a stop string completed by one token of a
  // multi-token event (accepted speculative drafts) drops the tokens after it,
  // as it does when they arrive one per step.
  std::optional<size_t> matched;
  for (size_t j = 0; j < e.tokens.size() && !matched; ++j) {
    const SampledToken& t = e.tokens[j];
    out.new_token_ids.push_back(t.token);
    if (t.logprob) {
      out.new_logprobs.push_back(*t.logprob);
      std::vector<std::pair<int32_t, float>> top;
      for (const TokenLogprob& tl : t.top_logprobs) top.emplace_back(tl.token, tl.logprob);
      out.new_top_logprobs.push_back(std::move(top));
    }
    const bool last = j + 1 == e.tokens.size();
    std::string piece = ended_by_token && last ? std::string() : s.detok.feed(t.token);
    if (last && finish != FinishReason::None) piece += s.detok.flush();
    const StopStringMatcher::Result m = s.matcher.push(piece);
    out.new_text += m.text;
    matched = m.matched;
  }
  g.stats.generated_tokens += static_cast<int32_t>(out.new_token_ids.size());
  if (matched) {
    out.stop_reason = g.info->stop[*matched];
    if (finish == FinishReason::None) finish_sequence_(g.info->id + RequestId(e.sample_index));
    finish = FinishReason::Stop;
  } else if (finish != FinishReason::None) {
    out.new_text += s.matcher.flush();
    const auto& ids = g.info->stop_token_ids;
    if (ended_by_token && std::find(ids.begin(), ids.end(), e.stop_token) != ids.end())
      out.stop_reason = std::to_string(e.stop_token);
  }
  out.finish = finish;
  deliver(e.group_id, g, s, out, e.time);
}

void OutputProcessor::on_prompt_logprobs(Group& g, const OutputEvent& e) {
  if (g.samples.empty() || g.samples[0].finished || e.first_position > g.prompt_scored) return;
  SampleOutput out;
  out.index = 0;
  for (size_t j = static_cast<size_t>(g.prompt_scored - e.first_position); j < e.tokens.size(); ++j) {
    const SampledToken& t = e.tokens[j];
    out.prompt_token_ids.push_back(t.token);
    out.prompt_logprobs.push_back(t.logprob);
    std::vector<std::pair<int32_t, float>> top;
    for (const TokenLogprob& tl : t.top_logprobs) top.emplace_back(tl.token, tl.logprob);
    out.prompt_top_logprobs.push_back(std::move(top));
  }
  if (out.prompt_token_ids.empty()) return;
  g.prompt_scored += static_cast<int32_t>(out.prompt_token_ids.size());
  deliver(e.group_id, g, g.samples[0], out, e.time);
}

void OutputProcessor::finish_unfinished(Group& g, const OutputEvent& e, FinishReason reason) {
  const RequestId id = e.group_id;
  const size_t n = g.samples.size();
  for (size_t i = 0; i < n; ++i) {
    Sample& s = g.samples[i];
    if (s.finished) continue;
    SampleOutput out;
    out.index = static_cast<int32_t>(i);
    out.finish = reason;
    if (reason != FinishReason::Abort) out.stop_reason = e.error;
    const bool last = g.finished + 1 == static_cast<int32_t>(n);
    deliver(id, g, s, out, e.time);
    if (last) return;  // g is gone
  }
}

void OutputProcessor::deliver(RequestId id, Group& g, Sample& s, SampleOutput& out, EngineClock::time_point now) {
  bool final = false;
  if (out.finish != FinishReason::None) {
    s.finished = true;
    final = ++g.finished == static_cast<int32_t>(g.samples.size());
    if (final) g.stats.e2e_seconds = seconds(g.info->submit_time, now);
  }
  try {
    g.info->callback(id, out, g.stats, final);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "deepbatch: output callback of request %llu threw: %s\n",
                 static_cast<unsigned long long>(id), ex.what());
  } catch (...) {
    std::fprintf(stderr, "deepbatch: output callback of request %llu threw\n", static_cast<unsigned long long>(id));
  }
  if (final) {
    groups_.erase(id);
    group_done_();
  }
}

}  // namespace db
