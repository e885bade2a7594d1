// JPEG decode through libjpeg-turbo (see jpeg-decode.h). libjpeg reports errors through error_exit, which longjmps
// back into run_decode: that function is plain C in style (its only state lives in a trivially destructible DecodeJob
// reached through a pointer, no C++ object with a destructor lives between setjmp and the libjpeg calls), so the
// jump skips no destructor. Every libjpeg allocation goes through jpeg-memory.cpp (the per-call budget).
#include "jpeg-decode.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

extern "C" {
#include <jpeglib.h>
#include <jerror.h>
}

#include "budget.h"

namespace panto {
namespace {

constexpr int kMaxScans = 256;  // as jpeg_walk (probe.cpp); checked again here while decoding

enum Stop : int { kLibjpegError = 1, kCorruptWarning, kAborted, kTooManyScans, kOutOfMemory, kBadSize };

struct ErrorMgr {
  jpeg_error_mgr pub;
  jmp_buf jmp;
  int stop;
  int msg_code;
  char message[JMSG_LENGTH_MAX];
};

/** Everything run_decode touches after setjmp: trivially destructible, so a longjmp out of libjpeg leaks nothing. */
struct DecodeJob {
  jpeg_decompress_struct cinfo;
  ErrorMgr err;
  jpeg_progress_mgr progress;
  uint8_t* pixels;  // budget memory; freed by the caller whatever the outcome
  uint32_t width, height;
  int channels;  // of `pixels`: 3 (RGB) or 4 (CMYK, inverted as Adobe writes it)
};

[[noreturn]] void stop_with(j_common_ptr cinfo, int why) {
  auto* e = reinterpret_cast<ErrorMgr*>(cinfo->err);
  e->stop = why;
  std::longjmp(e->jmp, 1);
}

void on_error_exit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<ErrorMgr*>(cinfo->err);
  e->msg_code = e->pub.msg_code;
  (*e->pub.format_message)(cinfo, e->message);
  stop_with(cinfo, kLibjpegError);
}

/**
 * Warnings that mean the entropy-coded data is damaged (libjpeg would go on with zeros or grey): corrupt input, as
 * stb reported them. A scan that ends early at a marker (JWRN_HIT_MARKER) is decoded with zero-padding, as stb,
 * browsers and libjpeg do: the rest of that scan's blocks keep what earlier scans gave them. A file cut short never
 * gets here: check_structure (jpeg_walk) has already required the EOI marker.
 */
void on_emit_message(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  auto* e = reinterpret_cast<ErrorMgr*>(cinfo->err);
  switch (e->pub.msg_code) {
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_JPEG_EOF:
    case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_BOGUS_PROGRESSION:
      e->msg_code = e->pub.msg_code;
      (*e->pub.format_message)(cinfo, e->message);
      stop_with(cinfo, kCorruptWarning);
    default: e->pub.num_warnings++;  // benign (extraneous bytes before a marker, unknown Adobe transform, ...)
  }
}

void on_output_message(j_common_ptr) {}

/** Called by libjpeg per row group and per absorbed iMCU row of a multi-scan file. */
void on_progress(j_common_ptr cinfo) {
  if (panto_should_abort()) stop_with(cinfo, kAborted);
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxScans) stop_with(cinfo, kTooManyScans);
}

/** Returns 1 on success (j->pixels holds the image), 0 with j->err.stop set otherwise. */
int run_decode(DecodeJob* j, const uint8_t* d, size_t len, uint32_t want_w, uint32_t want_h, int eighths) {
  j->cinfo.err = jpeg_std_error(&j->err.pub);
  j->err.pub.error_exit = on_error_exit;
  j->err.pub.emit_message = on_emit_message;
  j->err.pub.output_message = on_output_message;
  j->err.stop = 0;
  j->pixels = nullptr;
  if (setjmp(j->err.jmp)) {
    jpeg_destroy_decompress(&j->cinfo);
    return 0;
  }
  jpeg_create_decompress(&j->cinfo);
  j->progress.progress_monitor = on_progress;
  j->cinfo.progress = &j->progress;
  jpeg_mem_src(&j->cinfo, d, static_cast<unsigned long>(len));
  jpeg_read_header(&j->cinfo, TRUE);
  if (j->cinfo.image_width != want_w || j->cinfo.image_height != want_h) stop_with(j_common_ptr(&j->cinfo), kBadSize);
  j->channels = j->cinfo.num_components == 4 ? 4 : 3;
  j->cinfo.out_color_space = j->channels == 4 ? JCS_CMYK : JCS_RGB;  // grayscale -> RGB is libjpeg-turbo's own
  j->cinfo.scale_num = static_cast<unsigned>(eighths);
  j->cinfo.scale_denom = 8;
  j->cinfo.dct_method = JDCT_ISLOW;  // bit-exact between the SIMD and C builds (native and wasm agree)
  jpeg_start_decompress(&j->cinfo);
  j->width = j->cinfo.output_width;
  j->height = j->cinfo.output_height;
  if (j->width != jpeg_scaled_dim(want_w, eighths) || j->height != jpeg_scaled_dim(want_h, eighths) ||
      j->cinfo.output_components != j->channels)
    stop_with(j_common_ptr(&j->cinfo), kBadSize);
  const size_t stride = size_t(j->width) * size_t(j->channels);
  j->pixels = static_cast<uint8_t*>(panto_budget_malloc(stride * j->height));
  if (!j->pixels) stop_with(j_common_ptr(&j->cinfo), kOutOfMemory);
  JSAMPROW rows[16];
  while (j->cinfo.output_scanline < j->height) {
    JDIMENSION n = 0;
    for (; n < 16 && j->cinfo.output_scanline + n < j->height; n++)
      rows[n] = j->pixels + size_t(j->cinfo.output_scanline + n) * stride;
    if (jpeg_read_scanlines(&j->cinfo, rows, n) == 0) stop_with(j_common_ptr(&j->cinfo), kCorruptWarning);
  }
  jpeg_finish_decompress(&j->cinfo);
  jpeg_destroy_decompress(&j->cinfo);
  return 1;
}

/** Adobe CMYK/YCCK (stored inverted) to RGB in place, compacting 4 channels to 3: R = C'K'/255 (as stb did). */
void cmyk_to_rgb(uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const unsigned k = p[i * 4 + 3];
    for (int c = 0; c < 3; c++) {
      const unsigned t = p[i * 4 + c] * k + 128;
      p[i * 3 + c] = uint8_t((t + (t >> 8)) >> 8);
    }
  }
}

}  // namespace

int jpeg_scale_eighths(uint32_t w, uint32_t h, uint32_t min_w, uint32_t min_h) {
  if (min_w == 0 || min_h == 0) return 8;
  for (int m = 1; m < 8; m++)
    if (jpeg_scaled_dim(w, m) >= min_w && jpeg_scaled_dim(h, m) >= min_h) return m;
  return 8;
}

Status decode_jpeg(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, Pixels* out) {
  const MediaType T = MediaType::Jpeg;
  if (eighths < 1 || eighths > 8) eighths = 8;
  auto* job = static_cast<DecodeJob*>(panto_budget_malloc(sizeof(DecodeJob)));
  if (!job)
    return Status::Err("ERR_MEDIA_TOO_LARGE", "image/jpeg needs more memory to decode than its header implies", T);
  std::memset(job, 0, sizeof(DecodeJob));
  const int ok = run_decode(job, d, len, info.width, info.height, eighths);
  const int stop = job->err.stop, code = job->err.msg_code;
  const std::string reason = job->err.message;
  OwnedBytes px =
      OwnedBytes::adopt(job->pixels, size_t(job->width) * job->height * size_t(job->channels), budget_release);
  const uint32_t w = job->width, h = job->height;
  const int channels = job->channels;
  panto_budget_free(job);
  if (!ok) {
    Budget* b = current_budget();
    if (stop == kAborted || (stop == kLibjpegError && should_abort()))
      return Status::Err("ERR_ABORTED", "processing was aborted", T);
    if (stop == kOutOfMemory || (b && b->exceeded.load()) || (stop == kLibjpegError && code == JERR_OUT_OF_MEMORY))
      return Status::Err("ERR_MEDIA_TOO_LARGE",
                         "image/jpeg needs more memory to decode than its header implies (budget exceeded)", T);
    if (stop == kTooManyScans)
      return Status::Err("ERR_CORRUPT_MEDIA",
                         "image/jpeg is corrupt: more than " + std::to_string(kMaxScans) +
                             " scans (refused: decoding cost)",
                         T);
    if (stop == kBadSize)
      return Status::Err("ERR_CORRUPT_MEDIA", "image/jpeg is corrupt: decoded size differs from the header", T);
    if (stop == kLibjpegError && code == JERR_BAD_PRECISION)
      return Status::Err("ERR_UNSUPPORTED_MEDIA", "image/jpeg: " + reason + "; convert it to an 8-bit JPEG or PNG", T);
    return Status::Err("ERR_CORRUPT_MEDIA",
                       "image/jpeg is corrupt: " + (reason.empty() ? std::string("decode failed") : reason), T);
  }
  if (channels == 4) {
    cmyk_to_rgb(px.data, size_t(w) * h);
    px.shrink_to(size_t(w) * h * 3);
  }
  out->data = std::move(px);
  out->width = w;
  out->height = h;
  out->channels = 3;
  return Status::Ok();
}

}  // namespace panto
