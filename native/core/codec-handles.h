// Owning handles for the C codec libraries (libdeflate, libwebp): each is freed by its RAII deleter on every path, so
// an early return can never leak a compressor, a picture or an encoder's output.
#pragma once

#include <libdeflate.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

#include <memory>

#include "media-core.h"

namespace panto {

struct DeflateCompressorFree {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};
struct DeflateDecompressorFree {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};
struct WebPDemuxerFree {
  void operator()(WebPDemuxer* d) const { WebPDemuxDelete(d); }
};

struct WebPIDecoderFree {
  void operator()(WebPIDecoder* d) const { WebPIDelete(d); }
};

/** A libdeflate compressor (nullptr when allocation failed). */
using DeflateCompressor = std::unique_ptr<libdeflate_compressor, DeflateCompressorFree>;
/** A libdeflate decompressor (nullptr when allocation failed). */
using DeflateDecompressor = std::unique_ptr<libdeflate_decompressor, DeflateDecompressorFree>;
/** A libwebp demuxer over borrowed bytes (which must outlive it). */
using WebPDemuxerHandle = std::unique_ptr<WebPDemuxer, WebPDemuxerFree>;
/** A libwebp incremental decoder (nullptr when allocation failed or the header is unreadable). */
using WebPIDecoderHandle = std::unique_ptr<WebPIDecoder, WebPIDecoderFree>;

/** A WebPPicture that is freed (WebPPictureFree) when the scope ends. */
class WebPPictureHandle {
 public:
  WebPPictureHandle() : ok_(WebPPictureInit(&pic_) != 0) {}
  ~WebPPictureHandle() { WebPPictureFree(&pic_); }
  WebPPictureHandle(const WebPPictureHandle&) = delete;
  WebPPictureHandle& operator=(const WebPPictureHandle&) = delete;
  bool ok() const { return ok_; }
  WebPPicture* get() { return &pic_; }

 private:
  WebPPicture pic_;
  bool ok_;
};

/** Releases bytes libwebp allocated (WebPFree). */
inline void webp_release(uint8_t* p) { WebPFree(p); }

/** A WebPMemoryWriter whose buffer is freed when the scope ends unless taken by a new owner. */
class WebPMemoryWriterHandle {
 public:
  WebPMemoryWriterHandle() { WebPMemoryWriterInit(&w_); }
  ~WebPMemoryWriterHandle() { WebPMemoryWriterClear(&w_); }
  WebPMemoryWriterHandle(const WebPMemoryWriterHandle&) = delete;
  WebPMemoryWriterHandle& operator=(const WebPMemoryWriterHandle&) = delete;
  WebPMemoryWriter* get() { return &w_; }
  /** Hands the written bytes to an owner (released with WebPFree); the writer is left empty. */
  OwnedBytes take() {
    OwnedBytes b = OwnedBytes::adopt(w_.mem, w_.size, webp_release);
    WebPMemoryWriterInit(&w_);  // forgets the buffer it no longer owns
    return b;
  }

 private:
  WebPMemoryWriter w_;
};

}  // namespace panto
