// `deepbatch loadtest --plot`: a load-test report (report.h's JSON) drawn as a figure by
// scripts/plot_loadtest.py with matplotlib, run as `python3 SCRIPT REPORT OUT`.
//
// The script is looked up in $DB_SCRIPTS_DIR when that is set, else in the scripts/
// directory of the source tree the binary was built from. python3 is looked up on PATH.
#pragma once
#include <string>

namespace db::loadtest {

// Path of plot_loadtest.py as described above (whether or not it exists).
std::string plot_script_path();

// Throws db::Error naming --plot unless `out` ends in ".svg" or ".png" (the formats the
// script writes; matplotlib picks the format from the extension).
void check_plot_path(const std::string& out);

// Throws db::Error unless the script exists and `python3 SCRIPT --check` succeeds, i.e.
// python3 and matplotlib are installed. For failing before a long run, not after it.
void check_plotter();

// Draws the report at `report_json` into `out`; throws db::Error when python3 cannot be
// started or the script exits non-zero (its own message goes to stderr).
void plot_report(const std::string& report_json, const std::string& out);

}  // namespace db::loadtest
