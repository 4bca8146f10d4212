#include "server/roofline_metrics.h"

#include "server/metric_names.h"

namespace db::server {

RooflineMetrics::RooflineMetrics(std::string model_name, double machine_bytes_per_s)
    : model_(std::move(model_name)),
      machine_(machine_bytes_per_s),
      machine_gauge_(reg_.gauge("deepbatch:roofline_machine_read_bytes_per_second",
                                "The machine's memory read bandwidth, measured at start-up or configured.", kModelLabel)
                         .labels({model_})),
      achieved_(reg_.gauge("deepbatch:roofline_decode_read_bytes_per_second",
                           "Weights and KV bytes a decode step reads over its time (average of recent decode steps).",
                           kModelLabel)
                    .labels({model_})),
      fraction_(reg_.gauge("deepbatch:roofline_decode_fraction",
                           "Decode steps' read rate as a share of the machine's read bandwidth (1 = at the roofline).",
                           kModelLabel)
                    .labels({model_})),
      step_bytes_(reg_.gauge("deepbatch:roofline_decode_step_bytes",
                             "Weights and KV bytes the latest decode step read (an estimate from tensor sizes).",
                             kModelLabel)
                      .labels({model_})) {
  machine_gauge_.set(machine_);
}

void RooflineMetrics::on_step(const StepRecord& step) {
  if (step.prompt_tokens > 0 || step.tokens <= 0 || step.seconds <= 0 || step.bytes_read <= 0) return;
  const double rate = step.bytes_read / step.seconds;
  avg_ = avg_ == 0 ? rate : avg_ + (rate - avg_) / 16;
  achieved_.set(avg_);
  step_bytes_.set(step.bytes_read);
  if (machine_ > 0) fraction_.set(avg_ / machine_);
}

}  // namespace db::server
