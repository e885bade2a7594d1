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

enum Stop : int { kLibjpegError = 1, kCorruptWarning, kAborted, kTooManyScans, kOutOfMemory, kBadSize, kNotYcc };

struct ErrorMgr {
  jpeg_error_mgr pub;
  jmp_buf jmp;
  int stop;
  int msg_code;
  char message[JMSG_LENGTH_MAX];
};

}  // namespace

/** Everything the run_* functions touch after setjmp: trivially destructible, so a longjmp out of libjpeg leaks
 *  nothing. Budget memory, owned by a JpegRowReader. */
struct JpegJob {
  jpeg_decompress_struct cinfo;
  ErrorMgr err;
  jpeg_progress_mgr progress;
  bool live;  // the decompressor exists (created, not yet destroyed)
  bool raw;   // planar YCbCr (raw_data_out): open_planar
  uint32_t width, height;
  int channels;  // of the rows libjpeg writes: 3 (RGB) or 4 (CMYK, inverted as Adobe writes it)
};

namespace {

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

/** Returns 1 when the decompressor started (header read, every scan of a multi-scan file absorbed), 0 with
 *  j->err.stop set otherwise (the decompressor is then destroyed). */
int run_open(JpegJob* j, const uint8_t* d, size_t len, uint32_t want_w, uint32_t want_h, int eighths) {
  j->cinfo.err = jpeg_std_error(&j->err.pub);
  j->err.pub.error_exit = on_error_exit;
  j->err.pub.emit_message = on_emit_message;
  j->err.pub.output_message = on_output_message;
  j->err.stop = 0;
  if (setjmp(j->err.jmp)) {
    jpeg_destroy_decompress(&j->cinfo);
    j->live = false;
    return 0;
  }
  jpeg_create_decompress(&j->cinfo);
  j->live = true;
  j->progress.progress_monitor = on_progress;
  j->cinfo.progress = &j->progress;
  jpeg_mem_src(&j->cinfo, d, static_cast<unsigned long>(len));
  jpeg_read_header(&j->cinfo, TRUE);
  if (j->cinfo.image_width != want_w || j->cinfo.image_height != want_h) stop_with(j_common_ptr(&j->cinfo), kBadSize);
  j->channels = j->cinfo.num_components == 4 ? 4 : 3;
  if (j->raw) {
    if (j->cinfo.num_components != 3 || j->cinfo.jpeg_color_space != JCS_YCbCr)
      stop_with(j_common_ptr(&j->cinfo), kNotYcc);
    j->cinfo.raw_data_out = TRUE;  // the components as stored (out_color_space stays YCbCr)
  } else {
    j->cinfo.out_color_space = j->channels == 4 ? JCS_CMYK : JCS_RGB;  // grayscale -> RGB is libjpeg-turbo's own
  }
  j->cinfo.scale_num = static_cast<unsigned>(eighths);
  j->cinfo.scale_denom = 8;
  j->cinfo.dct_method = JDCT_ISLOW;  // bit-exact between the SIMD and C builds (native and wasm agree)
  jpeg_start_decompress(&j->cinfo);
  j->width = j->cinfo.output_width;
  j->height = j->cinfo.output_height;
  if (j->width != jpeg_scaled_dim(want_w, eighths) || j->height != jpeg_scaled_dim(want_h, eighths) ||
      j->cinfo.output_components != j->channels)
    stop_with(j_common_ptr(&j->cinfo), kBadSize);
  return 1;
}

/** The next `n` rows (n <= 16; no more than are left); 1 on success, 0 with j->err.stop set (decompressor destroyed). */
int run_read(JpegJob* j, uint8_t* const* rows, uint32_t n) {
  if (setjmp(j->err.jmp)) {
    jpeg_destroy_decompress(&j->cinfo);
    j->live = false;
    return 0;
  }
  JSAMPROW r[16];
  for (uint32_t i = 0; i < n; i++) r[i] = rows[i];
  JDIMENSION done = 0;
  while (done < n) {
    const JDIMENSION got = jpeg_read_scanlines(&j->cinfo, r + done, n - done);
    if (got == 0) stop_with(j_common_ptr(&j->cinfo), kCorruptWarning);
    done += got;
  }
  return 1;
}

/** The next iMCU row of every component (planar mode); 1 on success, 0 with j->err.stop set. */
int run_read_raw(JpegJob* j, JSAMPARRAY* planes) {
  if (setjmp(j->err.jmp)) {
    jpeg_destroy_decompress(&j->cinfo);
    j->live = false;
    return 0;
  }
  const JDIMENSION lines = JDIMENSION(j->cinfo.max_v_samp_factor * j->cinfo.min_DCT_scaled_size);
  if (jpeg_read_raw_data(&j->cinfo, planes, lines) != lines) stop_with(j_common_ptr(&j->cinfo), kCorruptWarning);
  return 1;
}

/** Reads to EOI and destroys the decompressor; 1 on success, 0 with j->err.stop set. */
int run_finish(JpegJob* j) {
  if (setjmp(j->err.jmp)) {
    jpeg_destroy_decompress(&j->cinfo);
    j->live = false;
    return 0;
  }
  jpeg_finish_decompress(&j->cinfo);
  jpeg_destroy_decompress(&j->cinfo);
  j->live = false;
  return 1;
}

/** The typed status of a stop (j->err after a run_* returned 0). */
Status stop_status(const JpegJob* j) {
  const MediaType T = MediaType::Jpeg;
  const int stop = j->err.stop, code = j->err.msg_code;
  const std::string reason = j->err.message;
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
  if (stop == kNotYcc) return Status::Err(kNotPlanarCode, "image/jpeg is not stored as 3-component YCbCr", T);
  if (stop == kBadSize)
    return Status::Err("ERR_CORRUPT_MEDIA", "image/jpeg is corrupt: decoded size differs from the header", T);
  if (stop == kLibjpegError && code == JERR_BAD_PRECISION)
    return Status::Err("ERR_UNSUPPORTED_MEDIA", "image/jpeg: " + reason + "; convert it to an 8-bit JPEG or PNG", T);
  return Status::Err("ERR_CORRUPT_MEDIA",
                     "image/jpeg is corrupt: " + (reason.empty() ? std::string("decode failed") : reason), T);
}

}  // namespace

int jpeg_scale_eighths(uint32_t w, uint32_t h, uint32_t min_w, uint32_t min_h) {
  if (min_w == 0 || min_h == 0) return 8;
  for (int m = 1; m < 8; m *= 2)
    if (jpeg_scaled_dim(w, m) >= min_w && jpeg_scaled_dim(h, m) >= min_h) return m;
  return 8;
}

Status decode_jpeg(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, Pixels* out) {
  if (eighths < 1 || eighths > 8) eighths = 8;
  JpegRowReader reader;
  Status s = reader.open(d, len, info, eighths);
  if (!s.ok()) return s;
  const uint32_t w = reader.width(), h = reader.height();
  const int channels = reader.channels();
  const size_t stride = size_t(w) * size_t(channels);
  OwnedBytes px;
  if (!alloc_owned(stride * h, &px))
    return Status::Err("ERR_MEDIA_TOO_LARGE",
                       "image/jpeg needs more memory to decode than its header implies (budget exceeded)",
                       MediaType::Jpeg);
  uint8_t* rows[16];
  for (uint32_t y = 0; y < h;) {
    uint32_t n = 0;
    for (; n < 16 && y + n < h; n++) rows[n] = px.data + size_t(y + n) * stride;
    s = reader.read_rows(rows, n);
    if (!s.ok()) return s;
    y += n;
  }
  s = reader.finish();
  if (!s.ok()) return s;
  if (channels == 4) {
    cmyk_row_to_rgb(px.data, px.data, size_t(w) * h);
    px.shrink_to(size_t(w) * h * 3);
  }
  out->data = std::move(px);
  out->width = w;
  out->height = h;
  out->channels = 3;
  return Status::Ok();
}

void cmyk_row_to_rgb(const uint8_t* src, uint8_t* dst, size_t n) {
  // In place, pixel i's 3 bytes land at or before its 4 (read first), never on a pixel not yet read.
  for (size_t i = 0; i < n; i++) {
    const unsigned k = src[i * 4 + 3];
    const unsigned c0 = src[i * 4], c1 = src[i * 4 + 1], c2 = src[i * 4 + 2];
    const unsigned t0 = c0 * k + 128, t1 = c1 * k + 128, t2 = c2 * k + 128;
    dst[i * 3] = uint8_t((t0 + (t0 >> 8)) >> 8);
    dst[i * 3 + 1] = uint8_t((t1 + (t1 >> 8)) >> 8);
    dst[i * 3 + 2] = uint8_t((t2 + (t2 >> 8)) >> 8);
  }
}

JpegRowReader::~JpegRowReader() {
  if (!job_) return;
  if (job_->live) jpeg_destroy_decompress(&job_->cinfo);
  panto_budget_free(job_);
}

Status JpegRowReader::fail() {
  failed_ = stop_status(job_);
  return failed_;
}

const char* const kNotPlanarCode = "NOT_PLANAR";

Status JpegRowReader::open_planar(const uint8_t* d, size_t len, const MediaInfo& info, int eighths) {
  planar_ = true;
  return open(d, len, info, eighths);
}

uint32_t JpegRowReader::plane_width(int k) const { return job_->cinfo.comp_info[k].downsampled_width; }
uint32_t JpegRowReader::plane_height(int k) const { return job_->cinfo.comp_info[k].downsampled_height; }
uint32_t JpegRowReader::plane_stride(int k) const {
  const jpeg_component_info& c = job_->cinfo.comp_info[k];
  return c.width_in_blocks * unsigned(c.DCT_scaled_size);
}
uint32_t JpegRowReader::plane_rows_per_read(int k) const {
  const jpeg_component_info& c = job_->cinfo.comp_info[k];
  return unsigned(c.v_samp_factor * c.DCT_scaled_size);
}
uint32_t JpegRowReader::reads() const {
  const uint32_t lines = unsigned(job_->cinfo.max_v_samp_factor * job_->cinfo.min_DCT_scaled_size);
  return (height_ + lines - 1) / lines;
}

Status JpegRowReader::read_planes(uint8_t* const* const* rows) {
  if (!failed_.ok()) return failed_;
  if (!job_ || !job_->live || !planar_ || job_->cinfo.output_scanline >= height_)
    return Status::Err("ERR_INTERNAL", "JpegRowReader read past its planes", MediaType::Jpeg);
  JSAMPARRAY planes[3];
  for (int k = 0; k < 3; k++) planes[k] = const_cast<JSAMPARRAY>(rows[k]);
  if (!run_read_raw(job_, planes)) return fail();
  return Status::Ok();
}

Status JpegRowReader::open(const uint8_t* d, size_t len, const MediaInfo& info, int eighths) {
  if (job_) return Status::Err("ERR_INTERNAL", "JpegRowReader opened twice", MediaType::Jpeg);
  if (eighths < 1 || eighths > 8) eighths = 8;
  job_ = static_cast<JpegJob*>(panto_budget_malloc(sizeof(JpegJob)));
  if (!job_) {
    failed_ = Status::Err("ERR_MEDIA_TOO_LARGE", "image/jpeg needs more memory to decode than its header implies",
                          MediaType::Jpeg);
    return failed_;
  }
  std::memset(job_, 0, sizeof(JpegJob));
  job_->raw = planar_;
  if (!run_open(job_, d, len, info.width, info.height, eighths)) return fail();
  width_ = job_->width;
  height_ = job_->height;
  channels_ = job_->channels;
  return Status::Ok();
}

Status JpegRowReader::read_rows(uint8_t* const* rows, uint32_t n) {
  if (!failed_.ok()) return failed_;
  if (!job_ || !job_->live || planar_ || n > 16 || job_->cinfo.output_scanline + n > height_)
    return Status::Err("ERR_INTERNAL", "JpegRowReader read past its rows", MediaType::Jpeg);
  if (!run_read(job_, rows, n)) return fail();
  return Status::Ok();
}

Status JpegRowReader::finish() {
  if (!failed_.ok()) return failed_;
  if (!job_ || !job_->live) return Status::Err("ERR_INTERNAL", "JpegRowReader finished twice", MediaType::Jpeg);
  if (!run_finish(job_)) return fail();
  return Status::Ok();
}

}  // namespace panto
