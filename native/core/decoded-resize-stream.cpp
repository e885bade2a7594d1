// A decoded image resized through the row stream, its pages released as consumed (see decoded-resize-stream.h).
#include "decoded-resize-stream.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "budget.h"
#include "row-resize-stream.h"

namespace panto {
namespace {

/** Rows of the decoded image, top to bottom (RGBA narrowed to RGB with `drop`); every whole page below the rows
 *  copied out so far is returned to the system each time another kReleaseBytes of them is done. */
class DecodedProducer final : public RowProducer {
 public:
  DecodedProducer(const Pixels* px, bool drop) : px_(px), drop_(drop), stride_(size_t(px->width) * px->channels) {}

  Status next_row(uint8_t* dst) override {
    if ((y_ & 15) == 0 && should_abort()) return Status::Err("ERR_ABORTED", "processing was aborted");
    const uint8_t* src = px_->data.data + stride_ * y_;
    if (!drop_) {
      std::memcpy(dst, src, stride_);
    } else {
      for (uint32_t i = 0; i < px_->width; i++) {
        dst[i * 3] = src[i * 4];
        dst[i * 3 + 1] = src[i * 4 + 1];
        dst[i * 3 + 2] = src[i * 4 + 2];
      }
    }
    y_++;
    release(stride_ * y_);
    return Status::Ok();
  }

  Status finish() override { return Status::Ok(); }

 private:
  static constexpr size_t kReleaseBytes = size_t(2) << 20;

  /** Returns the whole pages of [released_, done) of the pixel block (only pages inside it: they hold nothing else). */
  void release(size_t done) {
    if (done - released_ < kReleaseBytes && done < px_->data.size) return;
    release_pages(px_->data.data + released_, px_->data.data + done);
    released_ = done;
  }

  const Pixels* px_;
  const bool drop_;
  const size_t stride_;
  uint32_t y_ = 0;
  size_t released_ = 0;
};

std::atomic<bool> g_gif_streaming{[] {
  const char* v = std::getenv("PANTO_GIF_STREAMING");
  return !(v && v[0] == '0' && v[1] == '\0');
}()};

}  // namespace

bool set_gif_streaming(bool allowed) { return g_gif_streaming.exchange(allowed); }

bool gif_stream_resizes(uint32_t w, uint32_t h, uint32_t sw, uint32_t sh) {
  return g_gif_streaming.load(std::memory_order_relaxed) && (w != sw || h != sh) && sw >= kStreamMinWidth;
}

Status decoded_resize_stream(Pixels* px, bool drop_alpha, uint32_t sw, uint32_t sh, MediaType type, Pixels* out) {
  const bool drop = drop_alpha && px->channels == 4;
  const int ch = drop ? 3 : px->channels;
  Pixels resized;
  Status s;
  if (!alloc_owned(size_t(sw) * sh * ch, &resized.data)) {
    s = Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing", type);
  } else {
    resized.width = sw;
    resized.height = sh;
    resized.channels = ch;
    const size_t row_bytes = size_t(sw) * ch;
    uint8_t* dst = resized.data.data;
    const ResizedRowSink sink = [dst, row_bytes](const uint8_t* row, uint32_t y) {
      std::memcpy(dst + row_bytes * y, row, row_bytes);
    };
    DecodedProducer producer(px, drop);
    s = row_resize_stream(&producer, px->width, px->height, ch, sw, sh, sink, type);
  }
  px->data.reset();  // (its released pages read as zero now: the image is gone either way)
  if (!s.ok()) return s;
  *out = std::move(resized);
  return Status::Ok();
}

}  // namespace panto
