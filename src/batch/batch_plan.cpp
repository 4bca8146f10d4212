#include "batch/batch_plan.h"

#include <string>
#include <unordered_set>
#include <utility>

namespace db::batch {

BatchPlan plan_batch(BatchInput input, const std::string& output_path) {
  BatchPlan plan;
  plan.journal = recover_journal(output_path);
  plan.input = std::move(input);
  const std::unordered_set<std::string>& finished = plan.journal.finished;
  auto line_errors = plan.journal.line_errors;  // counts consumed as bad lines match them
  for (size_t i = 0; i < plan.input.errors.size(); ++i) {
    const LineError& e = plan.input.errors[i];
    bool recorded = false;
    if (is_line_level_code(e.code)) {
      auto it = line_errors.find({e.code, e.custom_id.value_or("")});
      if (it != line_errors.end() && it->second > 0) {
        --it->second;
        recorded = true;
      }
    } else {
      recorded = e.custom_id && finished.count(*e.custom_id) > 0;
    }
    if (recorded) ++plan.skipped;
    else plan.unrecorded_errors.push_back(i);
  }
  for (size_t i = 0; i < plan.input.items.size(); ++i) {
    if (finished.count(plan.input.items[i].custom_id)) ++plan.skipped;
    else plan.pending.push_back(i);
  }
  return plan;
}

}  // namespace db::batch
