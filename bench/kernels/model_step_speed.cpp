// Speed of the model's forward step alone (no scheduler, no sampling): a prefill
// of P tokens per sequence, then D decode steps of one token for each of B
// sequences (greedy on the logits of the previous step). Prints tokens/s of the
// prefill and of the decode phase; with --rounds R, R repetitions and medians.
// Also the load's wall time and the resident memory after it. With
// --replicate-slots N (N >= 2) the model loads as under --numa replicate with N
// nodes, all of them this machine's node 0 and the allowed CPUs dealt out
// among them: what replicating costs, measurable on a single-node machine.
//
//   model_step_speed --model models/SmolLM2-135M-Instruct.Q4_1.gguf --threads 2 --prompt 500 --decode 128 --batch 1
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "util/numa_nodes.h"
#include "util/thread_pool.h"

namespace {

struct Options {
  std::string model = "models/SmolLM2-135M-Instruct.Q4_1.gguf";
  int threads = 2;
  int prompt = 32;   // prompt tokens per sequence
  int decode = 128;  // decode steps
  int batch = 1;     // sequences decoded together
  int rounds = 1;
  int replicate_slots = 0;  // > 1: a node layout of that many slots on node 0
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--model") o.model = v;
    else if (k == "--threads") o.threads = std::atoi(v);
    else if (k == "--prompt") o.prompt = std::atoi(v);
    else if (k == "--decode") o.decode = std::atoi(v);
    else if (k == "--batch") o.batch = std::atoi(v);
    else if (k == "--rounds") o.rounds = std::atoi(v);
    else if (k == "--replicate-slots") o.replicate_slots = std::atoi(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds used by the whole process so far (all threads).
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int32_t argmax(const float* v, int64_t n) { return static_cast<int32_t>(std::max_element(v, v + n) - v); }

struct Result {
  double prefill_tps, decode_tps;  // tokens per wall second
  double prefill_tpc, decode_tpc;  // tokens per CPU second of the process
};

Result run_once(db::Model& model, db::ThreadPool& pool, const Options& o) {
  const int bs = 16;
  const int max_len = o.prompt + o.decode + 1;
  const int blocks_per_seq = (max_len + bs - 1) / bs;
  auto kv = std::make_unique<db::KVStore>(model.kv_cache_shape(), int64_t{blocks_per_seq} * o.batch, bs);
  const int64_t vocab = model.config().vocab;

  db::AttentionMetadata attn;
  attn.block_size = bs;
  attn.block_tables.resize(static_cast<size_t>(o.batch));
  for (int s = 0; s < o.batch; ++s)
    for (int b = 0; b < blocks_per_seq; ++b) attn.block_tables[size_t(s)].push_back(s * blocks_per_seq + b);
  auto slot = [&](int s, int pos) { return int64_t{attn.block_tables[size_t(s)][pos / bs]} * bs + pos % bs; };

  std::vector<float> logits;
  std::vector<int32_t> next(static_cast<size_t>(o.batch));
  // Prefill: one sequence per step (as a single-stream prompt would run).
  double prefill_s = 0, prefill_cpu = 0;
  for (int s = 0; s < o.batch; ++s) {
    db::Batch b;
    db::AttentionMetadata a1;  // this sequence alone
    a1.block_size = bs;
    a1.context_lens = {o.prompt};
    a1.block_tables = {attn.block_tables[size_t(s)]};
    for (int p = 0; p < o.prompt; ++p) {
      b.token_ids.push_back(1 + (p * 7919 + s * 104729) % 40000);
      b.positions.push_back(p);
      a1.slot_mapping.push_back(slot(s, p));
    }
    b.query_start = {0, o.prompt};
    b.logits_indices = {o.prompt - 1};
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    model.forward(b, a1, *kv, pool, logits);
    prefill_s += seconds_since(t0);
    prefill_cpu += process_cpu_seconds() - c0;
    next[static_cast<size_t>(s)] = argmax(logits.data(), vocab);
  }
  // Decode: all sequences together, one token each per step.
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = process_cpu_seconds();
  for (int step = 0; step < o.decode; ++step) {
    db::Batch b;
    attn.context_lens.assign(static_cast<size_t>(o.batch), o.prompt + step + 1);
    attn.slot_mapping.clear();
    b.query_start.push_back(0);
    for (int s = 0; s < o.batch; ++s) {
      b.token_ids.push_back(next[static_cast<size_t>(s)]);
      b.positions.push_back(o.prompt + step);
      b.query_start.push_back(s + 1);
      b.logits_indices.push_back(s);
      attn.slot_mapping.push_back(slot(s, o.prompt + step));
    }
    model.forward(b, attn, *kv, pool, logits);
    for (int s = 0; s < o.batch; ++s) next[static_cast<size_t>(s)] = argmax(logits.data() + s * vocab, vocab);
  }
  const double decode_s = seconds_since(t0), decode_cpu = process_cpu_seconds() - c0;
  const double n_prefill = double(o.prompt) * o.batch, n_decode = double(o.decode) * o.batch;
  return {n_prefill / prefill_s, n_decode / decode_s, n_prefill / prefill_cpu, n_decode / decode_cpu};
}

// Slots on node 0, the allowed CPUs dealt out among them (a CPU shared when there are fewer).
std::vector<db::NodeCpus> slots_on_node0(int n) {
  const std::vector<int> cpus = db::this_thread_cpus();
  std::vector<db::NodeCpus> slots(static_cast<size_t>(n));
  for (size_t i = 0; i < std::max(cpus.size(), slots.size()); ++i)
    slots[i % slots.size()].cpus.push_back(cpus[i % cpus.size()]);
  for (db::NodeCpus& s : slots) {
    std::sort(s.cpus.begin(), s.cpus.end());
    s.cpus.erase(std::unique(s.cpus.begin(), s.cpus.end()), s.cpus.end());
  }
  return slots;
}

// The process's resident memory now and at its peak, in MiB (/proc/self/status).
std::pair<double, double> rss_mib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  double now = 0, peak = 0;
  char line[256];
  while (f != nullptr && std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) now = std::atof(line + 6) / 1024;
    if (std::strncmp(line, "VmHWM:", 6) == 0) peak = std::atof(line + 6) / 1024;
  }
  if (f != nullptr) std::fclose(f);
  return {now, peak};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.replicate_slots > 1) db::install_node_layout(slots_on_node0(o.replicate_slots));
  const auto load0 = std::chrono::steady_clock::now();
  db::ThreadPool pool(o.threads);
  auto model = db::load_model(o.model, &pool);
  const auto [rss, peak] = rss_mib();
  std::printf("load %.3f s, RSS %.1f MiB (peak %.1f MiB), replicate slots %d\n", seconds_since(load0), rss, peak,
              o.replicate_slots > 1 ? o.replicate_slots : 0);
  std::vector<double> pre, dec, pre_cpu, dec_cpu;
  for (int r = 0; r < o.rounds; ++r) {
    const Result res = run_once(*model, pool, o);
    pre.push_back(res.prefill_tps);
    dec.push_back(res.decode_tps);
    pre_cpu.push_back(res.prefill_tpc);
    dec_cpu.push_back(res.decode_tpc);
    std::printf("round %d: prefill %.1f tok/s, decode %.1f tok/s\n", r, res.prefill_tps, res.decode_tps);
  }
  std::printf("median: prefill %.1f tok/s, decode %.1f tok/s; per CPU second: prefill %.1f, decode %.1f "
              "(batch %d, prompt %d, decode %d, threads %d)\n",
              median(pre), median(dec), median(pre_cpu), median(dec_cpu), o.batch, o.prompt, o.decode, o.threads);
  return 0;
}
