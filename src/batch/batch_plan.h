// The first part of every batch job: given its input and its output file (the
// journal of earlier runs), which bad lines still need their error record and
// which requests still need to run. `deepbatch run` acts on the plan itself;
// deepbatch.ray's driver writes the error records and hands the pending lines
// to actors on other processes, so both resume and flag bad lines alike.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "batch/batch_input.h"
#include "batch/journal.h"

namespace db::batch {

struct BatchPlan {
  BatchInput input;
  JournalState journal;                 // the output as recovered (a torn last line cut)
  std::vector<size_t> unrecorded_errors;  // indices into input.errors the output holds no record of, in file order
  std::vector<size_t> pending;            // indices into input.items without a terminal record, in file order
  size_t skipped = 0;                     // lines whose record the output already holds
};

// Recovers the journal at `output_path` (see recover_journal) and matches `input`
// against it: a request is done once its custom_id has a record; a line-level bad
// line (is_line_level_code) once as many records of its (code, custom_id) exist as
// such lines come before it, itself included. Throws as recover_journal does.
BatchPlan plan_batch(BatchInput input, const std::string& output_path);

}  // namespace db::batch
