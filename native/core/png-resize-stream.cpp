// Streaming PNG decode -> resize (see png-resize-stream.h): PngRowReader as the producer of row-resize-stream.h.
#include "png-resize-stream.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "png-decode.h"
#include "row-resize-stream.h"

namespace panto {
namespace {

/** PngRowReader's rows; with `opaque_rgb`, each RGBA row is checked opaque and narrowed to RGB, and the first row with
 *  an alpha below 255 stops the stream (transparent() is then true). */
class PngProducer final : public RowProducer {
 public:
  PngProducer(PngRowReader* reader, bool opaque_rgb, size_t in_row_bytes)
      : reader_(reader), opaque_rgb_(opaque_rgb), in_row_bytes_(in_row_bytes) {}

  /** The RGBA row of the opaque check (false: over budget). */
  bool alloc() { return !opaque_rgb_ || alloc_owned(in_row_bytes_, &rgba_); }

  Status next_row(uint8_t* dst) override {
    if (!opaque_rgb_) return reader_->next_row(dst);
    uint8_t* rgba = rgba_.data;
    Status s = reader_->next_row(rgba);
    if (!s.ok()) return s;
    const size_t n = in_row_bytes_ / 4;
    uint8_t acc = 0xFF;
    for (size_t i = 0; i < n; i++) acc &= rgba[i * 4 + 3];
    if (acc != 0xFF) {
      transparent_ = true;
      return Status::Err("ERR_INTERNAL", "PNG row is not opaque (restart as RGBA)", MediaType::Png);
    }
    for (size_t i = 0; i < n; i++) {
      dst[i * 3] = rgba[i * 4];
      dst[i * 3 + 1] = rgba[i * 4 + 1];
      dst[i * 3 + 2] = rgba[i * 4 + 2];
    }
    return Status::Ok();
  }

  Status finish() override { return reader_->finish(); }

  bool transparent() const { return transparent_; }

 private:
  PngRowReader* reader_;
  const bool opaque_rgb_;
  const size_t in_row_bytes_;
  OwnedBytes rgba_;
  bool transparent_ = false;
};

/** On unless the environment had PANTO_PNG_STREAMING=0 when the first call read it (benchmarks comparing the two
 *  paths in one build; not documented API). */
std::atomic<bool> g_streaming{[] {
  const char* v = std::getenv("PANTO_PNG_STREAMING");
  return !(v && v[0] == '0' && v[1] == '\0');
}()};

}  // namespace

bool set_png_streaming(bool allowed) { return g_streaming.exchange(allowed); }

bool png_stream_resizes(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, uint32_t sw,
                        uint32_t sh) {
  if (info.type != MediaType::Png || !g_streaming.load(std::memory_order_relaxed)) return false;
  const PngPlan plan = png_plan(d, len, info, shrink, true);
  return plan.path == PngPath::Streaming && (plan.out_w != sw || plan.out_h != sh) &&
         sw >= kStreamMinWidth;
}

uint64_t png_resize_stream_bytes(uint32_t out_w, uint32_t tw, int channels) {
  // The generic stream's ring and stbir buffers, plus the opaque check's RGBA row (and one ring row of slack).
  const uint64_t row = uint64_t(out_w) * channels;
  return row_resize_stream_bytes(out_w, tw, channels) + row + uint64_t(out_w) * 4;
}

Status png_resize_stream(const uint8_t* d, size_t len, const MediaInfo& info, uint32_t shrink, uint32_t tw,
                         uint32_t th, bool opaque_rgb, const std::function<Status(int channels)>& begin,
                         const ResizedRowSink& sink, bool* transparent) {
  *transparent = false;
  if (tw < kStreamMinWidth)
    return Status::Err("ERR_INTERNAL", "streaming resize below its minimum width", MediaType::Png);
  PngRowReader reader;
  Status s = reader.open(d, len, info, shrink);
  if (!s.ok()) return s;
  const PngPlan& plan = reader.plan();
  const bool drop = opaque_rgb && plan.channels == 4;
  const int ch = drop ? 3 : plan.channels;
  s = begin(ch);
  if (!s.ok()) return s;
  PngProducer producer(&reader, drop, size_t(plan.out_w) * plan.channels);
  if (!producer.alloc())
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing", MediaType::Png);
  s = row_resize_stream(&producer, plan.out_w, plan.out_h, ch, tw, th, sink, MediaType::Png);
  if (producer.transparent()) {
    *transparent = true;
    return Status::Ok();
  }
  return s;
}

}  // namespace panto
