// Streaming decode -> resize over a RowProducer (see row-resize-stream.h).
#include "row-resize-stream.h"

#include <stb/stb_image_resize2.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>

#include "budget.h"
#include "parallel.h"

#if PANTO_THREADS
#include <thread>
#endif

namespace panto {
namespace {

/** Rows a waiting side lets the other side advance before it is woken: one futex wake-up per batch, not per row
 *  (on a virtualised 2-vCPU host a wake-up per row cost more CPU than unfiltering the row). */
constexpr uint32_t kWakeBatch = 16;

/** Thrown from stbir's input callback to leave the resize when the decoder stopped early (stbir allocates nothing
 *  while it runs, so unwinding through it leaks nothing; its buffers go with stbir_free_samplers). */
struct StopResize {};

/**
 * The ring between the decoder (producer) and the resize (consumer). Rows are produced in order into slot
 * (row % cap); the consumer asks for rows in non-decreasing order, and asking for row y releases every row below y.
 * Threaded: the producer runs on a helper thread and waits while the ring is full. Sequential: the consumer produces
 * the rows it asks for itself.
 */
class RowRing {
 public:
  RowRing(RowProducer* producer, uint32_t rows, uint32_t cap, size_t row_bytes, MediaType type)
      : producer_(producer), rows_(rows), cap_(cap), row_bytes_(row_bytes), type_(type) {}

  ~RowRing() { stop_and_join(); }

  /** A valid address for stbir's unused pixel pointers (the ring's start). */
  uint8_t* any() { return ring_.data; }

  bool alloc() {
    return alloc_owned(size_t(cap_) * row_bytes_, &ring_);
  }

  /** Starts the producer thread when this build and machine run parts concurrently; false = sequential. */
  void start() {
#if PANTO_THREADS
    if (!parts_run_concurrently()) return;
    Budget* budget = current_budget();
    try {
      thread_ = std::thread([this, budget] {
        BudgetScope scope(budget);
        produce_all();
      });
      threaded_ = true;
    } catch (...) {  // std::system_error (no thread available) or std::bad_alloc (its state): run sequentially
      threaded_ = false;
    }
#endif
  }

  /** Row y for the resize (throws StopResize when the decoder stopped before it). */
  const uint8_t* get(uint32_t y) {
    if (y == last_y_ && last_) return last_;
    if (y < floor_seen_) {  // stbir asks in non-decreasing order; anything else would read a recycled slot
      internal_ = true;
      throw StopResize{};
    }
    floor_seen_ = y;
    if (threaded_) {
#if PANTO_THREADS
      std::unique_lock<std::mutex> lock(m_);
      floor_ = y;
      if (producer_waiting_ && floor_ >= producer_wake_floor_) cv_producer_.notify_one();
      if (produced_ <= y && !stopped_) {
        // Sleep until a batch of rows is ready (or the decoder ends), not one wake-up per row.
        // (At most half the ring: the decoder, blocked on a full ring, could otherwise never reach it.)
        consumer_wake_rows_ = std::min(rows_, y + 1 + std::min(kWakeBatch, cap_ / 2));
        consumer_waiting_ = true;
        while (produced_ <= y && !stopped_) cv_consumer_.wait(lock);
        consumer_waiting_ = false;
      }
      if (produced_ <= y) throw StopResize{};
#endif
    } else {
      while (produced_ <= y) {
        if (stopped_ || !produce_one(slot(produced_))) {
          stopped_ = true;
          throw StopResize{};
        }
        produced_++;
      }
    }
    last_y_ = y;
    last_ = slot(y);
    return last_;
  }

  /**
   * After the resize: decodes the rows it did not ask for and checks the end of the stream (the same checks as the
   * whole-image decode), or, after a stop, ends the producer. Returns the producer's status.
   */
  Status finish(bool resize_completed) {
    if (!resize_completed) {
      stop_and_join();
    } else if (threaded_) {
#if PANTO_THREADS
      {
        std::unique_lock<std::mutex> lock(m_);
        floor_ = rows_;  // every row released: the producer runs to the end of the stream
        if (producer_waiting_) cv_producer_.notify_one();
        consumer_wake_rows_ = rows_;
        consumer_waiting_ = true;
        while (!done_ && !stopped_) cv_consumer_.wait(lock);
        consumer_waiting_ = false;
      }
      stop_and_join();
#endif
    } else {
      while (!stopped_ && produced_ < rows_) {
        if (!produce_one(slot(produced_))) stopped_ = true;  // rows the resize did not ask for
        else produced_++;
      }
      if (!stopped_) status_ = producer_->finish();
    }
    if (exception_) std::rethrow_exception(exception_);
    if (internal_) return Status::Err("ERR_INTERNAL", "resize asked for a decoded row out of order", type_);
    return status_;
  }

 private:
  uint8_t* slot(uint32_t row) { return ring_.data + size_t(row % cap_) * row_bytes_; }

  /** Decodes the next row into `dst`; false when decoding stopped (status_ says why). */
  bool produce_one(uint8_t* dst) {
    status_ = producer_->next_row(dst);
    return status_.ok();
  }

#if PANTO_THREADS
  /** The producer thread: every row, then the stream's end; stops early on an error or when told to. */
  void produce_all() {
    try {
      for (;;) {
        uint32_t row;
        {
          std::unique_lock<std::mutex> lock(m_);
          if (!stop_requested_ && produced_ >= floor_ + cap_ && produced_ < rows_) {
            // Ring full: sleep until the resize has released a batch of rows.
            producer_wake_floor_ = produced_ + std::min(kWakeBatch, cap_ / 2) - cap_ + 1;
            producer_waiting_ = true;
            while (!stop_requested_ && produced_ >= floor_ + cap_ && produced_ < rows_) cv_producer_.wait(lock);
            producer_waiting_ = false;
          }
          if (stop_requested_) return;
          row = produced_;
        }
        if (row == rows_) {
          const Status s = producer_->finish();
          std::lock_guard<std::mutex> lock(m_);
          status_ = s;
          if (!s.ok()) stopped_ = true;
          done_ = true;  // (notified whatever the consumer's batch: nothing more comes)
          if (consumer_waiting_) cv_consumer_.notify_one();
          return;
        }
        // The slot of `row` holds no row the consumer may still ask for: produced_ - floor_ < cap_.
        const bool ok = produce_one(slot(row));
        std::lock_guard<std::mutex> lock(m_);
        if (ok) produced_++;
        else stopped_ = true;
        if (consumer_waiting_ && (!ok || produced_ >= consumer_wake_rows_)) cv_consumer_.notify_one();
        if (!ok) return;
      }
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

  RowProducer* producer_;
  const uint32_t rows_, cap_;
  const size_t row_bytes_;
  const MediaType type_;
  OwnedBytes ring_;
  bool threaded_ = false;
  // Consumer-only state.
  uint32_t last_y_ = UINT32_MAX;
  const uint8_t* last_ = nullptr;
  uint32_t floor_seen_ = 0;
  bool internal_ = false;
  // Shared state (under m_ when threaded). The producer writes status_ (and its own state) before it sets stopped_ or
  // done_ under the lock; the consumer reads them after join (or, sequentially, on its own thread).
  uint32_t produced_ = 0;
  uint32_t floor_ = 0;
  bool stopped_ = false, done_ = false, stop_requested_ = false;
  bool producer_waiting_ = false, consumer_waiting_ = false;
  uint32_t consumer_wake_rows_ = 0;  // a waiting consumer is woken once produced_ reaches this (or the decoder ends)
  uint32_t producer_wake_floor_ = 0;  // a waiting producer is woken once floor_ reaches this
  Status status_;
  std::exception_ptr exception_;
#if PANTO_THREADS
  std::mutex m_;
  std::condition_variable cv_producer_, cv_consumer_;
  std::thread thread_;
#endif
};

struct Callbacks {
  RowRing* ring;
  const ResizedRowSink* sink;
  int channels;
};

const void* input_cb(void*, const void*, int, int x, int y, void* ctx) {
  const Callbacks* c = static_cast<const Callbacks*>(ctx);
  return c->ring->get(uint32_t(y)) + size_t(x) * c->channels;
}

void output_cb(const void* px, int, int y, void* ctx) {
  const Callbacks* c = static_cast<const Callbacks*>(ctx);
  (*c->sink)(static_cast<const uint8_t*>(px), uint32_t(y));
}

Status oom(MediaType type) { return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory budget while resizing", type); }

/** stbir's samplers, freed on destruction. */
struct Samplers {
  STBIR_RESIZE* r = nullptr;
  ~Samplers() {
    if (r) stbir_free_samplers(r);
  }
};

}  // namespace

uint64_t row_resize_stream_bytes(uint32_t in_w, uint32_t tw, int channels) {
  // The ring, and stbir's one split: its decode buffer and a ring of horizontally resampled rows (floats, a filter's
  // height of them: Mitchell covers <= 4 rows per unit of scale, and the callers keep the vertical scale above 1/64
  // (a shrink-on-load first); counted generously as 64 rows of the wider side), plus its coefficient tables (a few
  // floats per output pixel of a row and column, in the callers' fixed allowance).
  const uint64_t row = uint64_t(in_w) * channels;
  const uint64_t wide = uint64_t(in_w > tw ? in_w : tw) * 4 * sizeof(float);
  return row * kStreamRingRows + wide * 72;
}

Status row_resize_stream(RowProducer* producer, uint32_t in_w, uint32_t in_h, int channels, uint32_t tw, uint32_t th,
                         const ResizedRowSink& sink, MediaType type) {
  if (tw < kStreamMinWidth || (channels != 3 && channels != 4) || in_w == 0 || in_h == 0)
    return Status::Err("ERR_INTERNAL", "streaming resize outside its domain", type);
  const size_t row_bytes = size_t(in_w) * channels;
  RowRing ring(producer, in_h, std::min<uint32_t>(kStreamRingRows, in_h), row_bytes, type);
  if (!ring.alloc()) return oom(type);
  // The same resize as resize_pixels (pixels.cpp) with the same samplers, in one split: the bytes of each output row
  // do not depend on the split (gather or scatter, each row sums the same input rows in the same order).
  STBIR_RESIZE r;
  const stbir_pixel_layout layout = channels == 4 ? STBIR_RGBA : STBIR_RGB;
  // The pixel pointers are never dereferenced (the callbacks supply and take every row) but stbir offsets them, so
  // they are a real, non-null address (the ring; never written through them). Strides are the true ones.
  uint8_t* any = ring.any();
  stbir_resize_init(&r, any, int(in_w), int(in_h), int(row_bytes), any, int(tw), int(th), int(tw * uint32_t(channels)),
                    layout, STBIR_TYPE_UINT8);
  stbir_set_edgemodes(&r, STBIR_EDGE_CLAMP, STBIR_EDGE_CLAMP);
  stbir_set_filters(&r, STBIR_FILTER_MITCHELL, STBIR_FILTER_MITCHELL);
  Callbacks cbs{&ring, &sink, channels};
  stbir_set_user_data(&r, &cbs);
  stbir_set_pixel_callbacks(&r, input_cb, output_cb);
  Samplers samplers;
  if (stbir_build_samplers_with_splits(&r, 1) <= 0) return oom(type);
  samplers.r = &r;

  ring.start();
  bool completed = false;
  int ok = 1;
  try {
    ok = stbir_resize_extended_split(&r, 0, 1);
    completed = true;
  } catch (const StopResize&) {
    completed = false;
  }
  const Status s = ring.finish(completed);
  if (!s.ok()) return s;
  if (!ok) return oom(type);
  return Status::Ok();
}

}  // namespace panto
