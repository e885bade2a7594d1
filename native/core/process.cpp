// The processing policy: caps from the header, pass-through with a lossless metadata strip, otherwise
// decode -> resize -> orient -> encode (codec preserved where providers accept it) -> byte-cap ladder.
#include <webp/decode.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <new>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <string>

#include "budget.h"
#include "codec-handles.h"
#include "cost.h"
#include "decoded-resize-stream.h"
#include "jpeg-decode.h"
#include "jpeg-planar.h"
#include "jpeg-resize-stream.h"
#include "internal.h"
#include "png-decode.h"
#include "png-encode.h"
#include "png-resize-stream.h"

namespace panto {

const char* const kBusyCode = "ERR_MEDIA_BUSY";

namespace {

constexpr uint32_t kMinLadderSide = 16;

std::string num(uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(size_t(i), ",");
  return s;
}

void add_change(ProcessResult* out, const char* c) {
  for (const std::string& s : out->changes)
    if (s == c) return;
  out->changes.emplace_back(c);
}

/** Fit (w, h) inside max x max, never upscaling, keeping aspect (each side at least 1). */
void fit_inside(uint32_t w, uint32_t h, uint32_t max, uint32_t* tw, uint32_t* th) {
  if (w <= max && h <= max) {
    *tw = w;
    *th = h;
    return;
  }
  double s = double(max) / double(std::max(w, h));
  *tw = std::max<uint32_t>(1, std::min<uint32_t>(max, uint32_t(std::lround(w * s))));
  *th = std::max<uint32_t>(1, std::min<uint32_t>(max, uint32_t(std::lround(h * s))));
}

bool webp_is_lossless(const uint8_t* d, size_t len) {
  WebPBitstreamFeatures f;
  return WebPGetFeatures(d, len, &f) == VP8_STATUS_OK && f.format == 2;
}

Status aborted(MediaType t) { return Status::Err("ERR_ABORTED", "processing was aborted", t); }

Status check_structure(const MediaInfo& info, const uint8_t* d, size_t len, int* damaged_ancillary) {
  *damaged_ancillary = 0;
  if (info.type == MediaType::Png) return png_validate(d, len, damaged_ancillary);
  if (info.type == MediaType::Jpeg) {
    JpegLayout l;
    return jpeg_walk(d, len, true, &l);
  }
  if (info.type == MediaType::Webp) {
    uint64_t riff = uint64_t(le32(d + 4)) + 8;
    if (riff > len)
      return Status::Err("ERR_CORRUPT_MEDIA", "image/webp is corrupt: truncated (RIFF size exceeds the data)",
                         MediaType::Webp);
  }
  if (info.type == MediaType::Bmp) {
    // Uncompressed pixel rows must all be present (stb would silently read zeros past the end).
    uint32_t dib = le32(d + 14);
    uint16_t bpp = dib == 12 ? le16(d + 24) : le16(d + 28);
    uint64_t stride = ((uint64_t(info.width) * bpp + 31) / 32) * 4;
    uint64_t need = uint64_t(le32(d + 10)) + stride * info.height;
    if (need > len)
      return Status::Err("ERR_CORRUPT_MEDIA",
                         "image/bmp is corrupt: truncated pixel data (" + num(len) + " of " + num(need) + " bytes)",
                         MediaType::Bmp);
  }
  return Status::Ok();  // GIF: probe already walked every block
}

Status encode_as(const PixelView& px, MediaType codec, int quality, bool lossless, OwnedBytes* out) {
  switch (codec) {
    case MediaType::Jpeg: return encode_jpeg(px, quality, out);
    case MediaType::Webp: return encode_webp(px, lossless, quality, out);
    default: return encode_png(px, out);
  }
}

}  // namespace

/**
 * Predicts the PNG size of `px` by encoding 8 evenly spaced bands (1/8 of the rows) — about 1/8 of a full encode.
 * Photo-like content at 2000 px is 4-9 MB as PNG; knowing that up front skips a doomed full encode.
 */
uint64_t estimate_png_size(const Pixels& px) {
  constexpr uint32_t kBands = 8;
  const uint32_t band_rows = px.height / (kBands * 8);
  if (band_rows < 4) return 0;
  uint64_t total = 0;
  for (uint32_t b = 0; b < kBands; b++) {
    uint32_t y0 = uint32_t((uint64_t(px.height) * (2 * b + 1)) / (2 * kBands)) - band_rows / 2;
    OwnedBytes out;
    if (!encode_png(px.view().rows(y0, band_rows), &out).ok()) return 0;
    total += out.size;
  }
  return total * px.height / (uint64_t(band_rows) * kBands);
}

/**
 * Over the cap by more than the estimator's measured overestimate (estimate/actual - 1 over 270 renditions of 1-5 MP:
 * camera photos, dithered GIFs, real and rendered screenshots, UI, text, charts, gradients, noise): 1.10x the cap at
 * >= 1/4 byte per sample, where it was at most +5% on real images and +9% on synthetic noise (only noise stripes
 * aliasing with the bands and periodic noise went past 10%: +15%, +28%); 2.5x below that (flat UI, text: up to
 * +109%, each band's first rows having no deflate window to match against).
 */
bool png_surely_over_cap(const Pixels& px, uint64_t cap) {
  const uint64_t estimate = estimate_png_size(px);
  const uint64_t samples = uint64_t(px.width) * px.height * uint64_t(px.channels);
  return estimate >= samples / 4 ? estimate > cap + cap / 10 : estimate > cap * 5 / 2;
}

/**
 * The PNG of a resize of the PNG `d` to sw x sh, predicted from the file's own density: its compressed bytes per
 * filtered byte, times the filtered bytes of the output. A guess for choosing a path, never for a result (a 12 MP
 * camera PNG: 2.96 MB predicted, 2.84 MB made; the native test's photo-like PNG: 4.5% high); a header that lies only
 * moves the choice (both paths give the same bytes). 0 when the header gives no plan.
 */
uint64_t png_size_by_density(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t sw, uint32_t sh) {
  const PngPlan plan = png_plan(d, len, info, 1, true);
  if (plan.raw_bytes == 0 || plan.channels == 0) return 0;
  const uint64_t out_raw = (uint64_t(sw) * uint64_t(plan.channels) + 1) * sh;
  return uint64_t(double(len) / double(plan.raw_bytes) * double(out_raw));
}

namespace {

/**
 * The streaming PNG path (png-resize-stream.h): decodes and resizes to sw x sh into `enc` (filtered PNG rows) when
 * given, else into `px`. `px` gets the size and channels either way. An RGBA image is first resized as RGB (what
 * drop_alpha gives an opaque one) and, at its first non-opaque row, again from the start as RGBA.
 * With `discardable` (ProcessOptions::input_discardable), the pass that cannot restart (the input has no alpha, or
 * the RGBA pass) lets the decoder return the input's consumed pages to the OS: nothing reads `d` past its header
 * after this (the ladder works on the pixels).
 */
Status png_stream(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, uint32_t sw, uint32_t sh,
                  PngRowEncoder* enc, Pixels* px, bool discardable) {
  const bool may_restart = png_plan(d, len, info, shrink, true).channels == 4;
  for (bool opaque : {true, false}) {
    InputDiscardScope discard(current_budget(), discardable && !(opaque && may_restart) ? d : nullptr, len);
    bool transparent = false;
    size_t row_bytes = 0;
    auto begin = [&](int ch) {
      px->width = sw, px->height = sh, px->channels = ch;
      row_bytes = size_t(sw) * ch;
      if (enc) return enc->begin(sw, sh, ch);
      if (!alloc_owned(row_bytes * sh, &px->data))
        return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing", MediaType::Png);
      return Status::Ok();
    };
    ResizedRowSink to_encoder = [&](const uint8_t* row, uint32_t) { enc->put_row(row); };
    ResizedRowSink to_pixels = [&](const uint8_t* row, uint32_t y) {
      std::memcpy(px->data.data + row_bytes * y, row, row_bytes);
    };
    Status s = png_resize_stream(d, len, info, shrink, sw, sh, opaque, begin, enc ? to_encoder : to_pixels,
                                 &transparent);
    if (!s.ok() || !transparent) return s;
  }
  return Status::Err("ERR_INTERNAL", "PNG stream reported transparency twice", MediaType::Png);
}

/** Bytes at the start of an input that a call keeps resident after giving the rest back (sniff reads them on the
 *  error paths). */
constexpr size_t kInputHeaderKeep = 64;

Status too_large_output(uint64_t cap, uint64_t got) {
  return Status::Err("ERR_MEDIA_TOO_LARGE", "cannot encode the image within " + num(cap) +
                                                " bytes (smallest attempt was " + num(got) + " bytes)");
}

Status process_impl(const uint8_t* d, size_t len, const ProcessOptions& opts, ProcessResult* out) {
  const MediaType t = sniff(d, len);
  if (!opts.media_type_hint.empty() && media_type_from_mime(opts.media_type_hint) != t && t != MediaType::Unknown)
    add_change(out, "hint-corrected");

  if (t == MediaType::Pdf) {
    if (len > opts.max_pdf_bytes)
      return Status::Err("ERR_MEDIA_TOO_LARGE",
                         "PDF is " + num(len) + " bytes; the limit is " + num(opts.max_pdf_bytes) + " bytes", t);
  } else if (len > opts.max_input_bytes) {
    return Status::Err("ERR_MEDIA_TOO_LARGE",
                       "input is " + num(len) + " bytes; the limit is " + num(opts.max_input_bytes) + " bytes", t);
  }

  MediaInfo info;
  Status s = probe(d, len, &info);
  if (!s.ok()) return s;
  out->original = info;

  if (t == MediaType::Pdf) {
    out->unchanged = true;
    out->type = t;
    return Status::Ok();
  }

  const uint64_t pixels = uint64_t(info.width) * info.height;
  if (pixels > opts.max_pixels)
    return Status::Err("ERR_MEDIA_TOO_LARGE",
                       std::string(mime_of(t)) + " is " + num(info.width) + "x" + num(info.height) + " = " +
                           num(pixels) + " pixels; the limit is " + num(opts.max_pixels) + " pixels",
                       t);

  const bool swap = info.orientation >= 5;
  const uint32_t ow = swap ? info.height : info.width, oh = swap ? info.width : info.height;
  uint32_t tw, th;
  fit_inside(ow, oh, opts.max_dimension, &tw, &th);

  MediaType codec;  // output codec before the byte-cap ladder
  switch (opts.format) {
    case OutputFormat::Jpeg: codec = MediaType::Jpeg; break;
    case OutputFormat::Png: codec = MediaType::Png; break;
    case OutputFormat::Webp: codec = MediaType::Webp; break;
    default: codec = (t == MediaType::Gif || t == MediaType::Bmp) ? MediaType::Png : t;
  }
  // GIF never passes through: Gemini takes no GIF and OpenAI no animated one, so a stored GIF becomes PNG.
  const bool passable = t != MediaType::Bmp && t != MediaType::Gif && info.frames <= 1 && info.orientation == 1 &&
                        tw == ow && th == oh && len <= opts.max_encoded_bytes &&
                        (opts.format == OutputFormat::Auto || codec == t);
  int damaged_ancillary = 0;
  s = check_structure(info, d, len, &damaged_ancillary);
  if (!s.ok()) return s;
  if (passable) {
    out->type = t;
    out->width = info.width;
    out->height = info.height;
    // Damaged ancillary PNG chunks are dropped even with keepMetadata (a provider's decoder may be stricter).
    if (!opts.keep_metadata || damaged_ancillary) {
      Status err;
      if (strip_metadata(t, d, len, &out->data, &err, !opts.keep_metadata)) {
        add_change(out, "metadata-stripped");
        return Status::Ok();
      }
      if (!err.ok()) return err;
    }
    out->unchanged = true;
    return Status::Ok();
  }

  // A shrinking JPEG decodes at the smallest M/8 scale still >= the target (DCT-domain scaling), resized from there.
  const int eighths =
      t == MediaType::Jpeg ? jpeg_scale_eighths(info.width, info.height, swap ? th : tw, swap ? tw : th) : 8;
  // Decode under a budget estimated from the header for this format and decoder path, reserved up front from the
  // process-wide pool: all calls in flight together never hold more than the cap.
  const uint32_t sw = swap ? th : tw, sh = swap ? tw : th;  // target in stored orientation
  // A PNG shrinking at least 2x in both dimensions is box-averaged by an integer factor while it decodes (the full
  // size never exists) and resized from there to the exact target.
  const uint32_t png_shrink = t == MediaType::Png ? png_shrink_factor(info.width, info.height, sw, sh) : 1;
  const uint64_t estimate = estimate_process_bytes(d, len, info, eighths, tw, th, png_shrink);
  if (estimate > memory_cap())
    return Status::Err("ERR_MEDIA_TOO_LARGE",
                       std::string(mime_of(t)) + " " + num(info.width) + "x" + num(info.height) + " needs about " +
                           num(estimate >> 20) + " MiB to process; the process-wide limit is " +
                           num(memory_cap() >> 20) + " MiB",
                       t);
  MemoryReservation reservation;
  if (!reservation.try_reserve(estimate))
    return Status::Err(kBusyCode, "the process-wide memory limit is taken by other calls in flight", t);
  Budget budget(estimate, opts.abort_flag);
  BudgetScope scope(&budget);
  if (should_abort()) return aborted(t);

  // Read before any decode: the input may be given back to the OS once decoded (below).
  const bool lossless = codec == MediaType::Webp && t == MediaType::Webp && webp_is_lossless(d, len);
  Pixels px;
  // A PNG that png-decode.cpp streams and that needs a resize is decoded and resized row by row: the decoded image
  // never exists. When the resized pixels only become a PNG (no orientation, no prediction below), the resized rows
  // are filtered straight into the encoder: the resized image does not exist either unless the byte cap needs it.
  const bool png_streams = t == MediaType::Png && png_stream_resizes(d, len, info, png_shrink, sw, sh);
  // Fused unless the PNG may well miss the byte cap: then the resized pixels are kept for the prediction below (which
  // can skip the full encode). A file denser than the cap allows, scaled to the output, is the sign.
  const bool png_fused = png_streams && info.orientation == 1 && codec == MediaType::Png &&
                         (opts.format == OutputFormat::Png || len <= opts.max_encoded_bytes / 2 ||
                          uint64_t(sw) * sh < (1u << 20) ||
                          png_size_by_density(d, len, info, sw, sh) <= opts.max_encoded_bytes);
  // A JPEG whose scaled decode still needs a resize is decoded and resized row by row too: only the resized image
  // exists (orientation, the encoder and the ladder take it as before).
  const bool jpeg_streams = t == MediaType::Jpeg && jpeg_stream_resizes(info, eighths, sw, sh);
  // ... and when those pixels only become a JPEG (no orientation), the resized rows go straight into the encoder: the
  // resized image does not exist either unless the byte cap needs it (then the stream runs again into pixels).
  const bool jpeg_fused = jpeg_streams && info.orientation == 1 && codec == MediaType::Jpeg;
  // A still, opaque, lossy WebP that shrinks and stays a lossy WebP is decoded at its target size straight into the
  // encoder's YUV 4:2:0 planes (decode_webp_yuv): no RGB image, no YUV -> RGB -> YUV round trip, the chroma rescaled
  // at its own resolution. Not the same file as through RGB pixels (no colour conversions to round), as close to the
  // source. The ladder, when needed, decodes the pixels again (below).
  const bool webp_fused = t == MediaType::Webp && codec == MediaType::Webp && !lossless && info.orientation == 1 &&
                          webp_scales_on_decode(info, sw, sh);
  PngRowEncoder png_rows;
  WebPPictureHandle webp_yuv;  // webp_fused: the decoded YUV 4:2:0 picture, encoded, kept for the ladder
  if (png_streams) {
    s = png_stream(d, len, info, png_shrink, sw, sh, png_fused ? &png_rows : nullptr, &px, opts.input_discardable);
    if (!s.ok()) return s;
    if (should_abort()) return aborted(t);
  } else if (jpeg_fused) {
    // Planar YCbCr when the file is stored that way (jpeg-planar.h), else the RGB stream: the same rows' bytes either
    // way within a JPEG's rounding, not the same file.
    const int q = std::clamp(opts.jpeg_quality, 1, 100);
    s = jpeg_planar_applies(info, eighths, sw, sh) ? jpeg_planar_encode(d, len, info, eighths, sw, sh, q, &out->data)
                                                   : Status::Err(kNotPlanarCode, "");
    if (s.code == kNotPlanarCode) s = jpeg_resize_stream_encode(d, len, info, eighths, sw, sh, q, &out->data);
    if (!s.ok()) return s;
    if (should_abort()) return aborted(t);
    px.width = sw, px.height = sh, px.channels = 3;  // (no pixels unless the ladder needs them, below)
  } else if (jpeg_streams) {
    s = jpeg_resize_stream(d, len, info, eighths, sw, sh, &px);
    if (!s.ok()) return s;
    if (should_abort()) return aborted(t);
  } else if (webp_fused) {
    if (!webp_yuv.ok()) return Status::Err("ERR_INTERNAL", "libwebp version mismatch", t);
    s = decode_webp_yuv(d, len, info, sw, sh, webp_yuv.get());
    if (!s.ok()) return s;
    // Decoded: the input is not read again (the ladder, if needed, takes the picture's pixels).
    if (opts.input_discardable) {
      InputDiscardScope discard(&budget, d, len);
      discard_input(d + kInputHeaderKeep, d + len);
    }
    if (should_abort()) return aborted(t);
    s = encode_webp_picture(webp_yuv.get(), false, std::clamp(opts.jpeg_quality, 1, 100), &out->data);
    if (!s.ok()) return s;
    if (should_abort()) return aborted(t);
    px.width = sw, px.height = sh, px.channels = 3;  // (no pixels unless the ladder needs them, below)
  } else {
    {
      // A PNG decoded row by row (png-decode.h Streaming) returns its consumed input to the OS as it goes: the input
      // is not read again past its header after this decode.
      InputDiscardScope discard(&budget, t == MediaType::Png && opts.input_discardable ? d : nullptr, len);
      s = decode_image(d, len, info, &px, eighths, png_shrink, sw, sh);
    }
    if (!s.ok()) return s;
    // Decoded whole: nothing reads the input again in this call past its first page (sniff on an error path;
    // `lossless` was read above), so a call that owns its input gives the rest back now rather than holding it
    // through the resize, the encode and the ladder.
    if (opts.input_discardable) {
      InputDiscardScope discard(&budget, d, len);
      discard_input(d + kInputHeaderKeep, d + len);
    }
    if (should_abort()) return aborted(t);
    const bool opaque_rgba = px.channels == 4 && !has_transparency(px);
    if (t == MediaType::Gif && gif_stream_resizes(px.width, px.height, sw, sh)) {
      // A GIF canvas (whole, from stb, RGBA) is resized through the row stream, its pages given back as its rows are
      // consumed: the canvas and the resized image are never both resident in full. Same bytes as below.
      Pixels small;
      s = decoded_resize_stream(&px, opaque_rgba, sw, sh, t, &small);
      if (!s.ok()) return s;
      px = std::move(small);
      if (should_abort()) return aborted(t);
    } else if (opaque_rgba) {
      drop_alpha(&px);
    }

    if (px.width != sw || px.height != sh) {
      Pixels small;
      s = resize_pixels(px, sw, sh, &small);
      if (!s.ok()) return s;
      px = std::move(small);
      if (should_abort()) return aborted(t);
    }
  }
  if (tw != ow || th != oh) add_change(out, "resized");
  if (info.orientation != 1) {
    Pixels upright;
    s = orient_pixels(px, info.orientation, &upright);
    if (!s.ok()) return s;
    px = std::move(upright);
    add_change(out, "oriented");
  }
  if (info.frames > 1) add_change(out, "first-frame");
  if (codec == MediaType::Jpeg && px.channels == 4) {
    flatten_on_white(&px);
    add_change(out, "flattened");
  }

  const int q = std::clamp(opts.jpeg_quality, 1, 100);
  // A PNG predicted well over the cap goes straight to the ladder (unless the caller forced PNG). A PNG input already
  // under half the cap (screenshots) is not predicted: its re-encoded pixels nearly always fit, and a miss costs only
  // the full encode the prediction would have skipped.
  const bool doomed_png = !png_fused && codec == MediaType::Png && opts.format != OutputFormat::Png &&
                          !(t == MediaType::Png && len <= opts.max_encoded_bytes / 2) &&
                          uint64_t(px.width) * px.height >= (1u << 20) &&
                          png_surely_over_cap(px, opts.max_encoded_bytes);
  if (png_fused) {
    s = png_rows.finish(&out->data);
    if (!s.ok()) return s;
    // Over the cap: the ladder needs the resized pixels, recovered exactly from the PNG (inflated and unfiltered).
    if (out->data.size > opts.max_encoded_bytes) {
      s = png_rows.take_pixels(out->data, &px);
      if (!s.ok()) return s;
    }
  } else if (jpeg_fused) {
    // Over the cap: the ladder needs the resized pixels; decoded and resized again (the same bytes).
    if (out->data.size > opts.max_encoded_bytes) {
      s = jpeg_resize_stream(d, len, info, eighths, sw, sh, &px);
      if (!s.ok()) return s;
    }
  } else if (webp_fused) {
    // Over the cap: the ladder needs RGB pixels; the picture's, upsampled as libwebp's decoder does.
    if (out->data.size > opts.max_encoded_bytes) {
      s = webp_yuv_to_pixels(webp_yuv.get(), &px);
      if (!s.ok()) return s;
    }
  } else if (!doomed_png) {
    s = encode_as(px.view(), codec, q, lossless, &out->data);
    if (!s.ok()) return s;
  }
  add_change(out, "reencoded");

  if (doomed_png || out->data.size > opts.max_encoded_bytes) {
    // Ladder: opaque -> JPEG at falling quality; alpha -> lossy WebP at falling quality; then smaller sizes.
    // PNG forced by the caller only steps the size down.
    const bool alpha = px.channels == 4;
    MediaType lc = opts.format == OutputFormat::Png ? MediaType::Png : (alpha ? MediaType::Webp : MediaType::Jpeg);
    if (opts.format == OutputFormat::Jpeg) lc = MediaType::Jpeg;
    std::vector<int> ladder;
    if (lc != MediaType::Png)
      for (int lq : {80, 70, 55, 40})
        if (lq < q || lc != codec || lossless) ladder.push_back(lq);
    if (ladder.empty()) ladder.push_back(lc == MediaType::Png ? 0 : 40);
    uint64_t smallest = doomed_png ? UINT64_MAX : out->data.size;
    Pixels cur;
    const Pixels* src = &px;
    bool fitted = false;
    while (!fitted) {
      for (int lq : ladder) {
        if (should_abort()) return aborted(t);
        OwnedBytes attempt;
        s = encode_as(src->view(), lc, lq, false, &attempt);
        if (!s.ok()) return s;
        smallest = std::min<uint64_t>(smallest, attempt.size);
        if (lc != MediaType::Png) add_change(out, "quality-reduced");
        if (attempt.size <= opts.max_encoded_bytes) {
          out->data = std::move(attempt);
          codec = lc;
          fitted = true;
          break;
        }
      }
      if (fitted) break;
      uint32_t nw = uint32_t(src->width * 0.75), nh = uint32_t(src->height * 0.75);
      if (nw < kMinLadderSide || nh < kMinLadderSide) return too_large_output(opts.max_encoded_bytes, smallest);
      Pixels next;
      s = resize_pixels(*src, nw, nh, &next);
      if (!s.ok()) return s;
      cur = std::move(next);
      src = &cur;
      add_change(out, "resized");
    }
    if (src == &cur) px = std::move(cur);
  }
  if (codec != t) add_change(out, "converted");
  out->type = codec;
  out->width = px.width;
  out->height = px.height;
  return Status::Ok();
}

}  // namespace

/**
 * libwebp and the C++ runtime allocate with malloc; on glibc each libuv worker thread gets its own arena, which keeps
 * freed megabytes resident after a large image. Trimming after pixel work returns them (our own large buffers are
 * mmapped and already gone).
 */
static void release_free_heap(const ProcessResult& r) {
#if defined(__GLIBC__)
  if (uint64_t(r.original.width) * r.original.height >= (1u << 20) && !r.unchanged) {
    // One trim at a time. Where malloc is interposed (ASan; jemalloc or mimalloc by LD_PRELOAD) glibc's own allocator
    // is never used, and malloc_trim initialises it lazily without a lock: two first trims at once crashed in mtrim
    // (4 calls in parallel under ASan, about 1 run in 20 on a loaded machine). Serialised, the first one initialises it.
    static std::mutex trim_lock;
    std::lock_guard<std::mutex> hold(trim_lock);
    malloc_trim(0);
  }
#else
  (void)r;
#endif
}

Status process(const uint8_t* d, size_t len, const ProcessOptions& opts, ProcessResult* out) {
  try {
    *out = ProcessResult{};
    Status s = process_impl(d, len, opts, out);
    release_free_heap(*out);
    if (!s.ok()) {
      out->data.reset();
      if (s.media_type == MediaType::Unknown) s.media_type = sniff(d, len);
    }
    return s;
  } catch (const std::bad_alloc&) {
    out->data.reset();
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while processing", sniff(d, len));
  } catch (const std::exception& e) {
    out->data.reset();
    return Status::Err("ERR_INTERNAL", std::string("unexpected exception: ") + e.what(), sniff(d, len));
  } catch (...) {
    out->data.reset();
    return Status::Err("ERR_INTERNAL", "unexpected exception while processing", sniff(d, len));
  }
}

Status decode_to_rgba(const uint8_t* d, size_t len, uint64_t max_pixels, DecodedImage* out) {
  try {
    MediaInfo info;
    Status s = probe(d, len, &info);
    if (!s.ok()) return s;
    if (info.type == MediaType::Pdf) return Status::Err("ERR_UNSUPPORTED_MEDIA", "a PDF has no pixels", info.type);
    if (uint64_t(info.width) * info.height > max_pixels)
      return Status::Err("ERR_MEDIA_TOO_LARGE", "image exceeds the pixel limit", info.type);
    int damaged = 0;
    s = check_structure(info, d, len, &damaged);
    if (!s.ok()) return s;
    Budget budget(estimate_decode_bytes(d, len, info, 8) + uint64_t(info.width) * info.height * 4 + (48ull << 20));
    BudgetScope scope(&budget);
    Pixels px;
    s = decode_image(d, len, info, &px);
    if (!s.ok()) return s;
    out->width = px.width;
    out->height = px.height;
    if (px.channels == 4) {
      out->rgba = std::move(px.data);
      return Status::Ok();
    }
    const size_t n = size_t(px.width) * px.height;
    if (!alloc_owned(n * 4, &out->rgba)) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while decoding");
    for (size_t i = 0; i < n; i++) {
      std::memcpy(out->rgba.data + i * 4, px.data.data + i * 3, 3);
      out->rgba.data[i * 4 + 3] = 255;
    }
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while decoding");
  } catch (...) {
    return Status::Err("ERR_INTERNAL", "unexpected exception while decoding");
  }
}

}  // namespace panto
