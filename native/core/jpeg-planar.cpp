// JPEG -> JPEG in planar YCbCr (see jpeg-planar.h).
#include "jpeg-planar.h"

#include <stb/stb_image_resize2.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
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

#if PANTO_THREADS
#include <thread>
#endif

namespace panto {
namespace {

std::atomic<bool> g_planar{[] {
  const char* v = std::getenv("PANTO_JPEG_PLANAR");
  return !(v && v[0] == '0' && v[1] == '\0');
}()};
std::atomic<bool> g_strips{true};

/** Luma output rows per strip (chroma: half as many). Fewer, taller strips: fewer stbir buffers (one set per strip)
 *  and wake-ups; more: a larger share of the work overlapped with the decode, and a smaller ring. */
constexpr uint32_t kStripRows = 128;
/** iMCU rows a waiting side lets the other side advance before it is woken: one wake-up per batch, not per row. */
constexpr uint32_t kWakeReads = 16;

Status oom() { return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing", MediaType::Jpeg); }

uint32_t strips_for(uint32_t sh) {
  return g_strips.load(std::memory_order_relaxed) ? std::max(1u, sh / kStripRows) : 1;
}

/** Rows of a plane of `ph` rows (resized to `oh`, the image's other planes at most `other` input rows per output row
 *  of theirs; `reads` iMCU rows of `per` rows) that the ring holds: two strips of input rows, the Mitchell filter's
 *  reach on both sides (2 output rows each way, in input rows; more for stbir's rounding), and two iMCU rows being
 *  written. Enough for every row the resize reads in a strip and every row the decoder must write to give it
 *  (checked as it runs: ERR_INTERNAL otherwise). */
uint32_t ring_rows(uint32_t ph, uint32_t oh, uint32_t strips, uint32_t per, double other, uint32_t reads) {
  const double scale = std::max(1.0, double(ph) / double(oh));
  const double reach = 2 * scale + 3 + (2 * other + 3) * scale;
  const uint64_t rows = uint64_t(2.0 * ph / strips + reach) + 2 * uint64_t(per) + 16;
  return uint32_t(std::min(rows, uint64_t(reads) * per));  // never more than every row the decoder writes
}

/** Thrown from stbir's input callback to leave the resize when the decoder stopped early, or the ring cannot hold
 *  a row (stbir allocates nothing while it runs, so unwinding through it leaks nothing). */
struct StopResize {};

/**
 * The decoder's side of the pipeline: reads the iMCU rows of every component, in order, into a ring of rows per
 * plane, then the end of the file. Row y of plane k lives in slot y % cap[k]; the decoder writes an iMCU row only when
 * no row the resize may still read is in the slots it overwrites (rows below dead[k], advance(), are free). Threaded:
 * the decoder runs on a helper thread (under the caller's budget) and waits for room; the resize waits for the rows it
 * asks for. Sequential: the resize reads the iMCU rows it needs itself.
 */
class PlaneFeed {
 public:
  PlaneFeed(JpegRowReader* reader, OwnedBytes* ring, const uint32_t* stride, const uint32_t* per, const uint32_t* cap,
            uint32_t reads)
      : reader_(reader), ring_(ring), stride_(stride), per_(per), cap_(cap), reads_(reads) {
    for (int k = 0; k < 3; k++) rows_[k].resize(per[k]);
  }
  ~PlaneFeed() { stop_and_join(); }

  /** Starts the decoder thread when this build and machine run parts concurrently; else stays sequential. */
  void start() {
#if PANTO_THREADS
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

  /** Row y of plane k once decoded (throws StopResize when the decoder stopped before it, or when the ring cannot
   *  hold it next to the rows still needed: ERR_INTERNAL). */
  const uint8_t* row(int k, uint32_t y) {
    const uint32_t need = y / per_[k] + 1;  // iMCU rows read before row y exists
    if (y < dead_[k]) internal_fail();       // (a row already given back; never, as stbir reads downwards)
    if (done_.load(std::memory_order_acquire) < need) {
      if (!fits(need)) internal_fail();
      if (threaded_) {
#if PANTO_THREADS
        std::unique_lock<std::mutex> lock(m_);
        if (done_.load(std::memory_order_acquire) < need && !stopped_) {
          // Sleep until a batch of rows is ready (or as many as the ring takes), or the decoder stops.
          want_ = std::min(reads_, need + kWakeReads);
          while (want_ > need && !fits(want_)) want_--;
          consumer_waiting_ = true;
          if (producer_waiting_) cv_producer_.notify_one();  // (rows [0, need) fit: the decoder can go on)
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
    return ring_[k].data + size_t(y % cap_[k]) * stride_[k];
  }

  /** The resize reads no row below `dead[k]` of plane k again (non-decreasing): their slots are free. */
  void advance(const uint32_t* dead) {
#if PANTO_THREADS
    if (threaded_) {
      std::lock_guard<std::mutex> lock(m_);
      for (int k = 0; k < 3; k++) dead_[k] = dead[k];
      if (producer_waiting_ && fits(producer_wake_)) cv_producer_.notify_one();
      return;
    }
#endif
    for (int k = 0; k < 3; k++) dead_[k] = dead[k];
  }

  /** After the resize: reads the iMCU rows it did not ask for and the end of the file (the checks of a whole decode),
   *  or, when the resize stopped early, stops the decoder. Returns the decoder's status (ERR_INTERNAL when the ring
   *  was too small); rethrows its exception. */
  Status finish(bool resize_completed) {
    if (!resize_completed) {
      stop_and_join();
    } else {
      const uint32_t all[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};  // nothing more to read: every slot is free
      advance(all);
#if PANTO_THREADS
      if (threaded_ && thread_.joinable()) thread_.join();
#endif
      if (!threaded_) {
        while (!stopped_ && done_.load(std::memory_order_relaxed) < reads_)
          if (!read_one()) stopped_ = true;
        if (!stopped_) status_ = reader_->finish();
      }
    }
    if (exception_) std::rethrow_exception(exception_);
    if (internal_) return Status::Err("ERR_INTERNAL", "planar resize outran its ring of decoded rows", MediaType::Jpeg);
    return status_;
  }

 private:
  /** Whether iMCU rows [0, n) can all be in the ring with every row the resize may still read. */
  bool fits(uint32_t n) const {
    for (int k = 0; k < 3; k++)
      if (dead_[k] != UINT32_MAX && uint64_t(n) * per_[k] > uint64_t(dead_[k]) + cap_[k]) return false;
    return true;
  }

  [[noreturn]] void internal_fail() {
    internal_ = true;
    throw StopResize{};
  }

  /** Reads the next iMCU row into the ring; false when decoding stopped (status_ says why). */
  bool read_one() {
    const uint32_t r = done_.load(std::memory_order_relaxed);
    for (int k = 0; k < 3; k++)
      for (uint32_t i = 0; i < per_[k]; i++)
        rows_[k][i] = ring_[k].data + size_t((r * per_[k] + i) % cap_[k]) * stride_[k];
    uint8_t* const* planes[3] = {rows_[0].data(), rows_[1].data(), rows_[2].data()};
    status_ = reader_->read_planes(planes);
    if (!status_.ok()) return false;
    done_.store(r + 1, std::memory_order_release);
    return true;
  }

#if PANTO_THREADS
  /** The decoder thread: every iMCU row, then the end of the file; stops early on an error or when told to. */
  void decode_all() {
    try {
      for (;;) {
        const uint32_t done = done_.load(std::memory_order_relaxed);
        {
          std::unique_lock<std::mutex> lock(m_);
          if (!stop_requested_ && done < reads_ && !fits(done + 1)) {
            // Ring full: sleep until the resize has freed a batch of rows' slots.
            producer_wake_ = std::min(reads_, done + kWakeReads);
            producer_waiting_ = true;
            while (!stop_requested_ && !fits(done + 1)) cv_producer_.wait(lock);
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
#if PANTO_THREADS
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
  OwnedBytes* ring_;
  const uint32_t *stride_, *per_, *cap_;
  const uint32_t reads_;
  std::vector<uint8_t*> rows_[3];  // one iMCU row's row pointers (the decoder's side only)
  bool threaded_ = false, internal_ = false;
  // iMCU rows read (written by the decoder's side, release: the rows below done_ * per are in the ring).
  std::atomic<uint32_t> done_{0};
  // Under m_ when threaded. The decoder sets status_ before it sets stopped_ under the lock or before it ends; the
  // caller reads status_ after join (or, sequentially, on its own thread).
  uint32_t dead_[3] = {};  // rows of each plane below the lowest the resize may still read
  bool stopped_ = false, stop_requested_ = false;
  bool consumer_waiting_ = false, producer_waiting_ = false;
  uint32_t want_ = 0;           // a waiting resize is woken once done_ reaches this (or the decoder stops)
  uint32_t producer_wake_ = 0;  // a waiting decoder is woken once iMCU rows [0, this) fit
  Status status_;
  std::exception_ptr exception_;
#if PANTO_THREADS
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
  ~Samplers() { release(); }
  void release() {
    if (r) stbir_free_samplers(r);
    r = nullptr;
  }
};

/** One plane's output, filled strip by strip into a ring: image row y is at row y - base of it; rows [base, done)
 *  are resized and not yet all in the encoder; rows below `padded` also carry the padding the encoder's raw input
 *  wants (the last column repeated to the stride; past the last row, the last row repeated down to `rows`). */
struct OutPlane {
  OwnedBytes px;
  uint32_t w, h, stride, rows, cap;
  uint32_t base = 0, done = 0, padded = 0;

  uint8_t* row(uint32_t y) const { return px.data + size_t(y - base) * stride; }
  /** Moves rows [from, done) to the ring's top (rows below `from` are in the encoder); false when rows [from, to)
   *  would not fit. Then image row y is at px + (y - base) * stride, as stbir writes it (output_base()). */
  bool keep_from(uint32_t from, uint32_t to) {
    if (to - from > cap) return false;
    if (from > base) {
      std::memmove(px.data, row(from), size_t(done - from) * stride);
      base = from;
    }
    return true;
  }
  /** The output pointer stbir adds y * stride to (outside the ring by base rows: never dereferenced there). */
  void* output_base() const {
    return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(px.data) - uintptr_t(base) * stride);
  }

  void pad_to(uint32_t y) {
    for (; padded < y; padded++) {
      uint8_t* r = row(padded);
      std::memset(r + w, r[w - 1], stride - w);
    }
    if (y != h) return;
    const uint8_t* last = row(h - 1);
    for (uint32_t r = h; r < rows; r++) std::memcpy(row(r), last, stride);
  }
  /** Rows ready for the encoder (padding included once the plane is complete). */
  uint32_t ready() const { return done == h ? rows : done; }
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
  // never larger than luma's: libjpeg scales subsampled chroma up through its IDCT to at most the luma size), as an
  // upper bound of their rings. Resized: 1.5 bytes per output pixel, padded to 16. Plus the row pointers. Plus
  // stbir's buffers for the three planes, one set per strip: a decode row and a ring of resampled rows (floats, at most
  // a filter's height of them: <= 33 rows in its gather mode, a few in its scatter mode) of the wider side, counted
  // as 40 rows.
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
  uint32_t stride[3], per[3], pw[3], ph[3];  // (the reader's geometry is gone after finish())
  for (int k = 0; k < 3; k++) {
    stride[k] = reader.plane_stride(k);
    per[k] = reader.plane_rows_per_read(k);
    pw[k] = reader.plane_width(k);
    ph[k] = reader.plane_height(k);
    if (stride[k] == 0 || per[k] == 0 || pw[k] == 0 || ph[k] == 0 || pw[k] > stride[k] || ph[k] > per[k] * reads)
      return Status::Err("ERR_CORRUPT_MEDIA", "image/jpeg is corrupt: empty component", MediaType::Jpeg);
  }

  // Output planes as the encoder's raw input wants them: 4:2:0, rows padded to whole 16x16 MCUs.
  OutPlane o[3];
  for (int k = 0; k < 3; k++) {
    o[k].w = k == 0 ? sw : (sw + 1) / 2;
    o[k].h = k == 0 ? sh : (sh + 1) / 2;
    o[k].stride = (sw + 15) / 16 * (k == 0 ? 16 : 8);
    o[k].rows = (sh + 15) / 16 * (k == 0 ? 16 : 8);
  }
  const uint32_t strips = strips_for(sh);
  for (int k = 0; k < 3; k++) {
    // A strip's rows (stbir's splits differ by at most one row), the rows of an iMCU row or two not yet encoded
    // (a plane may be a row or so ahead of the others), and the padding rows.
    o[k].cap = std::min(o[k].rows, (o[k].h + strips - 1) / strips + 48);
    if (!alloc_owned(size_t(o[k].stride) * o[k].cap, &o[k].px)) return oom();
  }

  // The decoded rows' rings (see ring_rows).
  double scale_max = 1;
  for (int k = 0; k < 3; k++) scale_max = std::max(scale_max, double(ph[k]) / double(o[k].h));
  uint32_t cap[3];
  OwnedBytes ring[3];
  for (int k = 0; k < 3; k++) {
    cap[k] = ring_rows(ph[k], o[k].h, strips, per[k], scale_max, reads);
    if (!alloc_owned(size_t(stride[k]) * cap[k], &ring[k])) return oom();
  }

  // Each plane's resize (resize_pixels' filter and edges) in the same number of splits: strip j of the output is
  // split j of every plane, run as soon as the decoder has given the rows it reads. A split's output rows do not
  // depend on the number of splits (each row sums the same input rows in the same order), so neither do the bytes.
  PlaneFeed feed(&reader, ring, stride, per, cap, reads);
  STBIR_RESIZE r[3];
  Samplers samplers[3];
  PlaneInput inputs[3];
  for (int k = 0; k < 3; k++) {
    inputs[k] = {&feed, k, UINT32_MAX};
    stbir_resize_init(&r[k], ring[k].data, int(pw[k]), int(ph[k]), int(stride[k]), o[k].output_base(), int(o[k].w),
                      int(o[k].h), int(o[k].stride), STBIR_1CHANNEL, STBIR_TYPE_UINT8);
    stbir_set_edgemodes(&r[k], STBIR_EDGE_CLAMP, STBIR_EDGE_CLAMP);
    stbir_set_filters(&r[k], STBIR_FILTER_MITCHELL, STBIR_FILTER_MITCHELL);
    stbir_set_user_data(&r[k], &inputs[k]);
    stbir_set_pixel_callbacks(&r[k], input_cb, nullptr);
    const int got = stbir_build_samplers_with_splits(&r[k], int(strips));
    if (got <= 0) return oom();
    samplers[k].r = &r[k];
    // (strips <= sh / 128 leaves every plane >= 4 rows per split: stbir keeps the count)
    if (uint32_t(got) != strips)
      return Status::Err("ERR_INTERNAL", "planar resize split count differs between planes", MediaType::Jpeg);
  }

  JpegRowEncoder enc;
  s = enc.begin_planar(sw, sh, quality);
  if (!s.ok()) return s;
  feed.start();
  bool completed = false, resized = true, aborted = false, internal = false;
  uint32_t left[3] = {o[0].h, o[1].h, o[2].h};  // stbir's split rows: left / (splits - j) each
  uint32_t dead[3] = {};                        // rows of each plane no later split reads
  uint32_t groups = 0;                          // iMCU rows given to the encoder
  const uint32_t total_groups = o[0].rows / 16;
  const uint8_t* y16[16];
  const uint8_t* cb8[8];
  const uint8_t* cr8[8];
  try {
    for (uint32_t j = 0; j < strips && resized && !internal; j++) {
      if (should_abort()) {
        aborted = true;
        break;
      }
      for (int k = 0; k < 3 && resized; k++) {
        const uint32_t rows = left[k] / (strips - j);
        left[k] -= rows;
        const uint32_t unit = k == 0 ? 16 : 8;
        if (!o[k].keep_from(groups * unit, left[k] == 0 ? o[k].rows : o[k].done + rows)) {
          internal = true;
          break;
        }
        stbir_set_buffer_ptrs(&r[k], ring[k].data, int(stride[k]), o[k].output_base(), int(o[k].stride));
        inputs[k].lowest = UINT32_MAX;
        resized = stbir_resize_extended_split(&r[k], int(j), 1) != 0;
        o[k].done += rows;
        o[k].pad_to(o[k].done);
        // (a later split's rows start no higher: stbir's filter windows move down with the output row)
        if (inputs[k].lowest != UINT32_MAX) dead[k] = std::max(dead[k], inputs[k].lowest);
        feed.advance(dead);
      }
      for (; resized && groups < total_groups && (groups + 1) * 16 <= o[0].ready() &&
             (groups + 1) * 8 <= o[1].ready() && (groups + 1) * 8 <= o[2].ready();
           groups++) {
        for (uint32_t i = 0; i < 16; i++) y16[i] = o[0].row(groups * 16 + i);
        for (uint32_t i = 0; i < 8; i++) {
          cb8[i] = o[1].row(groups * 8 + i);
          cr8[i] = o[2].row(groups * 8 + i);
        }
        enc.put_planes(y16, cb8, cr8);
      }
    }
    completed = resized && !aborted && !internal;
  } catch (const StopResize&) {
    completed = false;
  }
  s = feed.finish(completed);
  if (!s.ok()) return s;
  if (aborted) enc.abort();
  else if (!resized) return oom();
  else if (internal || groups != total_groups)
    return Status::Err("ERR_INTERNAL", "planar resize left rows unencoded", MediaType::Jpeg);
  // Every row is in the encoder: the rings, planes and stbir's buffers go before its entropy pass and the output.
  for (int k = 0; k < 3; k++) {
    ring[k].reset();
    o[k].px.reset();
    samplers[k].release();
  }
  return enc.finish(out);
}

}  // namespace panto
