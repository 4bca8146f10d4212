#include "cli_options.h"

#include "bundle/model_bundle.h"
#include "util/error.h"

namespace db::cli {

void add_model_options(CLI::App& app, ModelOptions& o) {
  app.add_option("-m,--model", o.model, "Model: a .gguf file or a Hugging Face checkpoint directory")->required();
  app.add_option("-t,--threads", o.threads, "Compute threads (0 = all cores)")->capture_default_str();
  app.add_option("--block-size", o.block_size, "KV cache block size in tokens")
      ->check(CLI::IsMember({16, 32, 64}))
      ->capture_default_str();
  app.add_option("--kv-dtype", o.kv_dtype,
                 "KV cache element type (q8_0: int8 in blocks of 32 with an fp16 scale, 1.9x the tokens of f16)")
      ->check(CLI::IsMember({"f16", "bf16", "f32", "q8_0"}))
      ->capture_default_str();
  app.add_option("--quantize", o.quantize,
                 "FP8 / AWQ / GPTQ checkpoints: convert the matrices at load to this type (Q8_0, Q4_0, Q4_1, Q4_K, "
                 "Q5_0, Q5_1, F16, BF16, F32; default Q8_0 for FP8, Q4_1 for AWQ / GPTQ)");
  app.add_flag("--pack", o.pack,
               "GGUF files: load a copy pre-packed for this CPU, written on first use under "
               "$XDG_CACHE_HOME/deepbatch/packed (about the file's size), so later starts map the matrices "
               "instead of repacking them");
  app.add_option("--device", o.device,
                 "Where the model computes: cpu, or cuda (device 0; builds configured with -DDB_CUDA=ON)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
}

LoadOptions load_options(const ModelOptions& o) {
  LoadOptions l;
  if (!o.quantize.empty()) l.quantize = load_quantize_type_from_name(o.quantize);
  l.pack = o.pack;
  l.device = device_from_name(o.device);
  const std::string why = device_unavailable_reason(l.device);
  if (!why.empty()) throw Error("--device " + o.device + ": " + why);
  if (l.device != Device::Cpu && l.pack)
    throw Error("--pack loads a copy packed for this CPU; --device " + o.device + " reads the file's rows: drop --pack");
  return l;
}

void add_sampling_options(CLI::App& app, SamplingOptions& o) {
  app.add_option("-n,--max-tokens", o.max_tokens, "Tokens to generate at most")->capture_default_str();
  app.add_option("--temp,--temperature", o.temperature, "Sampling temperature (0 = greedy)")->capture_default_str();
  app.add_option("--top-k", o.top_k, "Keep the k most likely tokens (0 = off)")->capture_default_str();
  app.add_option("--top-p", o.top_p, "Nucleus sampling mass")->capture_default_str();
  app.add_option("--min-p", o.min_p, "Drop tokens below min-p times the top probability")->capture_default_str();
  app.add_option("--repetition-penalty", o.repetition_penalty, "Penalty for tokens already in prompt or output")
      ->capture_default_str();
  app.add_option("--presence-penalty", o.presence_penalty, "Penalty for tokens present in the output")
      ->capture_default_str();
  app.add_option("--frequency-penalty", o.frequency_penalty, "Penalty per occurrence in the output")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Random seed (same seed, same text)");
  app.add_flag("--ignore-eos", o.ignore_eos, "Do not stop at end-of-generation tokens");
}

SamplingParams to_sampling_params(const SamplingOptions& o) {
  SamplingParams p;
  p.temperature = o.temperature;
  p.top_k = o.top_k;
  p.top_p = o.top_p;
  p.min_p = o.min_p;
  p.repetition_penalty = o.repetition_penalty;
  p.presence_penalty = o.presence_penalty;
  p.frequency_penalty = o.frequency_penalty;
  p.seed = o.seed;
  p.validate();
  if (o.max_tokens < 1) throw Error("--max-tokens must be at least 1, got " + std::to_string(o.max_tokens));
  return p;
}

DType parse_kv_dtype(const std::string& s) { return kv_dtype_from_name(s, "--kv-dtype"); }

void add_output_parser_options(CLI::App& app, OutputParserOptions& o) {
  app.add_option("--reasoning-parser", o.reasoning,
                 "Chat answers: put <think>...</think> text in reasoning_content (deepseek_r1), never (none), or "
                 "when the model's chat template thinks (auto)")
      ->check(CLI::IsMember({"auto", "deepseek_r1", "none"}))
      ->capture_default_str();
  app.add_option("--tool-call-parser", o.tool_calls,
                 "Chat with tools and tool_choice auto: read tool calls written as <tool_call>{...}</tool_call> "
                 "(hermes) or with DeepSeek's tool-call tokens (deepseek_v3), as the chat template renders them "
                 "(auto), or refuse tool_choice auto (none)")
      ->check(CLI::IsMember({"auto", "hermes", "deepseek_v3", "none"}))
      ->capture_default_str();
}

void apply_output_parsers(ModelBundle& bundle, const OutputParserOptions& o) {
  if (o.reasoning != "auto") bundle.set_reasoning_split(o.reasoning == "deepseek_r1");
  if (o.tool_calls != "auto") bundle.set_tool_call_format(*chat::tool_call_format_named(o.tool_calls));
}

}  // namespace db::cli
