#include "loadtest/report.h"

#include <fstream>

#include "util/error.h"

namespace db::loadtest {

OrderedJson to_json(const SyntheticWorkloadSpec& spec) {
  OrderedJson j;
  j["num_requests"] = spec.num_requests;
  j["input_len"] = spec.input_len.describe();
  j["output_len"] = spec.output_len.describe();
  j["shared_prefix"] = {{"num_prefixes", spec.shared_prefix.num_prefixes},
                        {"prefix_tokens", spec.shared_prefix.prefix_tokens},
                        {"fraction", spec.shared_prefix.fraction}};
  j["seed"] = spec.seed;
  return j;
}

OrderedJson to_json(const ArrivalSpec& spec) {
  OrderedJson j;
  j["process"] = spec.describe();
  j["seed"] = spec.seed;
  return j;
}

OrderedJson to_json(const MeasurementWindow& w) {
  return {{"warmup_s", w.warmup_s}, {"cooldown_s", w.cooldown_s}, {"measured_s", w.duration()}};
}

OrderedJson to_json(const std::vector<Slo>& slos) {
  OrderedJson j = OrderedJson::array();
  for (const Slo& s : slos)
    j.push_back({{"metric", metric_name(s.metric)}, {"percentile", s.percentile}, {"limit_s", s.limit_s}});
  return j;
}

OrderedJson to_json(const Distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"stddev", d.stddev}, {"min", d.min}, {"max", d.max},
          {"p50", d.p50},     {"p90", d.p90},   {"p95", d.p95},       {"p99", d.p99}, {"p99.9", d.p999}};
}

OrderedJson to_json(const RunSummary& s) {
  OrderedJson j;
  j["requests"] = s.requests;
  j["succeeded"] = s.succeeded;
  j["failed"] = s.failed;
  j["good"] = s.good;
  j["duration_s"] = s.duration_s;
  j["request_rate"] = s.request_rate;
  j["input_tokens_per_s"] = s.input_tokens_per_s;
  j["output_tokens_per_s"] = s.output_tokens_per_s;
  j["goodput"] = s.goodput;
  for (Metric m : {Metric::TTFT, Metric::TPOT, Metric::ITL, Metric::E2E})
    j[std::string(metric_name(m))] = to_json(s.metric(m));
  j["itl_jitter"] = {{"stddev", s.itl_jitter.stddev}, {"p99_minus_p50", s.itl_jitter.p99_minus_p50}};
  j["errors"] = OrderedJson::object();
  for (const auto& [type, count] : s.errors) j["errors"][type] = count;
  return j;
}

OrderedJson to_json(const CapacityResult& r) {
  OrderedJson j;
  j["found"] = r.found;
  j["sustainable_rate"] = r.sustainable_rate;
  j["first_bad_rate"] = r.first_bad_rate ? OrderedJson(*r.first_bad_rate) : OrderedJson(nullptr);
  j["converged"] = r.converged;
  j["stop_reason"] = r.stop_reason;
  j["steps"] = OrderedJson::array();
  for (const CapacityStep& s : r.steps) {
    OrderedJson step;
    step["index"] = s.index;
    step["phase"] = s.phase;
    step["rate"] = s.rate;
    step["met"] = s.met;
    step["decided_by"] = s.decided_by;
    step["runs"] = s.runs;
    step["requests"] = s.requests;
    step["failed"] = s.failed;
    step["achieved_rate"] = s.achieved_rate;
    step["goodput"] = s.goodput;
    step["slos"] = OrderedJson::array();
    for (const SloCheck& c : s.checks) {
      const SloJudgement& jd = c.judgement;
      const auto end = [](const std::optional<double>& v) { return v ? OrderedJson(*v) : OrderedJson(nullptr); };
      step["slos"].push_back({{"slo", c.slo.describe()},
                              {"metric", metric_name(c.slo.metric)},
                              {"percentile", c.slo.percentile},
                              {"limit_s", c.slo.limit_s},
                              {"observed", c.observed},
                              {"met", c.met},
                              {"verdict", verdict_name(jd.verdict)},
                              {"samples", jd.samples},
                              {"above_percentile", jd.above_estimate},
                              {"above_limit", jd.above_limit},
                              {"interval", {{"confidence", jd.confidence},
                                            {"lower_rank", jd.ranks.has_lower() ? OrderedJson(jd.ranks.lower_rank)
                                                                                : OrderedJson(nullptr)},
                                            {"upper_rank", jd.ranks.has_upper() ? OrderedJson(jd.ranks.upper_rank)
                                                                                : OrderedJson(nullptr)},
                                            {"lower", end(jd.lower)},
                                            {"upper", end(jd.upper)}}},
                              {"too_few_samples", jd.too_few_samples}});
    }
    step["latency"] = {{"ttft", to_json(s.ttft)}, {"tpot", to_json(s.tpot)}, {"itl", to_json(s.itl)},
                       {"e2e", to_json(s.e2e)}};
    j["steps"].push_back(std::move(step));
  }
  return j;
}

OrderedJson make_report(const OrderedJson& settings, const RunSummary& summary,
                        const std::optional<CapacityResult>& capacity) {
  OrderedJson j;
  j["settings"] = settings;
  j["summary"] = to_json(summary);
  if (capacity) j["capacity"] = to_json(*capacity);
  return j;
}

namespace {

// j[key] as T; throws db::Error naming `where.key` when it is missing or mistyped.
template <typename T>
T field(const OrderedJson& j, const std::string& key, const std::string& where) {
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw Error("report " + where + ": missing or mistyped \"" + key + "\"");
  }
}

Distribution distribution_from_json(const OrderedJson& j, const std::string& where) {
  if (!j.is_object()) throw Error("report " + where + ": expected an object");
  Distribution d;
  d.count = field<int64_t>(j, "count", where);
  d.mean = field<double>(j, "mean", where);
  d.stddev = field<double>(j, "stddev", where);
  d.min = field<double>(j, "min", where);
  d.max = field<double>(j, "max", where);
  d.p50 = field<double>(j, "p50", where);
  d.p90 = field<double>(j, "p90", where);
  d.p95 = field<double>(j, "p95", where);
  d.p99 = field<double>(j, "p99", where);
  d.p999 = field<double>(j, "p99.9", where);
  return d;
}

}  // namespace

RunSummary summary_from_json(const OrderedJson& j) {
  const std::string where = "summary";
  if (!j.is_object()) throw Error("report summary: expected an object");
  RunSummary s;
  s.requests = field<int64_t>(j, "requests", where);
  s.succeeded = field<int64_t>(j, "succeeded", where);
  s.failed = field<int64_t>(j, "failed", where);
  s.good = field<int64_t>(j, "good", where);
  s.duration_s = field<double>(j, "duration_s", where);
  s.request_rate = field<double>(j, "request_rate", where);
  s.input_tokens_per_s = field<double>(j, "input_tokens_per_s", where);
  s.output_tokens_per_s = field<double>(j, "output_tokens_per_s", where);
  s.goodput = field<double>(j, "goodput", where);
  s.ttft = distribution_from_json(j.value("ttft", OrderedJson()), where + ".ttft");
  s.tpot = distribution_from_json(j.value("tpot", OrderedJson()), where + ".tpot");
  s.itl = distribution_from_json(j.value("itl", OrderedJson()), where + ".itl");
  s.e2e = distribution_from_json(j.value("e2e", OrderedJson()), where + ".e2e");
  const OrderedJson jitter = j.value("itl_jitter", OrderedJson());
  if (!jitter.is_object()) throw Error("report summary.itl_jitter: expected an object");
  s.itl_jitter.stddev = field<double>(jitter, "stddev", where + ".itl_jitter");
  s.itl_jitter.p99_minus_p50 = field<double>(jitter, "p99_minus_p50", where + ".itl_jitter");
  const OrderedJson errors = j.value("errors", OrderedJson::object());
  if (!errors.is_object()) throw Error("report summary.errors: expected an object");
  for (const auto& [type, count] : errors.items()) s.errors[type] = field<int64_t>(errors, type, where + ".errors");
  return s;
}

void write_report(const std::string& path, const OrderedJson& report) {
  std::ofstream out(path);
  if (!out) throw Error(sys_error(path, "cannot write report"));
  out << report.dump(2) << '\n';
  out.flush();
  if (!out) throw Error(sys_error(path, "cannot write report"));
}

}  // namespace db::loadtest
