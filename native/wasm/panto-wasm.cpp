// C ABI over the pure C++ media core (native/core/media-core.h) for the WebAssembly build (emscripten). No Node-API:
// the JS side (native/wasm/wasm-core.cjs) copies input bytes into linear memory, calls one pw_* function, reads the
// returned PwResult and copies the output out, then releases both.
//
// Ownership: every pw_* call that returns a PwResult* hands it to the caller, who must release it with
// pw_result_free exactly once (that also frees the output bytes and strings it points to). Input bytes stay the
// caller's (pw_alloc / pw_free). Strings in a PwResult are NUL-terminated UTF-8; mime strings are static.
// Never throws across the ABI: the core reports failures as Status, and anything else is caught here (ERR_INTERNAL,
// or ERR_MEDIA_TOO_LARGE for std::bad_alloc, as in the core). A null PwResult* means the result itself could not be
// allocated.
//
// Process-wide memory pool and abort (the core is built with PANTO_HOST_MEMORY_POOL=1, budget.h): every instance
// of the core — the main thread's and each media worker's — gets `Module.pantoHost` from its creator
// (native/wasm/wasm-core.cjs): `pool`, a BigInt64Array [cap, inFlight] on a SharedArrayBuffer shared by every
// instance of one backend, updated with Atomics (the same all-or-nothing compare-and-swap as the native
// MemoryReservation); `reserved`, this instance's share of inFlight (a BigInt64Array word the pool reads back when it
// discards a worker mid-call, so a trapped or terminated call never leaks its reservation); `abort`, an Int32Array
// word the main thread sets (Atomics.store) when the running call's token is aborted. The core polls it through
// panto_host_should_abort between rows, scans and stages, like the native AbortFlag.
#include <emscripten/emscripten.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "budget.h"
#include "media-core.h"

#define PW_EXPORT extern "C" __attribute__((used, visibility("default")))

namespace {

/** What JS reads: 17 little-endian 32-bit words at the start of the struct (layout mirrored in wasm-core.cjs). */
struct PwView {
  uint32_t kind;          // 0 ok, 1 error, 2 null (probe: not a supported type)
  const char* code;       // error code ("" when ok)
  const char* message;    // error message
  const char* error_mime; // sniffed type of a failed input ("" when unknown)
  uint32_t unchanged;     // process: 1 = output is the input bytes
  const uint8_t* data;    // output bytes (process, decode), owned by the result
  uint32_t size;
  const char* mime;       // output type (process)
  uint32_t width, height;
  const char* orig_mime;  // the input's header facts (probe, process)
  uint32_t orig_width, orig_height, orig_frames, orig_has_alpha, orig_orientation;
  const char* changes;    // process: comma-separated list of changes
};
static_assert(sizeof(PwView) == 17 * 4, "PwView is 17 words on wasm32");

struct PwResult {
  PwView view{};
  std::string code, message, changes;
  panto::OwnedBytes bytes;
};

PwResult* new_result() { return new (std::nothrow) PwResult(); }

void set_error(PwResult* r, const panto::Status& s) {
  r->view.kind = 1;
  r->code = s.code;
  r->message = s.message;
  r->view.error_mime = panto::mime_of(s.media_type);
}

/** The input's header facts (probe's answer; process's `original`). */
void set_info(PwView* v, const panto::MediaInfo& m) {
  v->orig_mime = panto::mime_of(m.type);
  v->orig_width = m.width;
  v->orig_height = m.height;
  v->orig_frames = m.frames;
  v->orig_has_alpha = m.has_alpha ? 1 : 0;
  v->orig_orientation = static_cast<uint32_t>(m.orientation);
}

/** Points the view's string fields at the owned strings (after they are final). */
PwResult* finish(PwResult* r) {
  r->view.code = r->code.c_str();
  r->view.message = r->message.c_str();
  r->view.changes = r->changes.c_str();
  if (!r->view.error_mime) r->view.error_mime = "";
  if (!r->view.mime) r->view.mime = "";
  if (!r->view.orig_mime) r->view.orig_mime = "";
  r->view.data = r->bytes.data;
  r->view.size = static_cast<uint32_t>(r->bytes.size);
  return r;
}

/** Runs `fn` with C++ exceptions turned into an error result, as the Node binding's worker does. */
template <typename Fn>
PwResult* guarded(Fn fn) {
  PwResult* r = new_result();
  if (!r) return nullptr;
  try {
    fn(r);
  } catch (const std::bad_alloc&) {
    r->bytes.reset();
    set_error(r, panto::Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory in the WebAssembly media worker"));
  } catch (...) {
    r->bytes.reset();
    set_error(r, panto::Status::Err("ERR_INTERNAL", "unexpected exception in the WebAssembly media core"));
  }
  return finish(r);
}

/** Non-null for a call that carries an abort token: should_abort() then asks the host (budget.cpp). */
const std::atomic<int> kHostAbortFlag{0};

}  // namespace

// Host side of budget.h's panto_host_* (JS, run in this instance's thread). Byte counts are doubles <= 2^53.
EM_JS(int, pw_host_try_reserve, (double bytes), {
  const h = Module['pantoHost'];
  const p = h.pool;
  const b = BigInt(bytes);
  for (;;) {
    const cap = Atomics.load(p, 0);
    const cur = Atomics.load(p, 1);
    if (b > cap || cur > cap - b) return 0;
    if (Atomics.compareExchange(p, 1, cur, cur + b) === cur) break;
  }
  Atomics.add(h.reserved, 0, b);
  return 1;
});
EM_JS(void, pw_host_release, (double bytes), {
  const h = Module['pantoHost'];
  const b = BigInt(bytes);
  Atomics.sub(h.reserved, 0, b);
  Atomics.sub(h.pool, 1, b);
});
EM_JS(double, pw_host_set_memory_cap, (double bytes), {
  return Number(Atomics.exchange(Module['pantoHost'].pool, 0, BigInt(bytes)));
});
EM_JS(double, pw_host_memory_cap, (), { return Number(Atomics.load(Module['pantoHost'].pool, 0)); });
EM_JS(double, pw_host_memory_in_flight, (), { return Number(Atomics.load(Module['pantoHost'].pool, 1)); });
EM_JS(int, pw_host_should_abort, (), { return Atomics.load(Module['pantoHost'].abort, 0) !== 0 ? 1 : 0; });

extern "C" int panto_host_try_reserve(double bytes) { return pw_host_try_reserve(bytes); }
extern "C" void panto_host_release(double bytes) { pw_host_release(bytes); }
extern "C" double panto_host_set_memory_cap(double bytes) { return pw_host_set_memory_cap(bytes); }
extern "C" double panto_host_memory_cap(void) { return pw_host_memory_cap(); }
extern "C" double panto_host_memory_in_flight(void) { return pw_host_memory_in_flight(); }
extern "C" int panto_host_should_abort(void) { return pw_host_should_abort(); }

/** The core's default process-wide cap (budget.h), so the host's pool starts where the native one does. */
PW_EXPORT double pw_default_memory_cap() { return static_cast<double>(panto::kDefaultMemoryCap); }

PW_EXPORT void* pw_alloc(uint32_t n) { return std::malloc(n ? n : 1); }
PW_EXPORT void pw_free(void* p) { std::free(p); }
PW_EXPORT void pw_result_free(PwResult* r) { delete r; }

/** The sniffed MIME type (static string), or null when unrecognised. */
PW_EXPORT const char* pw_sniff(const uint8_t* d, uint32_t len) {
  panto::MediaType t = panto::sniff(d, len);
  return t == panto::MediaType::Unknown ? nullptr : panto::mime_of(t);
}

/** Header facts: kind 0 with the orig_* fields; 2 for an unsupported or unrecognised type (JS null); 1 with the
 *  error otherwise. Same decisions as the Node binding's probe. */
PW_EXPORT PwResult* pw_probe(const uint8_t* d, uint32_t len) {
  return guarded([&](PwResult* r) {
    panto::MediaType t = panto::sniff(d, len);
    if (!panto::is_supported(t)) {
      r->view.kind = 2;
      return;
    }
    panto::MediaInfo m;
    panto::Status s = panto::probe(d, len, &m);
    if (!s.ok()) return set_error(r, s);
    set_info(&r->view, m);
  });
}

/** processMedia's core on RESOLVED options (src/media/policy.ts), already asserted by the JS side exactly as the
 *  Node binding's parse_options asserts them (native/wasm/wasm-core.cjs): integers <= 2^53 arrive as doubles;
 *  format: 0 auto, 1 jpeg, 2 png, 3 webp; hint may be null (none); has_abort: the call carries an abort token (the
 *  host's abort word is then polled). On kind 0 the output is data/size unless `unchanged` (then the caller reuses
 *  its input). */
PW_EXPORT PwResult* pw_process(const uint8_t* d, uint32_t len, double max_dimension, double max_encoded_bytes,
                               double max_pixels, double max_input_bytes, double max_pdf_bytes, int jpeg_quality,
                               int keep_metadata, int format, const char* hint, int has_abort) {
  return guarded([&](PwResult* r) {
    panto::ProcessOptions o;
    o.max_dimension = static_cast<uint32_t>(max_dimension);
    o.max_encoded_bytes = static_cast<uint64_t>(max_encoded_bytes);
    o.max_pixels = static_cast<uint64_t>(max_pixels);
    o.max_input_bytes = static_cast<uint64_t>(max_input_bytes);
    o.max_pdf_bytes = static_cast<uint64_t>(max_pdf_bytes);
    o.jpeg_quality = jpeg_quality;
    o.keep_metadata = keep_metadata != 0;
    o.format = static_cast<panto::OutputFormat>(format);
    if (hint) o.media_type_hint = hint;
    if (has_abort) o.abort_flag = &kHostAbortFlag;
    panto::ProcessResult pr;
    panto::Status s = panto::process(d, len, o, &pr);
    if (!s.ok()) return set_error(r, s);
    r->view.unchanged = pr.unchanged ? 1 : 0;
    r->bytes = std::move(pr.data);
    r->view.mime = panto::mime_of(pr.type);
    r->view.width = pr.width;
    r->view.height = pr.height;
    set_info(&r->view, pr.original);
    for (const std::string& c : pr.changes) {
      if (!r->changes.empty()) r->changes += ',';
      r->changes += c;
    }
  });
}

/** TEST/DIAGNOSTIC ONLY: first-frame RGBA8 decode (decodeToRgba); max_pixels < 0 = ProcessOptions's default. */
PW_EXPORT PwResult* pw_decode_to_rgba(const uint8_t* d, uint32_t len, double max_pixels) {
  return guarded([&](PwResult* r) {
    panto::DecodedImage img;
    const uint64_t cap = max_pixels >= 0 ? static_cast<uint64_t>(max_pixels) : panto::ProcessOptions{}.max_pixels;
    panto::Status s = panto::decode_to_rgba(d, len, cap, &img);
    if (!s.ok()) return set_error(r, s);
    r->view.width = img.width;
    r->view.height = img.height;
    r->bytes = std::move(img.rgba);
  });
}
