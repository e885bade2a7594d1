// JPEG encode through libjpeg-turbo (declared in internal.h as encode_jpeg): baseline, 4:2:0, ISLOW DCT (bit-exact
// between SIMD and C builds), optimised Huffman tables (as sharp's default), the quality as given. The output grows
// in budget memory through our own destination manager; libjpeg's own allocations go through jpeg-memory.cpp. Errors
// longjmp back into run_encode, which (like run_decode) keeps all state in a trivially destructible job.
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
namespace {

struct EncodeJob {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  jmp_buf jmp;
  jpeg_destination_mgr dest;
  uint8_t* data;  // budget memory; freed by the caller on failure
  size_t cap;
  int msg_code;
  char message[JMSG_LENGTH_MAX];
};

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

int run_encode(EncodeJob* j, const PixelView* px, int quality) {
  j->cinfo.err = jpeg_std_error(&j->err);
  j->err.error_exit = on_error_exit;
  j->err.output_message = on_output_message;
  if (setjmp(j->jmp)) {
    jpeg_destroy_compress(&j->cinfo);
    return 0;
  }
  jpeg_create_compress(&j->cinfo);
  j->dest.init_destination = dest_init;
  j->dest.empty_output_buffer = dest_empty;
  j->dest.term_destination = dest_term;
  j->cinfo.dest = &j->dest;
  j->cinfo.image_width = px->width;
  j->cinfo.image_height = px->height;
  j->cinfo.input_components = px->channels == 4 ? 4 : 3;
  j->cinfo.in_color_space = px->channels == 4 ? JCS_EXT_RGBX : JCS_RGB;  // alpha (if any) is ignored
  jpeg_set_defaults(&j->cinfo);  // YCbCr, 4:2:0 (2x2 luma sampling), baseline Huffman
  jpeg_set_quality(&j->cinfo, quality, TRUE);
  j->cinfo.dct_method = JDCT_ISLOW;
  j->cinfo.optimize_coding = TRUE;
  jpeg_start_compress(&j->cinfo, TRUE);
  const size_t stride = size_t(px->width) * size_t(px->channels);
  JSAMPROW rows[16];
  while (j->cinfo.next_scanline < j->cinfo.image_height) {
    if (panto_should_abort()) {
      j->msg_code = -1;
      jpeg_destroy_compress(&j->cinfo);
      return 0;
    }
    JDIMENSION n = 0;
    for (; n < 16 && j->cinfo.next_scanline + n < j->cinfo.image_height; n++)
      rows[n] = const_cast<JSAMPROW>(px->data + size_t(j->cinfo.next_scanline + n) * stride);
    jpeg_write_scanlines(&j->cinfo, rows, n);
  }
  jpeg_finish_compress(&j->cinfo);
  jpeg_destroy_compress(&j->cinfo);
  return 1;
}

}  // namespace

Status encode_jpeg(const PixelView& px, int quality, OwnedBytes* out) {
  auto* job = static_cast<EncodeJob*>(panto_budget_malloc(sizeof(EncodeJob)));
  if (!job) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while encoding JPEG");
  std::memset(job, 0, sizeof(EncodeJob));
  job->cap = size_t(px.width) * px.height / 4 + 65536;
  job->data = static_cast<uint8_t*>(panto_budget_malloc_sparse(job->cap));  // a guess; only what is written is resident
  const int ok = job->data ? run_encode(job, &px, quality < 1 ? 1 : quality > 100 ? 100 : quality) : 0;
  const int code = job->msg_code;
  const std::string reason = job->message;
  uint8_t* data = job->data;
  const size_t size = job->cap - job->dest.free_in_buffer;
  panto_budget_free(job);
  if (!ok) {
    panto_budget_free(data);
    if (code == -1) return Status::Err("ERR_ABORTED", "processing was aborted");
    Budget* b = current_budget();
    if (!data || code == JERR_OUT_OF_MEMORY || (b && b->exceeded.load()))
      return Status::Err("ERR_MEDIA_TOO_LARGE", "JPEG encoding failed (out of memory budget)");
    return Status::Err("ERR_INTERNAL", "JPEG encoding failed: " + reason);
  }
  *out = OwnedBytes::adopt(data, size, budget_release);
  return Status::Ok();
}

}  // namespace panto
