// deepbatch._core: one engine over one model for the Python package
// (python/deepbatch). Requests arrive as OpenAI-shaped bodies, so they are
// parsed, validated and prepared exactly as the server and the batch runner do
// (api/); the Python side only builds the bodies and shapes the results. The
// GIL is released while the engine loads and generates.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/api_error.h"
#include "api/generation_result.h"
#include "api/openai_request.h"
#include "api/request_body.h"
#include "batch/batch_job.h"
#include "batch/batch_plan.h"
#include "api/chat_request.h"
#include "bundle/model_bundle.h"
#include "engine/engine.h"
#include "engine/option_values.h"
#include "util/error.h"

namespace py = pybind11;

namespace db::python {
namespace {

// The engine options LLM(...) takes besides the model, by name: the CLI's engine
// options (--max-num-seqs -> max_num_seqs), with Python values (True/False for on/off,
// three-number sequences for per-class values) and the CLI's defaults, through the
// same parsers where the CLI has one (engine/option_values.h). The engine validates
// the values.
using OptionSetter = void (*)(EngineConfig&, const py::handle&);

const std::vector<std::pair<std::string, OptionSetter>>& engine_option_table() {
  static const std::vector<std::pair<std::string, OptionSetter>> table = {
      {"threads", [](EngineConfig& c, const py::handle& v) { c.threads = py::cast<int>(v); }},
      {"max_num_seqs",
       [](EngineConfig& c, const py::handle& v) { set_max_num_seqs(c, py::cast<int>(v), "max_num_seqs"); }},
      {"max_num_batched_tokens",
       [](EngineConfig& c, const py::handle& v) {
         set_max_num_batched_tokens(c, py::cast<int>(v), "max_num_batched_tokens");
       }},
      {"long_prefill_threshold",
       [](EngineConfig& c, const py::handle& v) { c.long_prefill_threshold = py::cast<int>(v); }},
      {"block_size", [](EngineConfig& c, const py::handle& v) { c.block_size = py::cast<int>(v); }},
      {"kv_cache_dtype",
       [](EngineConfig& c, const py::handle& v) {
         c.kv_dtype = kv_dtype_from_name(py::cast<std::string>(v), "kv_cache_dtype");
       }},
      {"kv_cache_memory", [](EngineConfig& c, const py::handle& v) { c.kv_cache_memory = py::cast<int64_t>(v); }},
      {"kv_cache_fraction", [](EngineConfig& c, const py::handle& v) { c.kv_cache_fraction = py::cast<double>(v); }},
      {"enable_prefix_caching",
       [](EngineConfig& c, const py::handle& v) { c.enable_prefix_caching = py::cast<bool>(v); }},
      {"admission",
       [](EngineConfig& c, const py::handle& v) {
         c.admission = admission_policy_from_name(py::cast<std::string>(v), "admission");
       }},
      {"decode_headroom", [](EngineConfig& c, const py::handle& v) { c.decode_headroom = py::cast<int>(v); }},
      {"kv_watermarks",
       [](EngineConfig& c, const py::handle& v) { c.kv_watermarks = py::cast<std::array<double, 3>>(v); }},
      {"max_queue_wait",
       [](EngineConfig& c, const py::handle& v) { c.max_queue_wait = py::cast<std::array<double, 3>>(v); }},
      {"queue_timeout_action",
       [](EngineConfig& c, const py::handle& v) {
         const std::string action = py::cast<std::string>(v);
         if (action != "promote" && action != "reject")
           throw Error("queue_timeout_action: expected 'promote' or 'reject', got '" + action + "'");
         c.reject_on_queue_timeout = action == "reject";
       }},
      {"interactive_step_tokens",
       [](EngineConfig& c, const py::handle& v) { c.interactive_step_tokens = py::cast<int>(v); }},
      {"interactive_hold", [](EngineConfig& c, const py::handle& v) { c.interactive_hold_s = py::cast<double>(v); }},
      {"memory_guard", [](EngineConfig& c, const py::handle& v) { c.memory_guard.enabled = py::cast<bool>(v); }},
      {"memory_guard_high",
       [](EngineConfig& c, const py::handle& v) { c.memory_guard.high_water = py::cast<double>(v); }},
      {"memory_guard_low", [](EngineConfig& c, const py::handle& v) { c.memory_guard.low_water = py::cast<double>(v); }},
      {"memory_limit", [](EngineConfig& c, const py::handle& v) { c.memory_guard.limit_bytes = py::cast<int64_t>(v); }},
      {"sla_tpot_p99", [](EngineConfig& c, const py::handle& v) { c.sla.tpot_p99_s = py::cast<double>(v); }},
      {"sla_ttft_p99", [](EngineConfig& c, const py::handle& v) { c.sla.ttft_p99_s = py::cast<double>(v); }},
      {"sla_window", [](EngineConfig& c, const py::handle& v) { c.sla_window_s = py::cast<double>(v); }},
      {"speculative", [](EngineConfig& c, const py::handle& v) { c.speculative.method = py::cast<std::string>(v); }},
      {"speculative_model",
       [](EngineConfig& c, const py::handle& v) { c.speculative.model = py::cast<std::string>(v); }},
      {"num_speculative_tokens",
       [](EngineConfig& c, const py::handle& v) { c.speculative.num_tokens = py::cast<int>(v); }},
      {"ngram_min", [](EngineConfig& c, const py::handle& v) { c.speculative.ngram_min = py::cast<int>(v); }},
      {"ngram_max", [](EngineConfig& c, const py::handle& v) { c.speculative.ngram_max = py::cast<int>(v); }},
      {"speculative_adaptive",
       [](EngineConfig& c, const py::handle& v) { c.speculative.adaptive = py::cast<bool>(v); }},
  };
  return table;
}

// Raises TypeError for an unknown option or a value of the wrong type, ValueError
// (db::Error) for a value out of its set.
EngineConfig engine_config(const py::dict& opts) {
  EngineConfig c;
  // Unset, the batch caps are the command line's "auto" (option_values.h).
  set_max_num_seqs(c, 0, "max_num_seqs");
  set_max_num_batched_tokens(c, 0, "max_num_batched_tokens");
  const auto& table = engine_option_table();
  for (const auto& [key, value] : opts) {
    const std::string k = py::cast<std::string>(key);
    if (value.is_none()) continue;
    auto it = std::find_if(table.begin(), table.end(), [&](const auto& entry) { return entry.first == k; });
    if (it == table.end()) {
      std::string known;
      for (const auto& entry : table) known += (known.empty() ? "" : ", ") + entry.first;
      throw py::type_error("unknown engine option '" + k + "' (known: " + known + ")");
    }
    try {
      it->second(c, value);
    } catch (const py::cast_error&) {
      throw py::type_error("engine option '" + k + "': a value of type " +
                           py::cast<std::string>(py::str(py::type::of(value).attr("__name__"))) + " does not fit");
    }
  }
  if (!c.speculative.model.empty()) {
    if (c.speculative.method.empty()) c.speculative.method = "draft_model";
    else if (c.speculative.method != "draft_model")
      throw Error("speculative_model: drafts with a model; it does not combine with speculative='" +
                  c.speculative.method + "'");
  }
  return c;
}

py::dict choice_dict(const api::ChoiceOutput& c, bool with_logprobs) {
  py::dict d;
  d["text"] = c.text;
  d["token_ids"] = c.token_ids;
  d["finish_reason"] = finish_reason_name(c.finish);
  d["stop_reason"] = c.stop_reason;
  if (with_logprobs) {
    d["logprobs"] = c.logprobs;
    d["top_logprobs"] = c.top_logprobs;
  } else {
    d["logprobs"] = py::none();
    d["top_logprobs"] = py::none();
  }
  return d;
}

// The engine requests of one call (a generate() or a stream): their results, filled by
// the engine's output thread. Shared with the callbacks, so it outlives an abandoned stream.
struct Submission {
  std::vector<api::PreparedRequest> prepared;
  std::vector<bool> logprobs;  // per body: it asked for logprobs
  std::vector<api::GenerationResult> results;
  std::vector<RequestId> ids;  // submitted engine requests
  std::mutex mu;
  std::condition_variable cv;
  size_t open = 0;        // bodies not finished
  uint64_t outputs = 0;   // outputs received so far

  // Body i as {"prompt_token_ids", "choices", "finished"}; raises RuntimeError when it
  // ended in an engine error. Call with mu held.
  py::dict snapshot(size_t i) const {
    const api::GenerationResult& r = results[i];
    if (r.done() && r.failed()) throw std::runtime_error(r.failure_message());
    py::dict d;
    d["prompt_token_ids"] = prepared[i].parts.front().prompt;
    py::list choices;
    for (const api::ChoiceOutput& c : r.choices()) choices.append(choice_dict(c, logprobs[i]));
    d["choices"] = choices;
    d["finished"] = r.done();
    return d;
  }
};

class Core;

// One request's outputs as they come (Core::stream): next() returns its state after
// each batch of new outputs, the last one finished.
class Stream {
 public:
  Stream(std::shared_ptr<Submission> sub, Core& core) : sub_(std::move(sub)), core_(core) {}
  py::dict next();
  void abort();

 private:
  std::shared_ptr<Submission> sub_;
  Core& core_;
  uint64_t seen_ = 0;
  bool ended_ = false;
};

class Core {
 public:
  Core(const std::string& model, const py::dict& opts) {
    EngineConfig cfg;
    LoadOptions load;
    try {
      py::dict engine_opts(opts);  // a copy: "quantize" and "pack" are load options, not engine ones
      if (engine_opts.contains("quantize")) {
        const py::object q = engine_opts.attr("pop")("quantize");
        if (!q.is_none()) load.quantize = load_quantize_type_from_name(py::cast<std::string>(q));
      }
      if (engine_opts.contains("pack")) {
        const py::object p = engine_opts.attr("pop")("pack");
        if (!py::isinstance<py::bool_>(p)) throw py::type_error("pack must be a bool");
        load.pack = py::cast<bool>(p);
      }
      cfg = engine_config(engine_opts);
    } catch (const Error& e) {
      throw py::value_error(e.what());
    }
    py::gil_scoped_release release;
    try {
      bundle_ = ModelBundle::open(model, cfg.threads, load);
      engine_ = std::make_unique<Engine>(*bundle_, cfg);
    } catch (const std::exception& e) {
      py::gil_scoped_acquire acquire;
      throw py::value_error(e.what());
    }
  }

  // Runs request bodies of `endpoint` ("completions" or "chat") to completion and
  // returns, per body, {"prompt_token_ids", "choices", "finished"} in body order.
  // `progress(finished_bodies, generated_tokens)`, when given, is called about 10
  // times a second. Ctrl-C aborts every request of the call (their KV blocks return
  // to the pool) and raises KeyboardInterrupt once the engine has ended them.
  py::list generate(const std::string& endpoint, const std::vector<std::string>& bodies, const py::object& progress) {
    const std::shared_ptr<Submission> sub = submit(endpoint, bodies);
    wait(*sub, [&] { return sub->open == 0; }, progress);
    std::lock_guard<std::mutex> lock(sub->mu);
    py::list out;
    for (size_t i = 0; i < sub->results.size(); ++i) out.append(sub->snapshot(i));
    return out;
  }

  Stream stream(const std::string& endpoint, const std::string& body) { return Stream(submit(endpoint, {body}), *this); }

  std::vector<int32_t> encode(const std::string& text) const { return bundle_->encode_prompt(text); }
  // Ids of text a chat template rendered (it holds its own BOS; special tokens parsed).
  std::vector<int32_t> encode_rendered(const std::string& text) const {
    return bundle_->tokenizer().encode(text, /*add_special=*/false, /*parse_special=*/true);
  }
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
    return bundle_->tokenizer().decode(ids, skip_special_tokens);
  }
  int64_t max_context() const { return bundle_->model().config().max_context; }

  // The conversation (a chat request body's "messages", as JSON) rendered by the
  // model's chat template; raises ValueError as a chat request would.
  std::string render_chat(const std::string& messages_json, bool add_generation_prompt) const {
    try {
      const std::string body = R"({"messages":)" + messages_json + "}";
      const api::ApiRequest req = api::parse_request_body(api::Endpoint::ChatCompletions, body);
      return bundle_->render_chat(std::get<api::ChatCompletionRequest>(req).messages, add_generation_prompt);
    } catch (const Error& e) {
      throw py::value_error(e.what());
    }
  }

  // Runs an OpenAI Batch JSONL file into an output file, as `deepbatch run` does
  // (the output is the journal: an existing one is resumed). Returns the summary's
  // counts. Ctrl-C stops it (requests in flight get no record) and raises
  // KeyboardInterrupt.
  py::dict run_batch(const std::string& input_path, const std::string& output_path, const std::string& model_name) {
    return run_batch_job(input_path, nullptr, output_path, model_name);
  }
  // run_batch over some lines of a batch file, each with its line number there (the
  // numbers its records name): deepbatch.ray's actors run their share of a file so.
  py::dict run_batch_lines(std::vector<std::pair<size_t, std::string>> lines, const std::string& output_path,
                           const std::string& model_name) {
    std::vector<batch::NumberedLine> numbered;
    numbered.reserve(lines.size());
    for (auto& [line_no, text] : lines) numbered.push_back({line_no, std::move(text)});
    return run_batch_job("", &numbered, output_path, model_name);
  }

  // The engine's counters now: sequences running and waiting, tokens, steps, preemptions and
  // finished sequences so far, KV blocks.
  py::dict stats() const {
    const EngineStats st = engine_->stats();
    py::dict d;
    d["running"] = st.running;
    d["waiting"] = st.waiting;
    d["prompt_tokens"] = st.prompt_tokens;
    d["generated_tokens"] = st.generated_tokens;
    d["steps"] = st.steps;
    d["preemptions"] = st.preemptions;
    d["finished_sequences"] = st.finished_sequences;
    d["num_blocks"] = st.num_blocks;
    d["free_blocks"] = st.free_blocks;
    d["kv_usage"] = st.kv_usage;
    return d;
  }

  void abort(Submission& sub) {
    for (RequestId id : sub.ids) engine_->abort(id);
  }

  // Blocks (GIL released) until done() holds under sub.mu; polls Ctrl-C and calls
  // `progress` between waits. On Ctrl-C: aborts the submission, waits for its ends,
  // raises KeyboardInterrupt.
  template <class Done>
  void wait(Submission& sub, Done done, const py::object& progress = py::none()) {
    bool interrupted = false;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(sub.mu);
      while (!(interrupted ? sub.open == 0 : done())) {
        sub.cv.wait_for(lock, std::chrono::milliseconds(100));
        if (interrupted || done()) continue;
        size_t finished = 0;
        int64_t tokens = 0;
        if (!progress.is_none())
          for (const api::GenerationResult& r : sub.results) {
            finished += r.done() ? 1 : 0;
            tokens += r.completion_tokens();
          }
        lock.unlock();
        {
          py::gil_scoped_acquire acquire;
          if (PyErr_CheckSignals() != 0) {
            interrupted = true;
          } else if (!progress.is_none()) {
            try {
              progress(finished, tokens);
            } catch (py::error_already_set& e) {  // it raised (e.g. KeyboardInterrupt): stop as for Ctrl-C
              e.restore();  // raised again below, once the engine has ended the requests
              interrupted = true;
            }
          }
        }
        if (interrupted) abort(sub);
        lock.lock();
      }
    }
    if (interrupted) throw py::error_already_set();
  }

 private:
  // Runs the batch job on this engine with the GIL released; Ctrl-C stops it.
  py::dict run_batch_job(const std::string& input_path, const std::vector<batch::NumberedLine>* lines,
                         const std::string& output_path, const std::string& model_name) {
    std::atomic<bool> stop{false};
    batch::BatchJobOptions o;
    o.input_path = input_path;
    o.lines = lines;
    o.output_path = output_path;
    o.model_name = model_name;
    o.max_context = bundle_->model().config().max_context;
    o.stop = &stop;
    batch::BatchSummary summary;
    std::string error;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false, interrupted = false;
    {
      py::gil_scoped_release release;
      std::thread job([&] {
        try {
          summary = batch::run_batch_job(*engine_, *bundle_, o);
        } catch (const std::exception& e) {
          error = e.what();
        }
        std::lock_guard<std::mutex> lock(mu);
        done = true;
        cv.notify_all();
      });
      std::unique_lock<std::mutex> lock(mu);
      while (!done) {
        cv.wait_for(lock, std::chrono::milliseconds(100));
        if (done || interrupted) continue;
        lock.unlock();
        {
          py::gil_scoped_acquire acquire;
          interrupted = PyErr_CheckSignals() != 0;
        }
        if (interrupted) stop = true;
        lock.lock();
      }
      lock.unlock();
      job.join();
    }
    if (interrupted) throw py::error_already_set();
    if (!error.empty()) throw py::value_error(error);
    py::dict d;
    d["input_lines"] = summary.input_lines;
    d["ok"] = summary.ok;
    d["failed"] = summary.failed;
    d["skipped"] = summary.skipped;
    d["prompt_tokens"] = summary.prompt_tokens;
    d["generated_tokens"] = summary.generated_tokens;
    d["wall_seconds"] = summary.wall_seconds;
    return d;
  }

  std::shared_ptr<Submission> submit(const std::string& endpoint, const std::vector<std::string>& bodies) {
    const api::Endpoint ep = endpoint == "chat" ? api::Endpoint::ChatCompletions : api::Endpoint::Completions;
    const int64_t max_context = bundle_->model().config().max_context;
    const api::BodyLimits limits = api::body_limits(max_context, bundle_->tokenizer());
    auto sub = std::make_shared<Submission>();
    try {
      for (const std::string& body : bodies) {
        const api::ApiRequest req = api::parse_request_body(ep, body, limits);
        sub->prepared.push_back(api::prepare_request(req, *bundle_, max_context));
        sub->logprobs.push_back(sub->prepared.back().parts.front().sampling.logprobs.has_value());
      }
    } catch (const Error& e) {
      throw py::value_error(e.what());
    }
    sub->results.reserve(sub->prepared.size());
    for (const api::PreparedRequest& p : sub->prepared) sub->results.emplace_back(p);
    sub->open = sub->prepared.size();
    std::string error;
    {
      py::gil_scoped_release release;
      for (size_t i = 0; i < sub->prepared.size() && error.empty(); ++i)
        for (size_t part = 0; part < sub->prepared[i].parts.size(); ++part) {
          try {
            sub->ids.push_back(engine_->submit(
                sub->prepared[i].parts[part],
                [sub, i, part](RequestId, const SampleOutput& out, const RequestStats& stats, bool final) {
                  std::lock_guard<std::mutex> lock(sub->mu);
                  ++sub->outputs;
                  if (sub->results[i].add(part, out, stats, final)) --sub->open;
                  sub->cv.notify_all();
                }));
          } catch (const std::exception& e) {  // refused: nothing of this call runs
            error = e.what();
            std::lock_guard<std::mutex> lock(sub->mu);
            for (size_t j = i; j < sub->prepared.size(); ++j)
              for (size_t rest = j == i ? part : 0; rest < sub->prepared[j].parts.size(); ++rest)
                if (!sub->results[j].done()) sub->results[j].close_part(rest);
            sub->open = 0;
            for (const api::GenerationResult& r : sub->results) sub->open += r.done() ? 0 : 1;
            break;
          }
        }
      if (!error.empty()) {
        abort(*sub);
        std::unique_lock<std::mutex> lock(sub->mu);
        sub->cv.wait(lock, [&] { return sub->open == 0; });
      }
    }
    if (!error.empty()) throw py::value_error(error);
    return sub;
  }

  std::unique_ptr<ModelBundle> bundle_;
  std::unique_ptr<Engine> engine_;
};

py::dict Stream::next() {
  if (ended_) throw py::stop_iteration();
  core_.wait(*sub_, [&] { return sub_->outputs != seen_ || sub_->open == 0; });
  std::lock_guard<std::mutex> lock(sub_->mu);
  seen_ = sub_->outputs;
  ended_ = sub_->open == 0;
  return sub_->snapshot(0);
}

void Stream::abort() { core_.abort(*sub_); }

// What a batch file still needs given its output file (batch::plan_batch): the error
// records of bad lines not yet written, and the line numbers of the requests to run.
py::dict plan_batch_file(const std::string& input_path, const std::string& output_path) {
  batch::BatchPlan plan;
  try {
    plan = batch::plan_batch(batch::read_batch_input(input_path), output_path);
  } catch (const Error& e) {
    throw py::value_error(e.what());
  }
  std::vector<std::string> records;
  for (size_t i : plan.unrecorded_errors) {
    const batch::LineError& e = plan.input.errors[i];
    records.push_back(batch::error_record(e.custom_id, e.code, e.message));
  }
  std::vector<size_t> pending;
  for (size_t i : plan.pending) pending.push_back(plan.input.items[i].line_no);
  py::dict d;
  d["records"] = records;
  d["pending"] = pending;
  d["skipped"] = plan.skipped;
  d["input_lines"] = plan.input.lines;
  return d;
}

}  // namespace
}  // namespace db::python

PYBIND11_MODULE(_core, m) {
  using db::python::Core;
  m.doc() = "deepbatch's engine, driven by OpenAI-shaped request bodies";
  using db::python::Stream;
  py::class_<Stream>(m, "Stream")
      .def("__iter__", [](Stream& s) -> Stream& { return s; })
      .def("__next__", &Stream::next)
      .def("abort", &Stream::abort);
  m.def("plan_batch_file", &db::python::plan_batch_file, py::arg("input_path"), py::arg("output_path"));
  py::class_<Core>(m, "Core")
      .def(py::init<const std::string&, const py::dict&>(), py::arg("model"), py::arg("options"))
      .def("generate", &Core::generate, py::arg("endpoint"), py::arg("bodies"), py::arg("progress") = py::none())
      .def("stream", &Core::stream, py::arg("endpoint"), py::arg("body"), py::keep_alive<0, 1>())
      .def("encode", &Core::encode, py::arg("text"))
      .def("encode_rendered", &Core::encode_rendered, py::arg("text"))
      .def("decode", &Core::decode, py::arg("ids"), py::arg("skip_special_tokens") = true)
      .def("max_context", &Core::max_context)
      .def("run_batch", &Core::run_batch, py::arg("input_path"), py::arg("output_path"), py::arg("model_name"))
      .def("run_batch_lines", &Core::run_batch_lines, py::arg("lines"), py::arg("output_path"), py::arg("model_name"))
      .def("stats", &Core::stats)
      .def("render_chat", &Core::render_chat, py::arg("messages_json"), py::arg("add_generation_prompt") = true);
}
