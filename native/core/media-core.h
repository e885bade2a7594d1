// Public API of libpanto's pure C++ media core (no Node-API). The Node binding and the native tests/fuzzers use only
// this header.
//
// Contracts:
// - Every function is thread-safe and re-entrant (no global mutable state; the allocation budget is per thread).
// - No function throws: failures come back as a Status {code, message}; std::bad_alloc and any other C++ exception
//   are caught inside and reported (ERR_MEDIA_TOO_LARGE for allocation failures).
// - Memory: each process() call reserves a header-derived estimate from one process-wide pool before decoding
//   (default cap 1 GiB) and allocates within it; a call that cannot reserve now returns kBusyCode.
// - Input bytes are borrowed, never retained past the call, never modified.
// - Codes are the JS-visible stable codes: ERR_UNSUPPORTED_MEDIA, ERR_CORRUPT_MEDIA, ERR_MEDIA_TOO_LARGE,
//   ERR_INVALID_ARGUMENT, ERR_ABORTED (ERR_INTERNAL only for bugs).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace panto {

enum class MediaType : uint8_t {
  Unknown = 0,
  // Supported (processed).
  Png,
  Jpeg,
  Gif,
  Bmp,
  Webp,
  Pdf,
  // Recognised only so that errors can name them.
  Tiff,
  Heic,
  Avif,
  Ico,
  Jxl,
  Svg,
};

/** The MIME type of `t` ("image/png", ...); "" for Unknown. */
const char* mime_of(MediaType t);
/** True for the types the pipeline can process (PNG, JPEG, GIF, BMP, WebP, PDF). */
bool is_supported(MediaType t);
/** Parses a MIME type (case-insensitive, parameters ignored, "image/jpg" accepted); Unknown when not one of ours. */
MediaType media_type_from_mime(const std::string& mime);

/** Identifies the bytes from magic numbers only; Unknown when unrecognised. Reads at most the first 1 KiB. */
MediaType sniff(const uint8_t* data, size_t len);

struct Status {
  std::string code;  // empty = OK
  std::string message;
  MediaType media_type = MediaType::Unknown;  // the sniffed type, when known

  bool ok() const { return code.empty(); }
  static Status Ok() { return {}; }
  static Status Err(const char* code, std::string message, MediaType t = MediaType::Unknown) {
    Status s;
    s.code = code;
    s.message = std::move(message);
    s.media_type = t;
    return s;
  }
};

/** Header facts, read without decoding pixels. */
struct MediaInfo {
  MediaType type = MediaType::Unknown;
  uint32_t width = 0;
  uint32_t height = 0;
  /** Animation frames (1 for a still image); PDF: page count, 0 when not cheaply known. */
  uint32_t frames = 1;
  bool has_alpha = false;
  /** WebP: an animation container (VP8X animation flag), even of one frame: its first frame is composed on the canvas. */
  bool animated = false;
  /** EXIF orientation 1..8 (1 when absent or invalid). */
  int orientation = 1;
};

/**
 * Reads the header of a supported image or PDF. Walks GIF blocks / WebP chunks / APNG chunks to count frames without
 * decoding. Errors: ERR_UNSUPPORTED_MEDIA (unrecognised or unsupported type, or an unsupported variant such as an
 * arithmetic-coded JPEG or RLE BMP), ERR_CORRUPT_MEDIA (unreadable header).
 */
Status probe(const uint8_t* data, size_t len, MediaInfo* out);

/** Output codec request. Auto preserves the input codec where providers accept it. */
enum class OutputFormat : uint8_t { Auto = 0, Jpeg, Png, Webp };

/**
 * Resolved processing options. The policy (defaults, ranges, validation) lives in TS (src/media/policy.ts); the Node
 * binding requires every field from it and asserts the ranges. The defaults below exist for the native tests and
 * fuzzers only and mirror that policy.
 */
struct ProcessOptions {
  uint32_t max_dimension = 2000;
  uint64_t max_encoded_bytes = 3932160;
  uint64_t max_pixels = 100000000;
  uint64_t max_input_bytes = 64ull << 20;
  uint64_t max_pdf_bytes = 32ull << 20;
  int jpeg_quality = 80;
  bool keep_metadata = false;
  OutputFormat format = OutputFormat::Auto;
  /** The caller's media-type hint ("" = none). Never overrides the bytes; a differing hint adds "hint-corrected". */
  std::string media_type_hint;
  /** Set (non-zero, from any thread) to stop the call between rows/scans/stages with ERR_ABORTED. Not owned; must
   *  outlive the call. */
  const std::atomic<int>* abort_flag = nullptr;
  /** The input is memory the caller owns outright and reads again only as a pass-through result — a block from
   *  panto_budget_malloc_input (budget.h), or an ArrayBuffer the binding was handed by transfer (private anonymous
   *  memory nothing else maps or reads): the decoder may return the whole pages it has consumed to the OS while it
   *  decodes (Linux; they read as zeros afterwards). Leave false for any other memory. */
  bool input_discardable = false;
};

/**
 * Status code of a call that could not reserve its memory estimate because other calls in flight hold the
 * process-wide pool (see set_memory_cap). Nothing was decoded; the caller retries when memory frees up. Never shown
 * to users.
 */
extern const char* const kBusyCode;

/** Sets the process-wide cap on memory reserved by calls in flight (all threads); returns the previous cap. */
uint64_t set_memory_cap(uint64_t bytes);
/** Bytes currently reserved by calls in flight. */
uint64_t memory_in_flight();

/** A borrowed, read-only byte range: never frees; must not outlive the owner of the bytes. */
struct ByteView {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

/**
 * Bytes owned by a result (or a stage of the pipeline). Move-only; the release function runs exactly once, when the
 * owner is reset, assigned to or destroyed (the Node binding keeps the owner alive in a Buffer finalizer). Built empty,
 * by alloc_owned (budget memory), or by adopt() (an allocation handed over together with its release function).
 *
 * `data` and `size` are read-only: they are references to the private state, so assigning them does not compile —
 * ownership changes only through adopt / reset / move, the size only through shrink_to / realloc_owned. A borrowed
 * range is a ByteView (`view()`), pixels borrowed are a PixelView: neither can free.
 */
class OwnedBytes {
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  void (*release_)(uint8_t*) = nullptr;

 public:
  /** The bytes (nullptr when empty); the pointer is read-only, the bytes are writable by the owner. */
  uint8_t* const& data = data_;
  /** The number of valid bytes (may be less than the allocation after shrink_to). */
  const size_t& size = size_;

  OwnedBytes() = default;
  OwnedBytes(const OwnedBytes&) = delete;
  OwnedBytes& operator=(const OwnedBytes&) = delete;
  OwnedBytes(OwnedBytes&& o) noexcept { *this = std::move(o); }
  OwnedBytes& operator=(OwnedBytes&& o) noexcept;
  ~OwnedBytes() { reset(); }

  /** Takes ownership of `p` (`size` valid bytes), released with `release(p)`. A null `p` gives an empty owner. */
  static OwnedBytes adopt(uint8_t* p, size_t size, void (*release)(uint8_t*)) noexcept;
  /** Releases the bytes (if any); the owner is empty afterwards. */
  void reset() noexcept;
  /** Keeps only the first `n` bytes as valid (no reallocation); no effect when `n >= size`. */
  void shrink_to(size_t n) noexcept {
    if (n < size_) size_ = n;
  }
  /**
   * Budget memory only (from alloc_owned): reallocates to `n` bytes through the active budget, keeping the first
   * min(n, size) bytes. False (and unchanged) when the budget refuses or the bytes are not budget memory.
   */
  bool realloc_owned(size_t n) noexcept;
  ByteView view() const noexcept { return {data_, size_}; }
};

struct ProcessResult {
  /** When true the output is the input bytes unchanged and `data` is empty (the caller reuses/copies the input). */
  bool unchanged = false;
  OwnedBytes data;
  MediaType type = MediaType::Unknown;
  uint32_t width = 0;
  uint32_t height = 0;
  /** Header facts of the input (for a PDF, frames = page count or 0). */
  MediaInfo original;
  /** What happened, in order: resized, reencoded, oriented, first-frame, converted, metadata-stripped,
   *  quality-reduced, hint-corrected, flattened. */
  std::vector<std::string> changes;
};

/**
 * Makes `data` provider-ready under `opts` (policy in docs and src/media/process-media.ts). Caps are checked from the
 * header before any pixel allocation; decoder allocations are bounded by a per-call budget derived from the header.
 * Never returns output larger than opts.max_encoded_bytes (ERR_MEDIA_TOO_LARGE instead).
 */
Status process(const uint8_t* data, size_t len, const ProcessOptions& opts, ProcessResult* out);

/** Decoded pixels (tests/diagnostics): RGBA8, row-major, top-down, no orientation applied. */
struct DecodedImage {
  uint32_t width = 0;
  uint32_t height = 0;
  OwnedBytes rgba;
};

/**
 * Decodes an image to RGBA8 with the same decoders and caps as `process` (first frame for animations). For tests and
 * diagnostics; not part of the public JS API.
 */
Status decode_to_rgba(const uint8_t* data, size_t len, uint64_t max_pixels, DecodedImage* out);

}  // namespace panto
