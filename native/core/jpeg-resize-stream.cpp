// Streaming JPEG decode -> resize (see jpeg-resize-stream.h).
#include "jpeg-resize-stream.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "jpeg-decode.h"
#include "jpeg-encode.h"

namespace panto {
namespace {

/** JpegRowReader's rows, one per call; CMYK/YCCK rows are read into a scratch row and converted to RGB. */
class JpegProducer final : public RowProducer {
 public:
  explicit JpegProducer(JpegRowReader* reader) : reader_(reader) {}

  /** The CMYK row (false: over budget). */
  bool alloc() { return reader_->channels() == 3 || alloc_owned(size_t(reader_->width()) * 4, &cmyk_); }

  Status next_row(uint8_t* dst) override {
    if (reader_->channels() == 3) return reader_->read_rows(&dst, 1);
    uint8_t* row = cmyk_.data;
    Status s = reader_->read_rows(&row, 1);
    if (!s.ok()) return s;
    cmyk_row_to_rgb(row, dst, reader_->width());
    return Status::Ok();
  }

  Status finish() override { return reader_->finish(); }

 private:
  JpegRowReader* reader_;
  OwnedBytes cmyk_;
};

std::atomic<bool> g_streaming{[] {
  const char* v = std::getenv("PANTO_JPEG_STREAMING");
  return !(v && v[0] == '0' && v[1] == '\0');
}()};

}  // namespace

bool set_jpeg_streaming(bool allowed) { return g_streaming.exchange(allowed); }

bool jpeg_stream_resizes(const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh) {
  if (info.type != MediaType::Jpeg || !g_streaming.load(std::memory_order_relaxed)) return false;
  if (eighths < 1 || eighths > 8) eighths = 8;
  return (jpeg_scaled_dim(info.width, eighths) != sw || jpeg_scaled_dim(info.height, eighths) != sh) &&
         sw >= kStreamMinWidth;
}

uint64_t jpeg_resize_stream_bytes(uint32_t scaled_w, uint32_t sw) {
  return row_resize_stream_bytes(scaled_w, sw, 3) + uint64_t(scaled_w) * 4;
}

namespace {

/** Opens the reader and streams its resized rows into `sink`; `begin` (the sink's setup) runs once the decoder has
 *  started, before any row. */
template <typename Begin>
Status stream_rows(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh,
                   Begin begin, const ResizedRowSink& sink) {
  const MediaType T = MediaType::Jpeg;
  JpegRowReader reader;
  Status s = reader.open(d, len, info, eighths);
  if (!s.ok()) return s;
  JpegProducer producer(&reader);
  if (!producer.alloc()) return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing", T);
  s = begin();
  if (!s.ok()) return s;
  return row_resize_stream(&producer, reader.width(), reader.height(), 3, sw, sh, sink, T);
}

}  // namespace

Status jpeg_resize_stream(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh,
                          Pixels* out) {
  const size_t row_bytes = size_t(sw) * 3;
  Pixels px;
  auto begin = [&px, sw, sh, row_bytes] {
    if (!alloc_owned(row_bytes * sh, &px.data))
      return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing", MediaType::Jpeg);
    px.width = sw;
    px.height = sh;
    px.channels = 3;
    return Status::Ok();
  };
  const ResizedRowSink sink = [&px, row_bytes](const uint8_t* row, uint32_t y) {
    std::memcpy(px.data.data + row_bytes * y, row, row_bytes);
  };
  const Status s = stream_rows(d, len, info, eighths, sw, sh, begin, sink);
  if (!s.ok()) return s;
  *out = std::move(px);
  return Status::Ok();
}

Status jpeg_resize_stream_encode(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, uint32_t sw,
                                 uint32_t sh, int quality, OwnedBytes* out) {
  JpegRowEncoder enc;
  auto begin = [&enc, sw, sh, quality] { return enc.begin(sw, sh, 3, quality); };
  const ResizedRowSink sink = [&enc](const uint8_t* row, uint32_t) { enc.put_rows(&row, 1); };
  const Status s = stream_rows(d, len, info, eighths, sw, sh, begin, sink);
  if (!s.ok()) return s;
  return enc.finish(out);
}

}  // namespace panto
