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
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

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

}  // namespace

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

/** processMedia's core. Every option is either a value the JS side range-checked (integers <= 2^53 arrive as
 *  doubles) or negative for "the core's default" (panto::ProcessOptions is the one source of the defaults, as in the
 *  Node binding). format: 0 auto, 1 jpeg, 2 png, 3 webp; hint may be null. On kind 0 the output is data/size unless
 *  `unchanged` (then the caller reuses its input). */
PW_EXPORT PwResult* pw_process(const uint8_t* d, uint32_t len, double max_dimension, double max_encoded_bytes,
                               double max_pixels, double max_input_bytes, double max_pdf_bytes, int jpeg_quality,
                               int keep_metadata, int format, const char* hint) {
  return guarded([&](PwResult* r) {
    panto::ProcessOptions o;
    if (max_dimension >= 0) o.max_dimension = static_cast<uint32_t>(max_dimension);
    if (max_encoded_bytes >= 0) o.max_encoded_bytes = static_cast<uint64_t>(max_encoded_bytes);
    if (max_pixels >= 0) o.max_pixels = static_cast<uint64_t>(max_pixels);
    if (max_input_bytes >= 0) o.max_input_bytes = static_cast<uint64_t>(max_input_bytes);
    if (max_pdf_bytes >= 0) o.max_pdf_bytes = static_cast<uint64_t>(max_pdf_bytes);
    if (jpeg_quality >= 0) o.jpeg_quality = jpeg_quality;
    if (keep_metadata >= 0) o.keep_metadata = keep_metadata != 0;
    if (format >= 0) o.format = static_cast<panto::OutputFormat>(format);
    if (hint) o.media_type_hint = hint;
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
