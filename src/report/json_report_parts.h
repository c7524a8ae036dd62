// The pieces of the JSON report (json_report.cpp) that live in files of their own: a code
// location as every part writes it, and the trace section (json_trace.cpp).
#pragma once

#include "analysis/profile_model.h"
#include "analysis/profile_views.h"
#include "report/json_writer.h"

namespace lockscope {

// {"module", "offset", "function", "file", "line", "label", ...} of `where` in `process`.
void json_location_value(JsonWriter& w, const CodeLocation& where, const ProcessProfile& process);
// The process's "trace" member: its trace files, sites and every event; null without --trace.
void json_trace_field(JsonWriter& w, const ProcessView& view);

}  // namespace lockscope
