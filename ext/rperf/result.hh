// Builds the Ruby result Hash of Rperf.stop / Rperf.snapshot from a session's aggregate.
// Frames are resolved to strings here, once per unique frame, never on the sampling path.
#pragma once
#include "session.hh"

namespace rperf {

struct ResultOptions {
  bool lines = false;  // frames as [path, label, line] and stacks kept per line
  bool clear = false;  // snapshot(clear: true): reset the aggregate and counters
};

VALUE build_result(Session& s, const ResultOptions& opts);

}  // namespace rperf
