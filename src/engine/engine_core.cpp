#include "engine/engine_core.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <string>

#include "backend/backend_device.h"
#include "engine/model_macs.h"
#include "engine/moe_batch_sizing.h"
#include "engine/step_composition.h"
#include "memory/memory_info.h"
#include "memory/read_bandwidth.h"
#include "sched/budget_split.h"
#include "spec/draft_model_proposer.h"
#include "spec/mtp_proposer.h"
#include "util/error.h"
#include "util/int8_peak.h"

namespace db {

namespace {

void check_config(const EngineConfig& c) {
  if (c.block_size != 16 && c.block_size != 64)
    throw Error("block_size: must be 16 or 64, got " + std::to_string(c.block_size));
  if (c.max_num_seqs < 1) throw Error("max_num_seqs: must be at least 1, got " + std::to_string(c.max_num_seqs));
  if (c.max_num_batched_tokens < 1)
    throw Error("max_num_batched_tokens: must be at least 1, got " + std::to_string(c.max_num_batched_tokens));
  if (c.long_prefill_threshold < 0)
    throw Error("long_prefill_threshold: must not be negative, got " + std::to_string(c.long_prefill_threshold));
  if (c.kv_cache_memory < 0) throw Error("kv_cache_memory: must not be negative");
  if (c.kv_cache_memory == 0 && !(c.kv_cache_fraction > 0 && c.kv_cache_fraction <= 1))
    throw Error("kv_cache_fraction: must be in (0, 1], got " + std::to_string(c.kv_cache_fraction));
  if (c.threads < 0) throw Error("threads: must not be negative, got " + std::to_string(c.threads));
  if (c.interactive_step_tokens < 0) throw Error("interactive_step_tokens: must not be negative");
  if (c.decode_headroom < 1) throw Error("decode_headroom: must be at least 1, got " + std::to_string(c.decode_headroom));
  for (size_t k = 0; k < 3; ++k) {
    const double w = c.kv_watermarks[k];
    if (!(w >= 0 && w < 1)) throw Error("kv_watermarks: each must be in [0, 1), got " + std::to_string(w));
    if (k > 0 && w < c.kv_watermarks[k - 1])
      throw Error("kv_watermarks: must not decrease from class 0 to class 2 (a less urgent class leaves more free)");
    if (!(c.max_queue_wait[k] >= 0)) throw Error("max_queue_wait: must not be negative");
  }
  if (c.sla.tpot_p99_s < 0 || c.sla.ttft_p99_s < 0) throw Error("SLA targets: must not be negative");
  if (c.sla.enabled() && !(c.sla_window_s > 0)) throw Error("sla_window_s: must be positive");
  c.speculative.validate();
  const MemoryGuardConfig& g = c.memory_guard;
  if (!(g.low_water > 0 && g.low_water < g.high_water && g.high_water <= 1))
    throw Error("memory guard: need 0 < low water < high water <= 1");
}

}  // namespace

KVCacheSpec engine_kv_cache_spec(const Model& model, const EngineConfig& cfg) {
  return KVCacheSpec{model.kv_cache_shape(), cfg.block_size, cfg.kv_dtype};
}

std::string describe_kv_pool(const KVCacheSpec& spec, int32_t num_blocks) {
  const size_t per_token = spec.bytes_per_token();
  const int64_t tokens = int64_t{num_blocks} * spec.block_size;
  char line[256];
  std::snprintf(line, sizeof line,
                "KV cache: %s, %s, %zu bytes/token, %zu tokens/GiB; %d blocks of %d tokens = %lld tokens, %.1f MiB",
                spec.shape.describe().c_str(), dtype_name(spec.dtype).c_str(), per_token, (size_t{1} << 30) / per_token,
                num_blocks, spec.block_size, static_cast<long long>(tokens),
                static_cast<double>(tokens) * static_cast<double>(per_token) / (1 << 20));
  return line;
}

int32_t engine_num_kv_blocks(const Model& model, const EngineConfig& cfg, size_t draft_bytes_per_token) {
  int64_t budget = cfg.kv_cache_memory;
  if (budget == 0 && model.kv_memory() != nullptr) {
    budget = device_kv_budget(*model.kv_memory(), cfg.gpu_memory_utilization);
  } else if (budget == 0) {
    const std::optional<int64_t> avail = available_memory_bytes();
    if (!avail) throw Error("kv_cache_memory: the available memory cannot be read here; set the KV cache size explicitly");
    budget = static_cast<int64_t>(static_cast<double>(*avail) * cfg.kv_cache_fraction);
  }
  const KVCacheSpec spec = engine_kv_cache_spec(model, cfg);
  const double target_share = static_cast<double>(spec.bytes_per_token()) /
                              static_cast<double>(spec.bytes_per_token() + draft_bytes_per_token);
  return num_blocks_for_budget(spec, static_cast<size_t>(static_cast<double>(budget) * target_share));
}

EngineConfig with_moe_batch_defaults(const Model& model, const WeightReadBytes& weights, EngineConfig cfg) {
  const ModelConfig& mc = model.config();
  if (!mc.moe.enabled() || !(cfg.auto_max_num_seqs || cfg.auto_max_num_batched_tokens)) return cfg;
  int moe_layers = 0;
  for (int layer = 0; layer < mc.n_layers; ++layer) moe_layers += mc.moe.is_moe_layer(layer);
  const double routed_weights =
      3.0 * mc.hidden * double(mc.moe.expert_ffn) * mc.moe.n_experts * static_cast<double>(moe_layers);
  MoeBatchInputs in;
  in.n_experts = mc.moe.n_experts;
  in.n_experts_used = mc.moe.n_experts_used;
  in.expert_bytes_per_weight = routed_weights > 0 ? static_cast<double>(weights.routed_experts) / routed_weights : 0;
  ThreadPool pool(resolve_threads(cfg.threads));
  in.read_bytes_per_s = cfg.read_bytes_per_s > 0 ? cfg.read_bytes_per_s : measure_read_bandwidth(pool);
  in.int8_macs_per_s = measure_int8_peak(pool);
  in.kv_pool_tokens = int64_t{engine_num_kv_blocks(model, cfg)} * cfg.block_size;
  in.tokens_per_sequence = cfg.decode_headroom;
  const MoeBatchChoice choice = choose_moe_batch(in);
  if (!choice.applies) {
    std::fprintf(stderr, "MoE batch: kept --max-num-seqs %d, --max-num-batched-tokens %d (no int8 peak or read "
                 "bandwidth measured here)\n", cfg.max_num_seqs, cfg.max_num_batched_tokens);
    return cfg;
  }
  if (cfg.auto_max_num_seqs) cfg.max_num_seqs = choice.max_num_seqs;
  if (cfg.auto_max_num_batched_tokens) cfg.max_num_batched_tokens = std::max(cfg.max_num_seqs, choice.max_num_batched_tokens);
  std::fprintf(stderr, "%s; in use: --max-num-seqs %d, --max-num-batched-tokens %d\n", choice.describe(in).c_str(),
               cfg.max_num_seqs, cfg.max_num_batched_tokens);
  return cfg;
}

EngineCore::EngineCore(Model& model, const Tokenizer& tokenizer, const EngineConfig& cfg, WeightReadBytes weights)
    : model_(model),
      pool_((check_config(cfg), resolve_threads(cfg.threads))),
      guard_(cfg.memory_guard, cfg.max_num_seqs),
      weights_(weights) {
  const ModelConfig& mc = model.config();
  // A proposer's KV store is host memory: a model on a device drafts with n-grams only.
  if (model.kv_memory() != nullptr && (cfg.speculative.method == "draft_model" || cfg.speculative.method == "mtp"))
    throw Error("speculative method '" + cfg.speculative.method +
                "' runs on the CPU only: with --device cuda use --speculative ngram or none");
  std::unique_ptr<DraftModel> draft;
  if (cfg.speculative.method == "draft_model")
    draft = DraftModel::open(cfg.speculative.model, tokenizer, mc.vocab, &pool_);
  MtpModule* mtp = nullptr;
  if (cfg.speculative.method == "mtp") {
    mtp = model.mtp(&pool_);
    if (!mtp) throw Error("speculative method 'mtp': the model has no multi-token-prediction layer (nextn tensors)");
  }
  // The proposer's own KV cache, beside the target's: a draft model's, or the MTP module's one layer.
  std::optional<KVCacheSpec> draft_kv;
  if (draft) draft_kv = KVCacheSpec{draft->model().kv_cache_shape(), cfg.block_size, cfg.kv_dtype};
  if (mtp) draft_kv = KVCacheSpec{mtp->kv_cache_shape(), cfg.block_size, cfg.kv_dtype};
  SchedulerConfig sc;
  sc.max_num_seqs = cfg.max_num_seqs;
  sc.max_num_batched_tokens = cfg.max_num_batched_tokens;
  sc.long_prefill_threshold = cfg.long_prefill_threshold > 0
                                  ? cfg.long_prefill_threshold
                                  : auto_long_prefill_threshold(cfg.max_num_batched_tokens, cfg.block_size);
  if (cfg.prefill_cost != PrefillCostMode::Tokens) sc.prefill_cost = prefill_cost_prior(mc);
  if (cfg.prefill_cost == PrefillCostMode::Fitted) cost_fit_.emplace(sc.prefill_cost);
  prior_prefill_rate_ = sc.prefill_cost.attention_per_position;
  sc.block_size = cfg.block_size;
  sc.num_blocks = engine_num_kv_blocks(model, cfg, draft_kv ? draft_kv->bytes_per_token() : 0);
  const int32_t num_blocks = sc.num_blocks;
  sc.enable_prefix_caching = cfg.enable_prefix_caching;
  sc.admission = cfg.admission;
  sc.decode_headroom_tokens = cfg.decode_headroom;
  sc.max_model_len = mc.max_context;
  sc.eos_token_ids = tokenizer.eos_ids();
  sc.kv_watermarks = cfg.kv_watermarks;
  sc.max_queue_wait = cfg.max_queue_wait;
  sc.reject_on_queue_timeout = cfg.reject_on_queue_timeout;
  sc.interactive_step_tokens = cfg.interactive_step_tokens;
  sc.interactive_hold_s = cfg.interactive_hold_s;

  limits_.vocab = mc.vocab;
  limits_.max_context = mc.max_context;
  limits_.max_num_seqs = cfg.max_num_seqs;
  limits_.block_size = cfg.block_size;
  limits_.num_usable_blocks = sc.num_blocks - 1;

  kv_ = std::make_unique<KVStore>(model.kv_cache_shape(), sc.num_blocks, cfg.block_size, cfg.kv_dtype,
                                  model.kv_memory());
  kv_summary_ = describe_kv_pool(engine_kv_cache_spec(model, cfg), sc.num_blocks);
  if (draft_kv) kv_summary_ += (mtp ? "; MTP module " : "; draft model ") + describe_kv_pool(*draft_kv, sc.num_blocks);
  sched_ = std::make_unique<Scheduler>(std::move(sc));
  runner_ = std::make_unique<ModelRunner>(model, *kv_, pool_);
  kv_bytes_per_token_ = static_cast<double>(kv_->nbytes()) / (static_cast<double>(kv_->num_blocks()) * cfg.block_size);
  if (cfg.sla.enabled()) {
    SlaControllerConfig sla;
    sla.targets = cfg.sla;
    sla.max_step_tokens = cfg.max_num_batched_tokens;
    sla.min_step_tokens = std::min(32, cfg.max_num_batched_tokens);
    sla.max_running = cfg.max_num_seqs;
    sla.window_s = cfg.sla_window_s;
    sla_.emplace(sla, cfg.long_prefill_threshold, cfg.block_size);
    sched_->set_step_limits(sla_->step_limits());
  }
  if (cfg.speculative.enabled()) {
    std::unique_ptr<DraftProposer> proposer;
    if (draft)
      proposer = std::make_unique<DraftModelProposer>(std::move(draft), pool_, num_blocks, cfg.block_size, cfg.kv_dtype);
    else if (mtp)
      proposer = std::make_unique<MtpProposer>(model, pool_, num_blocks, cfg.block_size, cfg.kv_dtype);
    spec_.emplace(cfg.speculative, std::move(proposer));
  }
}

void EngineCore::forget(RequestId id) {
  runner_->forget(id);
  if (spec_) spec_->forget(id);
  if (sla_) sla_->forget(id);
}

bool EngineCore::finish_group(RequestId group, RequestStatus status) {
  const std::vector<RequestId> ended = sched_->finish_group(group, status);
  for (RequestId id : ended) forget(id);
  return !ended.empty();
}

void EngineCore::finish_sequence(RequestId id) {
  const RequestId ids[] = {id};
  for (RequestId ended : sched_->finish_requests(ids, RequestStatus::FinishedStopped)) forget(ended);
}

std::vector<RequestId> EngineCore::live_groups() const {
  std::set<RequestId> groups;
  for (RequestId id : sched_->live_ids()) groups.insert(sched_->find(id)->group_id);
  return {groups.begin(), groups.end()};
}

double engine_seconds(EngineClock::time_point t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

void EngineCore::enforce_limits(std::vector<OutputEvent>& events) {
  const EngineClock::time_point now = EngineClock::now();
  const double now_s = engine_seconds(now);
  for (EndedRequest& ended : sched_->enforce_time_limits(now_s)) {
    for (RequestId id : ended.sequences) forget(id);
    OutputEvent e;
    e.kind = OutputEvent::Kind::Failed;
    e.group_id = ended.group_id;
    e.time = now;
    e.reason = ended.status == RequestStatus::FinishedTimeout ? FinishReason::Timeout : FinishReason::QueueTimeout;
    e.error = std::move(ended.message);
    events.push_back(std::move(e));
  }
  if (!guard_.config().enabled || !guard_.due(now_s)) return;
  const MemoryGuardDecision d = guard_.observe(read_process_memory(now_s));
  const int64_t block_bytes = static_cast<int64_t>(kv_->nbytes()) / kv_->num_blocks();
  sched_->set_memory_limits({d.max_running, d.admission_paused, d.kv_growth_bytes < 0 ? -1 : d.kv_growth_bytes / block_bytes});
  for (const std::string& m : guard_.take_events()) std::fprintf(stderr, "memory guard: %s\n", m.c_str());
}

StepRecord EngineCore::step(std::vector<OutputEvent>& events) {
  const EngineClock::time_point started = EngineClock::now();
  if (spec_) spec_->propose(*sched_);
  const EngineClock::time_point proposed = EngineClock::now();
  SchedulerOutput so = sched_->schedule();
  const EngineClock::time_point scheduled_at = EngineClock::now();
  for (const ScheduledRequest& r : so.scheduled_new) {
    if (!r.new_data->first_admission) continue;
    OutputEvent e;
    e.kind = OutputEvent::Kind::Scheduled;
    e.group_id = r.id;
    e.time = scheduled_at;
    e.num_cached_tokens = std::min(r.new_data->num_cached_tokens, r.new_data->num_prompt_tokens);
    events.push_back(std::move(e));
  }
  if (!so.has_work()) {
    DB_CHECK(sched_->num_running() > 0 || sched_->num_waiting() == 0 || !so.preempted_ids.empty(),
             "no waiting request can be admitted into an empty engine");
    runner_->execute(so);  // lets the runner forget preempted sequences
    if (spec_) spec_->observe(so, {}, *sched_, 0, 0, 0);  // ... and the proposer
    return {};
  }
  const StepComposition comp = describe_step(so, *sched_, sla_.has_value());
  ModelRunnerOutput ro;
  const EngineClock::time_point executing = EngineClock::now();
  try {
    ro = runner_->execute(so);
  } catch (const std::exception& ex) {
    fail_step(so, ex.what(), events);
    return {};
  }
  if (cost_fit_ && cost_fit_->observe(so, std::chrono::duration<double>(EngineClock::now() - executing).count()))
    update_prefill_cost();
  const std::vector<RequestOutput> outs = sched_->update(so, ro);
  const EngineClock::time_point done_at = EngineClock::now();
  for (PromptLogprobs& p : ro.prompt_logprobs) {  // before the tokens sampled from the same step
    OutputEvent e;
    e.kind = OutputEvent::Kind::PromptLogprobs;
    e.group_id = p.group_id;
    e.time = done_at;
    e.first_position = p.first_position;
    e.tokens = std::move(p.tokens);
    events.push_back(std::move(e));
  }
  for (const RequestOutput& o : outs) {
    OutputEvent e;
    e.kind = OutputEvent::Kind::Tokens;
    e.group_id = o.group_id;
    e.time = done_at;
    e.sample_index = o.sample_index;
    e.tokens = o.new_tokens;
    e.status = o.status;
    e.stop_token = o.stop_token;
    events.push_back(std::move(e));
  }
  StepRecord rec;
  rec.seconds = std::chrono::duration<double>(done_at - started).count();
  rec.tokens = so.total_num_scheduled_tokens;
  rec.sequences = static_cast<int32_t>(so.scheduled_running.size() + so.scheduled_new.size());
  rec.prompt_tokens = comp.prompt_tokens;
  rec.bytes_read = weights_.per_step(rec.tokens) + kv_bytes_per_token_ * static_cast<double>(comp.context_tokens);
  if (spec_)  // the step's cost without the proposer's, which the governor counts apart
    spec_->observe(so, ro, *sched_, rec.tokens, rec.prompt_tokens, std::chrono::duration<double>(done_at - proposed).count());
  if (sla_) {
    const double done = engine_seconds(done_at);
    sla_->observe(so, comp, outs, done, rec.seconds, static_cast<int32_t>(sched_->num_waiting()));
    if (const std::optional<SlaDecision> d = sla_->decide(done)) {
      sched_->set_step_limits(sla_->step_limits());
      if (d->action != SlaAction::Hold) std::fprintf(stderr, "sla controller: %s\n", d->describe().c_str());
    }
  }
  for (const RequestOutput& o : outs)  // after the observers, which still read the step's ended sequences
    if (is_finished(o.status)) forget(o.id);
  return rec;
}

void EngineCore::update_prefill_cost() {
  const double rate = cost_fit_->estimate().attention_per_position;
  sched_->set_prefill_cost(cost_fit_->estimate());
  // One line when the measured rate first replaces the model's, and when it doubles or halves since.
  if (logged_prefill_rate_ > 0 && rate < 2 * logged_prefill_rate_ && rate > logged_prefill_rate_ / 2) return;
  std::fprintf(stderr,
               "prefill cost: one context position's attention = %.3g of a token's matmuls (%.1fx the model's MAC "
               "ratio), measured from step times\n",
               rate, rate / prior_prefill_rate_);
  logged_prefill_rate_ = rate;
}

void EngineCore::fail_step(const SchedulerOutput& so, const std::string& error, std::vector<OutputEvent>& events) {
  std::set<RequestId> groups;
  for (const auto* list : {&so.scheduled_running, &so.scheduled_new})
    for (const ScheduledRequest& r : *list)
      if (const Request* req = sched_->find(r.id)) groups.insert(req->group_id);
  const EngineClock::time_point now = EngineClock::now();
  for (RequestId g : groups) {
    finish_group(g, RequestStatus::FinishedError);
    OutputEvent e;
    e.kind = OutputEvent::Kind::Failed;
    e.group_id = g;
    e.time = now;
    e.error = "the model step failed: " + error;
    events.push_back(std::move(e));
  }
}

void EngineCore::read_stats(EngineStats& s, bool scan_pool) const {
  const SchedulerCounters& c = sched_->counters();
  const KVCacheManager& kv = sched_->kv_cache();
  s.running = sched_->num_running();
  s.waiting = sched_->num_waiting();
  for (int p = 0; p < 3; ++p) {
    s.running_by_priority[p] = sched_->num_running_of_class(p);
    s.waiting_by_priority[p] = sched_->num_waiting_of_class(p);
  }
  s.prompt_tokens = c.prompt_tokens_computed;
  s.cached_prompt_tokens = c.cached_prompt_tokens;
  s.generated_tokens = c.generated_tokens;
  s.preemptions = c.preemptions;
  s.finished_sequences = c.finished;
  s.steps = c.steps;
  s.kv_usage = kv.usage();
  s.num_blocks = kv.pool().num_blocks();
  s.free_blocks = kv.num_free_blocks();
  s.prefix_cache_hit_rate = kv.prefix_cache_stats().hit_rate();
  if (scan_pool) {
    s.pool = kv.fragmentation();
    for (int p = 0; p < 3; ++p) s.blocks_by_priority[p] = sched_->blocks_of_class(p);
  }
  s.evicted_blocks = static_cast<int64_t>(kv.prefix_cache_stats().evicted_blocks);
  s.resident_blocks = kv.pool().num_resident_blocks();
  s.constraint_masks = runner_->constraint_masks();
  s.constraint_mask_seconds = runner_->constraint_mask_seconds();
  s.timeouts = c.timeouts;
  s.queue_timeouts = c.queue_timeouts;
  s.promotions = c.promotions;
  s.memory_guard = guard_.snapshot();
  s.sla = sla_ ? sla_->snapshot() : SlaControllerSnapshot{};
  if (spec_) s.spec = spec_->stats();
  if (const RouterStats* router = model_.router_stats())
    s.router = *router;
  else
    s.router = RouterStats{};
}

}  // namespace db
