#include "runner/batch_generator.h"

#include <algorithm>
#include <chrono>

#include "util/error.h"

namespace db {

const char* generate_finish_name(GenerateFinish r) { return r == GenerateFinish::Stop ? "stop" : "length"; }

namespace {

// One request's progress: KV positions [0, computed) are in the cache; tokens
// (prompt then output) is everything known so far.
struct Sequence {
  const GenerateRequest* req = nullptr;
  std::vector<int32_t> tokens;     // prompt followed by generated tokens
  std::vector<int32_t> block_ids;  // contiguous range of the KV store
  int32_t computed = 0;            // tokens whose K/V are cached
  SamplerState rng;
  GenerateOutput out;
  bool done = false;
};

int32_t ceil_div(int64_t a, int64_t b) { return static_cast<int32_t>((a + b - 1) / b); }

void validate(const GenerateRequest& r, size_t index, const ModelConfig& cfg) {
  const std::string who = "request " + std::to_string(index);
  if (r.prompt.empty()) throw Error(who + ": the prompt is empty");
  for (int32_t t : r.prompt)
    if (t < 0 || t >= cfg.vocab)
      throw Error(who + ": token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                  std::to_string(cfg.vocab) + ")");
  if (static_cast<int64_t>(r.prompt.size()) >= cfg.max_context)
    throw Error(who + ": the prompt has " + std::to_string(r.prompt.size()) +
                " tokens; the model's context holds " + std::to_string(cfg.max_context));
  if (r.max_new_tokens < 1) throw Error(who + ": max_new_tokens must be at least 1");
  r.sampling.validate();
}

// Adds `n` tokens of `seq` starting at its first uncomputed one to the step.
void add_chunk(Sequence& seq, int32_t n, int block_size, Batch& batch, AttentionMetadata& attn) {
  for (int32_t i = 0; i < n; ++i) {
    const int32_t pos = seq.computed + i;
    batch.token_ids.push_back(seq.tokens[pos]);
    batch.positions.push_back(pos);
    attn.slot_mapping.push_back(static_cast<int64_t>(seq.block_ids[pos / block_size]) * block_size +
                                pos % block_size);
  }
  batch.query_start.push_back(batch.num_tokens());
  attn.context_lens.push_back(seq.computed + n);
  attn.block_tables.push_back(seq.block_ids);
}

}  // namespace

BatchGenerator::BatchGenerator(Model& model, const Tokenizer& tokenizer, ThreadPool& pool, GeneratorOptions opts)
    : model_(model), tokenizer_(tokenizer), pool_(pool), opts_(opts) {}

std::vector<GenerateOutput> BatchGenerator::run(const std::vector<GenerateRequest>& requests,
                                                const TokenCallback& on_token, GenerateStats* stats) {
  const ModelConfig& cfg = model_.config();
  const int bs = opts_.block_size;
  std::vector<Sequence> seqs(requests.size());
  int64_t total_blocks = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const GenerateRequest& r = requests[i];
    validate(r, i, cfg);
    Sequence& s = seqs[i];
    s.req = &r;
    s.tokens = r.prompt;
    s.rng = SamplerState::for_request(r.sampling);
    const int64_t capacity = std::min<int64_t>(cfg.max_context, static_cast<int64_t>(r.prompt.size()) + r.max_new_tokens);
    for (int32_t b = 0; b < ceil_div(capacity, bs); ++b) s.block_ids.push_back(static_cast<int32_t>(total_blocks++));
  }
  auto kv = model_.make_kv_store(std::max<int64_t>(total_blocks, 1), bs, opts_.kv_dtype);

  GenerateStats st;
  std::vector<float> logits;
  using Clock = std::chrono::steady_clock;
  for (;;) {
    Batch batch;
    AttentionMetadata attn;
    attn.block_size = bs;
    batch.query_start.push_back(0);
    std::vector<Sequence*> sampled;  // sequences whose last row of this step is sampled
    int32_t budget = opts_.max_batched_tokens;
    bool has_prompt_tokens = false;
    // Decode tokens first, so that running sequences keep flowing; then prompt chunks.
    for (int pass = 0; pass < 2; ++pass) {
      for (Sequence& s : seqs) {
        const int32_t pending = static_cast<int32_t>(s.tokens.size()) - s.computed;
        const bool decoding = s.computed >= static_cast<int32_t>(s.req->prompt.size());
        if (s.done || pending <= 0 || decoding != (pass == 0) || budget <= 0) continue;
        const int32_t n = std::min(pending, budget);
        add_chunk(s, n, bs, batch, attn);
        budget -= n;
        has_prompt_tokens |= !decoding;
        if (n == pending) {  // the chunk reaches the newest token: its logits give the next one
          batch.logits_indices.push_back(batch.num_tokens() - 1);
          sampled.push_back(&s);
        }
        s.computed += n;
      }
    }
    if (batch.num_tokens() == 0) break;

    const auto t0 = Clock::now();
    model_.forward(batch, attn, *kv, pool_, logits);
    for (size_t k = 0; k < sampled.size(); ++k) {
      Sequence& s = *sampled[k];
      const size_t n_prompt = s.req->prompt.size();
      TokenHistory history{std::span<const int32_t>(s.tokens.data(), n_prompt),
                           std::span<const int32_t>(s.tokens.data() + n_prompt, s.tokens.size() - n_prompt)};
      const int32_t tok =
          sampler_.sample(logits.data() + k * cfg.vocab, cfg.vocab, s.req->sampling, s.rng, history).token;
      s.tokens.push_back(tok);
      s.out.tokens.push_back(tok);
      ++st.generated_tokens;
      if (on_token) on_token(static_cast<size_t>(&s - seqs.data()), tok);
      const bool stop = !s.req->ignore_eos && (tokenizer_.is_eos(tok) || std::count(s.req->stop_ids.begin(),
                                                                                     s.req->stop_ids.end(), tok));
      const bool full = static_cast<int32_t>(s.out.tokens.size()) >= s.req->max_new_tokens ||
                        static_cast<int64_t>(s.tokens.size()) >= cfg.max_context;
      if (stop || full) {
        s.done = true;
        s.out.finish = stop ? GenerateFinish::Stop : GenerateFinish::Length;
      }
    }
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    (has_prompt_tokens ? st.prefill_seconds : st.decode_seconds) += secs;
    ++st.steps;
  }
  for (const Sequence& s : seqs) st.prompt_tokens += static_cast<int64_t>(s.req->prompt.size());
  if (stats) *stats = st;

  std::vector<GenerateOutput> outs;
  outs.reserve(seqs.size());
  for (Sequence& s : seqs) outs.push_back(std::move(s.out));
  return outs;
}

}  // namespace db
