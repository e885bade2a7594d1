// JPEG -> JPEG in planar YCbCr (see jpeg-planar.h).
#include "jpeg-planar.h"

#include <stb/stb_image_resize2.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <vector>

#include "budget.h"
#include "jpeg-decode.h"
#include "jpeg-encode.h"
#include "jpeg-resize-stream.h"
#include "parallel.h"

// WebAssembly without -pthread (scripts/build-wasm.sh): std::thread cannot start, so the resize pulls the rows.
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define PANTO_PLANAR_THREADS 0
#else
#define PANTO_PLANAR_THREADS 1
#endif

#if PANTO_PLANAR_THREADS
#include <thread>
#endif

namespace panto {
namespace {

std::atomic<bool> g_planar{[] {
  const char* v = std::getenv("PANTO_JPEG_PLANAR");
  return !(v && v[0] == '0' && v[1] == '\0');
}()};
std::atomic<bool> g_strips{true};

/** Luma output rows per strip (chroma: half as many). */
constexpr uint32_t kStripRows = 64;
/** iMCU rows a waiting resize lets the decoder run ahead before it is woken: one wake-up per batch, not per row. */
constexpr uint32_t kWakeReads = 4;

Status oom() { return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing", MediaType::Jpeg); }

uint32_t strips_for(uint32_t sh) {
  return g_strips.load(std::memory_order_relaxed) ? std::max(1u, sh / kStripRows) : 1;
}

/** Thrown from stbir's input callback to leave the resize when the decoder stopped early (stbir allocates nothing
 *  while it runs, so unwinding through it leaks nothing; its buffers go with stbir_free_samplers). */
struct StopResize {};

/** Bytes of consumed rows a plane gathers before they are given back to the system (release_pages). */
constexpr size_t kReleaseBytes = size_t(1) << 20;

/**
 * The decoder's side of the pipeline: reads the iMCU rows of every component, in order, into the decoded planes, then
 * the end of the file. Threaded: on a helper thread (under the caller's budget) that stays at most `lead` iMCU rows
 * ahead of the lowest row the resize may still read (advance()), except while the resize waits for a row (so a
 * short lead only slows it, never stops it); the resize waits for the rows it asks for. Sequential: the resize reads
 * the iMCU rows it needs itself. Rows the resize will not read again are given back to the system as it advances.
 */
class PlaneFeed {
 public:
  PlaneFeed(JpegRowReader* reader, OwnedBytes* planes, const uint32_t* stride, const uint32_t* per, uint32_t reads,
            uint32_t lead)
      : reader_(reader), planes_(planes), stride_(stride), per_(per), reads_(reads), lead_(lead) {
    for (int k = 0; k < 3; k++) rows_[k].resize(per[k]);
  }
  ~PlaneFeed() { stop_and_join(); }

  /** Starts the decoder thread when this build and machine run parts concurrently; else stays sequential. */
  void start() {
#if PANTO_PLANAR_THREADS
    if (!parts_run_concurrently()) return;
    Budget* budget = current_budget();
    try {
      thread_ = std::thread([this, budget] {
        BudgetScope scope(budget);
        decode_all();
      });
      threaded_ = true;
    } catch (...) {  // std::system_error (no thread available) or std::bad_alloc (its state): run sequentially
      threaded_ = false;
    }
#endif
  }

  /** Row y of plane k once decoded (throws StopResize when the decoder stopped before it). */
  const uint8_t* row(int k, uint32_t y) {
    const uint32_t need = y / per_[k] + 1;  // iMCU rows read before row y exists
    if (done_.load(std::memory_order_acquire) < need) {
      if (threaded_) {
#if PANTO_PLANAR_THREADS
        std::unique_lock<std::mutex> lock(m_);
        if (done_.load(std::memory_order_acquire) < need && !stopped_) {
          // Sleep until a batch of rows is ready (the decoder ignores its lead meanwhile), or the decoder stops.
          want_ = std::min(reads_, need + kWakeReads);
          consumer_waiting_ = true;
          if (producer_waiting_) cv_producer_.notify_one();
          while (done_.load(std::memory_order_acquire) < need && !stopped_) cv_consumer_.wait(lock);
          consumer_waiting_ = false;
        }
        if (done_.load(std::memory_order_acquire) < need) throw StopResize{};
#endif
      } else {
        while (done_.load(std::memory_order_relaxed) < need) {
          if (stopped_ || !read_one()) {
            stopped_ = true;
            throw StopResize{};
          }
        }
      }
    }
    return planes_[k].data + size_t(y) * stride_[k];
  }

  /** The resize will read no row below `dead[k]` of plane k again (non-decreasing): the decoder may run further
   *  ahead, and the rows' pages go back to the system. */
  void advance(const uint32_t* dead) {
    uint32_t floor = reads_;
    for (int k = 0; k < 3; k++) {
      floor = std::min(floor, dead[k] / per_[k]);
      const size_t from = size_t(released_[k]) * stride_[k], to = size_t(dead[k]) * stride_[k];
      if (to >= from + kReleaseBytes) {
        release_pages(planes_[k].data + from, planes_[k].data + to);
        released_[k] = dead[k];
      }
    }
#if PANTO_PLANAR_THREADS
    if (threaded_) {
      std::lock_guard<std::mutex> lock(m_);
      floor_ = floor;
      if (producer_waiting_ && floor_ >= producer_wake_floor_) cv_producer_.notify_one();
    }
#endif
  }

  /** After the resize: reads the iMCU rows it did not ask for and the end of the file (the checks of a whole decode),
   *  or, when the resize stopped early, stops the decoder. Returns the decoder's status; rethrows its exception. */
  Status finish(bool resize_completed) {
    if (!resize_completed) {
      stop_and_join();
    } else if (threaded_) {
#if PANTO_PLANAR_THREADS
      {
        std::lock_guard<std::mutex> lock(m_);
        floor_ = reads_;  // nothing more to read: the decoder runs to the end of the file
        if (producer_waiting_) cv_producer_.notify_one();
      }
      if (thread_.joinable()) thread_.join();
#endif
    } else {
      while (!stopped_ && done_.load(std::memory_order_relaxed) < reads_)
        if (!read_one()) stopped_ = true;
      if (!stopped_) status_ = reader_->finish();
    }
    if (exception_) std::rethrow_exception(exception_);
    return status_;
  }

 private:
  /** Reads the next iMCU row into the planes; false when decoding stopped (status_ says why). */
  bool read_one() {
    const uint32_t r = done_.load(std::memory_order_relaxed);
    for (int k = 0; k < 3; k++)
      for (uint32_t i = 0; i < per_[k]; i++)
        rows_[k][i] = planes_[k].data + (size_t(r) * per_[k] + i) * stride_[k];
    uint8_t* const* planes[3] = {rows_[0].data(), rows_[1].data(), rows_[2].data()};
    status_ = reader_->read_planes(planes);
    if (!status_.ok()) return false;
    done_.store(r + 1, std::memory_order_release);
    return true;
  }

#if PANTO_PLANAR_THREADS
  /** The decoder thread: every iMCU row, then the end of the file; stops early on an error or when told to. */
  void decode_all() {
    try {
      for (;;) {
        const uint32_t done = done_.load(std::memory_order_relaxed);
        {
          std::unique_lock<std::mutex> lock(m_);
          if (!stop_requested_ && done < reads_ && done >= floor_ + lead_ && !consumer_waiting_) {
            // Far enough ahead: sleep until the resize has moved on by a batch of rows (or waits for one).
            producer_wake_floor_ = done + kWakeReads - lead_;
            producer_waiting_ = true;
            while (!stop_requested_ && done >= floor_ + lead_ && !consumer_waiting_) cv_producer_.wait(lock);
            producer_waiting_ = false;
          }
          if (stop_requested_) return;
        }
        if (done == reads_) break;
        const bool ok = read_one();
        std::lock_guard<std::mutex> lock(m_);
        if (!ok) stopped_ = true;
        if (consumer_waiting_ && (!ok || done + 1 >= want_)) cv_consumer_.notify_one();
        if (!ok) return;
      }
      status_ = reader_->finish();  // (read by the caller after join)
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      exception_ = std::current_exception();
      stopped_ = true;
      if (consumer_waiting_) cv_consumer_.notify_one();
    }
  }
#endif

  void stop_and_join() {
#if PANTO_PLANAR_THREADS
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(m_);
        stop_requested_ = true;
        cv_producer_.notify_one();
      }
      thread_.join();
    }
#endif
  }

  JpegRowReader* reader_;
  OwnedBytes* planes_;
  const uint32_t *stride_, *per_;
  const uint32_t reads_, lead_;
  std::vector<uint8_t*> rows_[3];  // one iMCU row's row pointers (the decoder's side only)
  uint32_t released_[3] = {};      // rows of each plane given back (the resize's side only)
  bool threaded_ = false;
  // iMCU rows read (written by the decoder's side, release; the planes' rows below done_ * per are final).
  std::atomic<uint32_t> done_{0};
  // Under m_ when threaded. The decoder sets status_ before it sets stopped_ under the lock or before it ends; the
  // caller reads status_ after join (or, sequentially, on its own thread).
  bool stopped_ = false, stop_requested_ = false;
  bool consumer_waiting_ = false, producer_waiting_ = false;
  uint32_t want_ = 0;                // a waiting resize is woken once done_ reaches this (or the decoder stops)
  uint32_t floor_ = 0;               // iMCU rows below the lowest row the resize may still read
  uint32_t producer_wake_floor_ = 0;  // a waiting decoder is woken once floor_ reaches this
  Status status_;
  std::exception_ptr exception_;
#if PANTO_PLANAR_THREADS
  std::mutex m_;
  std::condition_variable cv_producer_, cv_consumer_;
  std::thread thread_;
#endif
};

/** One plane's input for stbir: its rows from the feed, and the lowest row the running split has read. */
struct PlaneInput {
  PlaneFeed* feed;
  int k;
  uint32_t lowest;
};

const void* input_cb(void*, const void*, int, int x, int y, void* ctx) {
  PlaneInput* in = static_cast<PlaneInput*>(ctx);
  in->lowest = std::min(in->lowest, uint32_t(y));
  return in->feed->row(in->k, uint32_t(y)) + x;
}

/** stbir's samplers, freed on destruction. */
struct Samplers {
  STBIR_RESIZE* r = nullptr;
  ~Samplers() {
    if (r) stbir_free_samplers(r);
  }
};

/** One plane's output, filled strip by strip: rows [0, done) are resized; rows [0, padded) also carry the padding
 *  the encoder's raw input wants (the last column repeated to the stride; past the last row, the last row repeated
 *  down to the padded height). */
struct OutPlane {
  OwnedBytes px;
  uint32_t w, h, stride, rows;
  uint32_t done = 0, padded = 0, released = 0;

  void pad_to(uint32_t y) {
    for (; padded < y; padded++) {
      uint8_t* row = px.data + size_t(padded) * stride;
      std::memset(row + w, row[w - 1], stride - w);
    }
    if (y != h) return;
    const uint8_t* last = px.data + size_t(h - 1) * stride;
    for (uint32_t r = h; r < rows; r++) std::memcpy(px.data + size_t(r) * stride, last, stride);
  }
  /** Rows ready for the encoder (padding included once the plane is complete). */
  uint32_t ready() const { return done == h ? rows : done; }
  /** The encoder has taken rows [0, y): their pages go back to the system, a batch at a time. */
  void encoded(uint32_t y) {
    if (size_t(y - released) * stride < kReleaseBytes) return;
    release_pages(px.data + size_t(released) * stride, px.data + size_t(y) * stride);
    released = y;
  }
};

}  // namespace

bool set_jpeg_planar(bool allowed) { return g_planar.exchange(allowed); }
bool set_jpeg_planar_strips(bool allowed) { return g_strips.exchange(allowed); }

bool jpeg_planar_applies(const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh) {
  return g_planar.load(std::memory_order_relaxed) && info.orientation == 1 && sw >= 16 && sh >= 16 &&
         jpeg_stream_resizes(info, eighths, sw, sh);
}

uint64_t jpeg_planar_bytes(const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh) {
  // Decoded: three planes of at most the scaled size each, padded to whole iMCU rows and blocks (a chroma plane is
  // never larger than luma's: libjpeg scales subsampled chroma up through its IDCT to at most the luma size).
  // Resized: 1.5 bytes per output pixel, padded to 16. Plus the row pointers. Plus stbir's buffers for the three
  // planes, one set per strip: a decode row and a ring of resampled rows (floats, at most a filter's height of them:
  // <= 33 rows in its gather mode, a few in its scatter mode) of the wider side, counted as 40 rows.
  const uint64_t pw = uint64_t(jpeg_scaled_dim(info.width, eighths)) + 64;
  const uint64_t ph = uint64_t(jpeg_scaled_dim(info.height, eighths)) + 64;
  const uint64_t ow = uint64_t(sw) + 16, oh = uint64_t(sh) + 16;
  const uint64_t stbir = uint64_t(strips_for(sh)) * 3 * (std::max(pw, ow) + 64) * sizeof(float) * 40;
  return 3 * pw * ph + ow * oh * 2 + (ph + oh) * 3 * sizeof(void*) + stbir;
}

Status jpeg_planar_encode(const uint8_t* d, size_t len, const MediaInfo& info, int eighths, uint32_t sw, uint32_t sh,
                          int quality, OwnedBytes* out) {
  JpegRowReader reader;
  Status s = reader.open_planar(d, len, info, eighths);
  if (!s.ok()) return s;
  const uint32_t reads = reader.reads();
  OwnedBytes in[3];
  uint32_t stride[3], per[3], pw[3], ph[3];  // (the reader's geometry is gone after finish())
  for (int k = 0; k < 3; k++) {
    stride[k] = reader.plane_stride(k);
    per[k] = reader.plane_rows_per_read(k);
    pw[k] = reader.plane_width(k);
    ph[k] = reader.plane_height(k);
    if (stride[k] == 0 || per[k] == 0 || pw[k] == 0 || ph[k] == 0 || pw[k] > stride[k] || ph[k] > per[k] * reads)
      return Status::Err("ERR_CORRUPT_MEDIA", "image/jpeg is corrupt: empty component", MediaType::Jpeg);
    if (!alloc_owned(size_t(stride[k]) * per[k] * reads, &in[k])) return oom();
  }

  // Output planes as the encoder's raw input wants them: 4:2:0, rows padded to whole 16x16 MCUs.
  OutPlane o[3];
  for (int k = 0; k < 3; k++) {
    o[k].w = k == 0 ? sw : (sw + 1) / 2;
    o[k].h = k == 0 ? sh : (sh + 1) / 2;
    o[k].stride = (sw + 15) / 16 * (k == 0 ? 16 : 8);
    o[k].rows = (sh + 15) / 16 * (k == 0 ? 16 : 8);
    if (!alloc_owned(size_t(o[k].stride) * o[k].rows, &o[k].px)) return oom();
  }

  // Each plane's resize (resize_pixels' filter and edges) in the same number of splits: strip j of the output is
  // split j of every plane, run as soon as the decoder has given the rows it reads. A split's output rows do not
  // depend on the number of splits (each row sums the same input rows in the same order), so neither do the bytes.
  // The decoder's lead: two strips of luma input rows and the filter's reach (Mitchell: 2 input rows per unit of
  // scale each side), in iMCU rows, plus a wake-up batch. Only memory and overlap depend on it, never the bytes.
  const double scale = double(ph[0]) / double(o[0].h);
  const uint32_t lead =
      uint32_t((2 * (kStripRows + 8) * scale + 8 * std::max(1.0, scale) + 16) / per[0]) + kWakeReads + 2;
  PlaneFeed feed(&reader, in, stride, per, reads, lead);
  const uint32_t strips = strips_for(sh);
  STBIR_RESIZE r[3];
  Samplers samplers[3];
  PlaneInput inputs[3];
  for (int k = 0; k < 3; k++) {
    inputs[k] = {&feed, k, UINT32_MAX};
    stbir_resize_init(&r[k], in[k].data, int(pw[k]), int(ph[k]), int(stride[k]), o[k].px.data, int(o[k].w),
                      int(o[k].h), int(o[k].stride), STBIR_1CHANNEL, STBIR_TYPE_UINT8);
    stbir_set_edgemodes(&r[k], STBIR_EDGE_CLAMP, STBIR_EDGE_CLAMP);
    stbir_set_filters(&r[k], STBIR_FILTER_MITCHELL, STBIR_FILTER_MITCHELL);
    stbir_set_user_data(&r[k], &inputs[k]);
    stbir_set_pixel_callbacks(&r[k], input_cb, nullptr);
    const int got = stbir_build_samplers_with_splits(&r[k], int(strips));
    if (got <= 0) return oom();
    samplers[k].r = &r[k];
    // (strips <= sh / 64 leaves every plane >= 4 rows per split: stbir keeps the count)
    if (uint32_t(got) != strips)
      return Status::Err("ERR_INTERNAL", "planar resize split count differs between planes", MediaType::Jpeg);
  }

  JpegRowEncoder enc;
  s = enc.begin_planar(sw, sh, quality);
  if (!s.ok()) return s;
  feed.start();
  bool completed = false, resized = true, aborted = false;
  uint32_t left[3] = {o[0].h, o[1].h, o[2].h};  // stbir's split rows: left / (splits - j) each
  uint32_t dead[3] = {};                        // rows of each plane no later split reads
  uint32_t groups = 0;                          // iMCU rows given to the encoder
  const uint32_t total_groups = o[0].rows / 16;
  const uint8_t* y16[16];
  const uint8_t* cb8[8];
  const uint8_t* cr8[8];
  try {
    for (uint32_t j = 0; j < strips && resized; j++) {
      if (should_abort()) {
        aborted = true;
        break;
      }
      for (int k = 0; k < 3 && resized; k++) {
        inputs[k].lowest = UINT32_MAX;
        resized = stbir_resize_extended_split(&r[k], int(j), 1) != 0;
        const uint32_t rows = left[k] / (strips - j);
        left[k] -= rows;
        o[k].done += rows;
        o[k].pad_to(o[k].done);
        // (a later split's rows start no higher: stbir's filter windows move down with the output row)
        if (inputs[k].lowest != UINT32_MAX) dead[k] = std::max(dead[k], inputs[k].lowest);
        feed.advance(dead);
      }
      for (; resized && groups < total_groups && (groups + 1) * 16 <= o[0].ready() &&
             (groups + 1) * 8 <= o[1].ready() && (groups + 1) * 8 <= o[2].ready();
           groups++) {
        for (uint32_t i = 0; i < 16; i++) y16[i] = o[0].px.data + size_t(groups * 16 + i) * o[0].stride;
        for (uint32_t i = 0; i < 8; i++) {
          cb8[i] = o[1].px.data + size_t(groups * 8 + i) * o[1].stride;
          cr8[i] = o[2].px.data + size_t(groups * 8 + i) * o[2].stride;
        }
        enc.put_planes(y16, cb8, cr8);
      }
      o[0].encoded(std::min(groups * 16, o[0].h));
      o[1].encoded(std::min(groups * 8, o[1].h));
      o[2].encoded(std::min(groups * 8, o[2].h));
    }
    completed = resized && !aborted;
  } catch (const StopResize&) {
    completed = false;
  }
  s = feed.finish(completed);
  if (!s.ok()) return s;
  if (aborted) enc.abort();
  else if (!resized) return oom();
  else if (completed && groups != total_groups)
    return Status::Err("ERR_INTERNAL", "planar resize left rows unencoded", MediaType::Jpeg);
  return enc.finish(out);
}

}  // namespace panto
