// A Prometheus registry: metric families (name, help, label names) whose
// children (one per label-value tuple) are created on first use, rendered in the
// text exposition format 0.0.4. Thread-safe; references to children stay valid
// for the registry's lifetime.
//
//   Registry reg;
//   auto& reqs = reg.counter("deepbatch:request_success_total", "Finished requests", {"finished_reason"});
//   reqs.labels({"stop"}).inc();
//   reg.render();  // "# HELP ...\n# TYPE ... counter\ndeepbatch:request_success_total{finished_reason=\"stop\"} 1\n"
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metrics/metric.h"

namespace db::metrics {

// The names one family is exported under: usually one; several when the same
// measurement is published under more than one naming convention (each name gets
// its own HELP, TYPE and samples, all of the same values). Converts from a name.
struct Names {
  Names(const char* name) : list{name} {}            // NOLINT(google-explicit-constructor)
  Names(std::string name) : list{std::move(name)} {}  // NOLINT(google-explicit-constructor)
  Names(std::vector<std::string> names) : list(std::move(names)) {}  // NOLINT(google-explicit-constructor)
  std::vector<std::string> list;
};

// Shared part of every family: identity and rendering.
class FamilyBase {
 public:
  // Throws db::Error for no name, an invalid name or label name.
  FamilyBase(Names names, std::string help, const char* type, std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  const std::vector<std::string>& names() const { return names_; }
  // Appends, for each name, "# HELP", "# TYPE" and one line per sample to `out`.
  void render(std::string& out) const;

 protected:
  // Appends the sample lines of every child under the name `name`.
  virtual void render_samples(std::string& out, const std::string& name) const = 0;
  // `{a="x",b="y"}` for this family's label names and `values`, plus `extra` (e.g. le="0.5"); "" when empty.
  std::string label_text(const std::vector<std::string>& values, const std::string& extra = "") const;
  void check_arity(const std::vector<std::string>& values) const;

  std::vector<std::string> names_;
  std::string help_;
  const char* type_;
  std::vector<std::string> label_names_;
};

template <class M>
class Family : public FamilyBase {
 public:
  using FamilyBase::FamilyBase;
  // The child for these label values (in label-name order); throws db::Error on a wrong count.
  M& labels(const std::vector<std::string>& values) {
    check_arity(values);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = children_.find(values);
    if (it == children_.end()) it = children_.emplace(values, make_child()).first;
    return *it->second;
  }

 protected:
  virtual std::unique_ptr<M> make_child() const = 0;

  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<M>> children_;
};

// A family of counters or gauges: one "name{labels} value" line per child.
template <class M>
class ValueFamily final : public Family<M> {
 public:
  using Family<M>::Family;

 private:
  std::unique_ptr<M> make_child() const override { return std::make_unique<M>(); }
  void render_samples(std::string& out, const std::string& name) const override;
};

class HistogramFamily : public Family<Histogram> {
 public:
  HistogramFamily(Names names, std::string help, std::vector<double> bounds, std::vector<std::string> label_names);

 private:
  std::unique_ptr<Histogram> make_child() const override { return std::make_unique<Histogram>(bounds_); }
  void render_samples(std::string& out, const std::string& name) const override;
  std::vector<double> bounds_;
};

class Registry {
 public:
  // Registering a name twice (in one family or two) throws db::Error.
  Family<Counter>& counter(Names names, const std::string& help, std::vector<std::string> labels = {});
  Family<Gauge>& gauge(Names names, const std::string& help, std::vector<std::string> labels = {});
  HistogramFamily& histogram(Names names, const std::string& help, std::vector<double> bounds,
                             std::vector<std::string> labels = {});
  // The exposition text (format 0.0.4) of every family, in registration order.
  std::string render() const;

 private:
  template <class F>
  F& add(std::unique_ptr<F> family);
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_;
};

// The content type of render()'s text.
inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

// A sample value as Prometheus writes it: shortest round-trip decimal, "+Inf", "-Inf", "NaN".
std::string format_value(double v);
// A label value with \\, \" and \n escaped.
std::string escape_label_value(const std::string& v);

}  // namespace db::metrics
