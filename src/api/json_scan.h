// A linear pass over JSON text that allocates nothing: it refuses nesting deeper than
// `limits.max_depth` and strings longer than `limits.max_string_bytes` before a parser
// would build (or buffer) them. It checks nothing else: malformed text passes and is
// left for the parser to report.
#pragma once
#include <string_view>

#include "api/bounded_json.h"

namespace db::api {

// Throws ApiError naming the top-level key the refused part sits under ("" at the top).
void scan_json_bounds(std::string_view text, const BodyLimits& limits);

}  // namespace db::api
