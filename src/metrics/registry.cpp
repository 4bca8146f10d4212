#include "metrics/registry.h"

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

FamilyBase::FamilyBase(std::string name, std::string help, const char* type, std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), type_(type), label_names_(std::move(label_names)) {
  if (!valid_name(name_, true)) throw Error("invalid metric name '" + name_ + "'");
  for (const std::string& l : label_names_)
    if (!valid_name(l, false) || l == "le" || l.rfind("__", 0) == 0)
      throw Error("invalid label name '" + l + "' for metric " + name_);
}

void FamilyBase::render(std::string& out) const {
  out += "# HELP " + name_ + " " + escape_help(help_) + "\n";
  out += "# TYPE " + name_ + " " + type_ + "\n";
  render_samples(out);
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
    throw Error("metric " + name_ + " takes " + std::to_string(label_names_.size()) + " label values, got " +
                std::to_string(values.size()));
}

template <class M>
void ValueFamily<M>::render_samples(std::string& out) const {
  std::lock_guard<std::mutex> lock(this->mu_);
  for (const auto& [values, child] : this->children_)
    out += this->name_ + this->label_text(values) + " " + format_value(child->value()) + "\n";
}

template class ValueFamily<Counter>;
template class ValueFamily<Gauge>;

HistogramFamily::HistogramFamily(std::string name, std::string help, std::vector<double> bounds,
                                 std::vector<std::string> label_names)
    : Family<Histogram>(std::move(name), std::move(help), "histogram", std::move(label_names)),
      bounds_(std::move(bounds)) {
  Histogram check(bounds_);  // validates the bounds once, here
}

void HistogramFamily::render_samples(std::string& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [values, child] : children_) {
    const Histogram::Snapshot s = child->snapshot();
    for (size_t i = 0; i < s.cumulative.size(); ++i) {
      const std::string le = i < bounds_.size() ? format_value(bounds_[i]) : "+Inf";
      out += name_ + "_bucket" + label_text(values, "le=\"" + le + "\"") + " " + std::to_string(s.cumulative[i]) + "\n";
    }
    out += name_ + "_sum" + label_text(values) + " " + format_value(s.sum) + "\n";
    out += name_ + "_count" + label_text(values) + " " + std::to_string(s.count) + "\n";
  }
}

template <class F>
F& Registry::add(std::unique_ptr<F> family) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& f : families_)
    if (f->name() == family->name()) throw Error("metric " + family->name() + " is registered twice");
  F& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

Family<Counter>& Registry::counter(const std::string& name, const std::string& help, std::vector<std::string> labels) {
  return add(std::make_unique<ValueFamily<Counter>>(name, help, "counter", std::move(labels)));
}

Family<Gauge>& Registry::gauge(const std::string& name, const std::string& help, std::vector<std::string> labels) {
  return add(std::make_unique<ValueFamily<Gauge>>(name, help, "gauge", std::move(labels)));
}

HistogramFamily& Registry::histogram(const std::string& name, const std::string& help, std::vector<double> bounds,
                                     std::vector<std::string> labels) {
  return add(std::make_unique<HistogramFamily>(name, help, std::move(bounds), std::move(labels)));
}

std::string Registry::render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& f : families_) f->render(out);
  return out;
}

}  // namespace db::metrics
