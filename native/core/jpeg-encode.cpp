// JPEG encode through libjpeg-turbo (see jpeg-encode.h; encode_jpeg is declared in internal.h): baseline, 4:2:0,
// ISLOW DCT (bit-exact between SIMD and C builds), optimised Huffman tables (as sharp's default), the quality as
// given. The output grows in budget memory through our own destination manager; libjpeg's own allocations go through
// jpeg-memory.cpp. Errors longjmp back into the run_* function that called libjpeg; each (like jpeg-decode.cpp's)
// keeps all state in a trivially destructible job, so the jump skips no destructor.
#include "jpeg-encode.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

extern "C" {
#include <jpeglib.h>
#include <jerror.h>
}

#include "budget.h"
#include "internal.h"

namespace panto {

struct EncodeJob {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  jmp_buf jmp;
  jpeg_destination_mgr dest;
  uint8_t* data;  // budget memory; freed by the caller on failure
  size_t cap;
  int msg_code;
  bool live;  // the compressor exists (created, not yet destroyed)
  char message[JMSG_LENGTH_MAX];
};

namespace {

EncodeJob* job_of(j_common_ptr cinfo) {
  return reinterpret_cast<EncodeJob*>(reinterpret_cast<char*>(cinfo) - offsetof(EncodeJob, cinfo));
}

void on_error_exit(j_common_ptr cinfo) {
  EncodeJob* j = job_of(cinfo);
  j->msg_code = j->err.msg_code;
  (*j->err.format_message)(cinfo, j->message);
  std::longjmp(j->jmp, 1);
}

void on_output_message(j_common_ptr) {}

void dest_init(j_compress_ptr cinfo) {
  EncodeJob* j = job_of(j_common_ptr(cinfo));
  j->dest.next_output_byte = j->data;
  j->dest.free_in_buffer = j->cap;
}

/** The buffer is full: double it (budget memory). */
boolean dest_empty(j_compress_ptr cinfo) {
  EncodeJob* j = job_of(j_common_ptr(cinfo));
  const size_t used = j->cap;
  void* p = panto_budget_realloc(j->data, j->cap * 2);
  if (!p) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 100);
  j->data = static_cast<uint8_t*>(p);
  j->cap *= 2;
  j->dest.next_output_byte = j->data + used;
  j->dest.free_in_buffer = j->cap - used;
  return TRUE;
}

void dest_term(j_compress_ptr) {}

/** Starts the compressor; 1 on success, 0 (compressor destroyed, msg_code/message set) on a libjpeg error. */
int run_begin(EncodeJob* j, uint32_t w, uint32_t h, int channels, int quality, bool raw) {
  j->cinfo.err = jpeg_std_error(&j->err);
  j->err.error_exit = on_error_exit;
  j->err.output_message = on_output_message;
  if (setjmp(j->jmp)) {
    jpeg_destroy_compress(&j->cinfo);
    j->live = false;
    return 0;
  }
  jpeg_create_compress(&j->cinfo);
  j->live = true;
  j->dest.init_destination = dest_init;
  j->dest.empty_output_buffer = dest_empty;
  j->dest.term_destination = dest_term;
  j->cinfo.dest = &j->dest;
  j->cinfo.image_width = w;
  j->cinfo.image_height = h;
  j->cinfo.input_components = channels == 4 ? 4 : 3;
  // alpha (if any) is ignored; planar input is already YCbCr
  j->cinfo.in_color_space = raw ? JCS_YCbCr : channels == 4 ? JCS_EXT_RGBX : JCS_RGB;
  jpeg_set_defaults(&j->cinfo);  // YCbCr, 4:2:0 (2x2 luma sampling), baseline Huffman
  jpeg_set_quality(&j->cinfo, quality, TRUE);
  j->cinfo.dct_method = JDCT_ISLOW;
  j->cinfo.optimize_coding = TRUE;
  j->cinfo.raw_data_in = raw ? TRUE : FALSE;
  jpeg_start_compress(&j->cinfo, TRUE);
  return 1;
}

int run_write(EncodeJob* j, const uint8_t* const* rows, uint32_t n) {
  if (setjmp(j->jmp)) {
    jpeg_destroy_compress(&j->cinfo);
    j->live = false;
    return 0;
  }
  JSAMPROW r[16];
  for (uint32_t i = 0; i < n; i++) r[i] = const_cast<JSAMPROW>(rows[i]);
  jpeg_write_scanlines(&j->cinfo, r, n);
  return 1;
}

/** One iMCU row of planar 4:2:0 data (16 luma rows, 8 of each chroma plane). */
int run_write_raw(EncodeJob* j, JSAMPARRAY* planes) {
  if (setjmp(j->jmp)) {
    jpeg_destroy_compress(&j->cinfo);
    j->live = false;
    return 0;
  }
  jpeg_write_raw_data(&j->cinfo, planes, 16);
  return 1;
}

int run_finish(EncodeJob* j) {
  if (setjmp(j->jmp)) {
    jpeg_destroy_compress(&j->cinfo);
    j->live = false;
    return 0;
  }
  jpeg_finish_compress(&j->cinfo);
  jpeg_destroy_compress(&j->cinfo);
  j->live = false;
  return 1;
}

Status oom() { return Status::Err("ERR_MEDIA_TOO_LARGE", "JPEG encoding failed (out of memory budget)"); }

}  // namespace

JpegRowEncoder::~JpegRowEncoder() {
  if (!job_) return;
  if (job_->live) jpeg_destroy_compress(&job_->cinfo);
  panto_budget_free(job_->data);
  panto_budget_free(job_);
}

void JpegRowEncoder::fail_from_job() {
  Budget* b = current_budget();
  if (job_->msg_code == JERR_OUT_OF_MEMORY || (b && b->exceeded.load())) failed_ = oom();
  else failed_ = Status::Err("ERR_INTERNAL", "JPEG encoding failed: " + std::string(job_->message));
}

Status JpegRowEncoder::begin_planar(uint32_t w, uint32_t h, int quality) {
  planar_ = true;
  return begin(w, h, 3, quality);
}

void JpegRowEncoder::put_planes(const uint8_t* const* y, const uint8_t* const* cb, const uint8_t* const* cr) {
  if (!failed_.ok()) return;
  if (!job_ || !job_->live || !planar_ || y_ >= h_) {
    failed_ = Status::Err("ERR_INTERNAL", "JPEG encoder given more rows than the image has");
    return;
  }
  JSAMPARRAY planes[3] = {const_cast<JSAMPARRAY>(y), const_cast<JSAMPARRAY>(cb), const_cast<JSAMPARRAY>(cr)};
  if (!run_write_raw(job_, planes)) fail_from_job();
  else y_ = std::min(h_, y_ + 16);
}

Status JpegRowEncoder::begin(uint32_t w, uint32_t h, int channels, int quality) {
  if (job_) return Status::Err("ERR_INTERNAL", "JpegRowEncoder begun twice");
  job_ = static_cast<EncodeJob*>(panto_budget_malloc(sizeof(EncodeJob)));
  if (!job_) return failed_ = Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding JPEG");
  std::memset(job_, 0, sizeof(EncodeJob));
  h_ = h;
  job_->cap = size_t(w) * h / 4 + 65536;
  job_->data = static_cast<uint8_t*>(panto_budget_malloc_sparse(job_->cap));  // a guess; only what is written is resident
  if (!job_->data) return failed_ = oom();
  if (!run_begin(job_, w, h, channels, quality < 1 ? 1 : quality > 100 ? 100 : quality, planar_)) {
    fail_from_job();
    return failed_;
  }
  return Status::Ok();
}

void JpegRowEncoder::put_rows(const uint8_t* const* rows, uint32_t n) {
  if (!failed_.ok()) return;
  if (!job_ || !job_->live || planar_ || n > 16 || y_ + n > h_) {
    failed_ = Status::Err("ERR_INTERNAL", "JPEG encoder given more rows than the image has");
    return;
  }
  if (!run_write(job_, rows, n)) fail_from_job();
  else y_ += n;
}

void JpegRowEncoder::abort() {
  if (failed_.ok()) failed_ = Status::Err("ERR_ABORTED", "processing was aborted");
}

Status JpegRowEncoder::finish(OwnedBytes* out) {
  if (!failed_.ok()) return failed_;
  if (!job_ || !job_->live || y_ != h_) return failed_ = Status::Err("ERR_INTERNAL", "JPEG encoder given too few rows");
  if (!run_finish(job_)) {
    fail_from_job();
    return failed_;
  }
  const size_t size = job_->cap - job_->dest.free_in_buffer;
  *out = OwnedBytes::adopt(job_->data, size, budget_release);
  job_->data = nullptr;
  return Status::Ok();
}

Status encode_jpeg(const PixelView& px, int quality, OwnedBytes* out) {
  JpegRowEncoder enc;
  Status s = enc.begin(px.width, px.height, px.channels, quality);
  if (!s.ok()) return s;
  const size_t stride = size_t(px.width) * size_t(px.channels);
  const uint8_t* rows[16];
  for (uint32_t y = 0; y < px.height;) {
    if (panto_should_abort()) {
      enc.abort();
      break;
    }
    uint32_t n = 0;
    for (; n < 16 && y + n < px.height; n++) rows[n] = px.data + size_t(y + n) * stride;
    enc.put_rows(rows, n);
    y += n;
  }
  return enc.finish(out);
}

}  // namespace panto
