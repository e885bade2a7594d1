// process() run under an internal path switch (set_png_streaming, set_jpeg_streaming, set_gif_streaming) and
// set_parts_concurrency, and the check that a streamed path gives what the whole-image path it replaces gives (the
// PNG, JPEG and GIF stream ctests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "internal.h"
#include "parallel.h"
#include "test-util.h"

namespace panto_test {

/** What one process() call gave: its code ("OK" or the error's), output bytes (only on OK), size, type, changes. */
struct Outcome {
  std::string code;
  std::vector<uint8_t> bytes;
  uint32_t w = 0, h = 0;
  panto::MediaType type = panto::MediaType::Unknown;
  std::vector<std::string> changes;
};

/** A process-wide path switch: sets it to `allowed` and returns the previous setting. */
using PathSwitch = bool (*)(bool allowed);

/** Runs process() on `in` under `o` with `path` set to `streaming` and part threads on or off; both settings are
 *  restored before returning. */
inline Outcome run_switched(PathSwitch path, const std::vector<uint8_t>& in, const panto::ProcessOptions& o,
                            bool streaming, bool threads) {
  const bool prev_s = path(streaming);
  const bool prev_t = panto::set_parts_concurrency(threads);
  panto::ProcessResult r;
  const panto::Status st = panto::process(in.data(), in.size(), o, &r);
  path(prev_s);
  panto::set_parts_concurrency(prev_t);
  Outcome out;
  out.code = st.ok() ? "OK" : st.code;
  if (st.ok()) out.bytes = output_bytes(r, in);
  out.w = r.width, out.h = r.height, out.type = r.type, out.changes = r.changes;
  return out;
}

/** Runs `in` under `o` with `path` off (the whole-image path), then on with part threads on and off, and records a
 *  failure, labelled `what`, for each streamed run whose code, bytes, size, type or changes differ from the
 *  whole-image run. Returns the whole-image outcome. */
inline Outcome expect_streamed_same(PathSwitch path, const std::string& what, const std::vector<uint8_t>& in,
                                    const panto::ProcessOptions& o) {
  const Outcome whole = run_switched(path, in, o, false, true);
  for (bool threads : {true, false}) {
    const Outcome s = run_switched(path, in, o, true, threads);
    const std::string label = what + (threads ? " (threaded)" : " (sequential)");
    if (s.code != whole.code) {
      record_failure(__FILE__, __LINE__, label + ": code " + s.code + " vs whole-image " + whole.code);
      continue;
    }
    if (s.bytes != whole.bytes || s.w != whole.w || s.h != whole.h || s.type != whole.type ||
        s.changes != whole.changes)
      record_failure(__FILE__, __LINE__, label + ": output differs from the whole-image path (" +
                                             std::to_string(s.bytes.size()) + " vs " +
                                             std::to_string(whole.bytes.size()) + " bytes)");
  }
  return whole;
}

}  // namespace panto_test
