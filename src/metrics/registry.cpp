#include "metrics/registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "util/error.h"

namespace db::metrics {

namespace {

std::string escape_help(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

bool valid_name(const std::string& name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':') ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string escape_label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

FamilyBase::FamilyBase(Names names, std::string help, const char* type, std::vector<std::string> label_names)
    : names_(std::move(names.list)), help_(std::move(help)), type_(type), label_names_(std::move(label_names)) {
  if (names_.empty()) throw Error("a metric needs a name");
  for (const std::string& name : names_)
    if (!valid_name(name, true)) throw Error("invalid metric name '" + name + "'");
  for (const std::string& l : label_names_)
    if (!valid_name(l, false) || l == "le" || l.rfind("__", 0) == 0)
      throw Error("invalid label name '" + l + "' for metric " + names_.front());
}

void FamilyBase::render(std::string& out) const {
  for (const std::string& name : names_) {
    out += "# HELP " + name + " " + escape_help(help_) + "\n";
    out += "# TYPE " + name + " " + type_ + "\n";
    render_samples(out, name);
  }
}

std::string FamilyBase::label_text(const std::vector<std::string>& values, const std::string& extra) const {
  std::string text;
  for (size_t i = 0; i < label_names_.size(); ++i) {
    if (!text.empty()) text += ',';
    text += label_names_[i] + "=\"" + escape_label_value(values[i]) + "\"";
  }
  if (!extra.empty()) text += (text.empty() ? "" : ",") + extra;
  return text.empty() ? "" : "{" + text + "}";
}

void FamilyBase::check_arity(const std::vector<std::string>& values) const {
  if (values.size() != label_names_.size())
    throw Error("metric " + names_.front() + " takes " + std::to_string(label_names_.size()) + " label values, got " +
                std::to_string(values.size()));
}

template <class M>
void ValueFamily<M>::render_samples(std::string& out, const std::string& name) const {
  std::lock_guard<std::mutex> lock(this->mu_);
  for (const auto& [values, child] : this->children_)
    out += name + this->label_text(values) + " " + format_value(child->value()) + "\n";
}

template class ValueFamily<Counter>;
template class ValueFamily<Gauge>;

HistogramFamily::HistogramFamily(Names names, std::string help, std::vector<double> bounds,
                                 std::vector<std::string> label_names)
    : Family<Histogram>(std::move(names), std::move(help), "histogram", std::move(label_names)),
      bounds_(std::move(bounds)) {
  Histogram check(bounds_);  // validates the bounds once, here
}

void HistogramFamily::render_samples(std::string& out, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, child] : children_) {
    const Histogram::Snapshot s = child->snapshot();
    for (size_t i = 0; i < s.cumulative.size(); ++i) {
      const std::string le = i < bounds_.size() ? format_value(bounds_[i]) : "+Inf";
      out += name + "_bucket" + label_text(values, "le=\"" + le + "\"") + " " + std::to_string(s.cumulative[i]) + "\n";
    }
    out += name + "_sum" + label_text(values) + " " + format_value(s.sum) + "\n";
    out += name + "_count" + label_text(values) + " " + std::to_string(s.count) + "\n";
  }
}

template <class F>
F& Registry::add(std::unique_ptr<F> family) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> taken;
  for (const auto& f : families_) taken.insert(taken.end(), f->names().begin(), f->names().end());
  for (const std::string& name : family->names()) {
    if (std::find(taken.begin(), taken.end(), name) != taken.end())
      throw Error("metric " + name + " is registered twice");
    taken.push_back(name);
  }
  F& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

Family<Counter>& Registry::counter(Names names, const std::string& help, std::vector<std::string> labels) {
  return add(std::make_unique<ValueFamily<Counter>>(std::move(names), help, "counter", std::move(labels)));
}

Family<Gauge>& Registry::gauge(Names names, const std::string& help, std::vector<std::string> labels) {
  return add(std::make_unique<ValueFamily<Gauge>>(std::move(names), help, "gauge", std::move(labels)));
}

HistogramFamily& Registry::histogram(Names names, const std::string& help, std::vector<double> bounds,
                                     std::vector<std::string> labels) {
  return add(std::make_unique<HistogramFamily>(std::move(names), help, std::move(bounds), std::move(labels)));
}

std::string Registry::render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& f : families_) f->render(out);
  return out;
}

}  // namespace db::metrics
