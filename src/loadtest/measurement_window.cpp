#include "loadtest/measurement_window.h"

namespace db::loadtest {

std::vector<bool> counted_requests(const std::vector<double>& start_times, const MeasurementWindow& window) {
  std::vector<bool> out;
  out.reserve(start_times.size());
  for (double t : start_times) out.push_back(window.counts(t));
  return out;
}

}  // namespace db::loadtest
