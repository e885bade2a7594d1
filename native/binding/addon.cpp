// Thin Node-API layer over native/core/media-core.h.
//
// Exports:
//   init(MediaError)            must be called once before anything else; errors are built as
//                               `new MediaError(code, message, mediaType)` so `instanceof` and `.code` hold.
//   sniff(u8) -> string|null    synchronous, magic bytes only.
//   probe(u8) -> info|null      synchronous, header only; null for unrecognised/unsupported types, throws
//                               MediaError(ERR_CORRUPT_MEDIA/...) for a supported type with an unreadable header.
//   process(u8, opts, token?, owned?) -> Promise<result>   work on the libuv threadpool (napi async work). `opts` are
//                               RESOLVED options (src/media/policy.ts): every field present and in range, else
//                               ERR_INVALID_ARGUMENT naming the field, the expected range and the actual value.
//                               Rejects with code ERR_MEDIA_BUSY (internal, never user-facing) when the process-wide
//                               memory pool cannot fit the call's estimate right now: the caller retries later.
//   abortToken() -> token       a cancellation token for process(); abort(token) stops the calls holding it between
//                               rows/scans/stages (they reject with ERR_ABORTED).
//   setMemoryCap(bytes) -> previous cap;  memoryInFlight() -> bytes reserved now (process-wide, all threads).
//   decodeToRgba(u8, maxPixels?) -> {width, height, data}   TEST/DIAGNOSTIC ONLY (synchronous first-frame decode;
//                               not part of the public API). maxPixels: integer >= 1, default ProcessOptions's.
//
// Ownership: process() copies the input bytes into memory the call owns before it returns (the caller may mutate,
// transfer or detach its buffer at once); on a pass-through the copy itself becomes the result Buffer (no second
// copy). With `owned` === true the caller (src/media/process-media.ts, after taking the bytes over with a transfer)
// hands the input's ArrayBuffer to the call instead: nothing else may read, write or detach it from then on. The call
// holds a reference to it until it settles and reads it in place (no copy); like a copy, it is not charged to the
// call's budget, and the decoders may return its consumed pages to the OS (ProcessOptions::input_discardable: it is
// private memory that is never read again). A pass-through result is then a Uint8Array view of that ArrayBuffer (the
// caller wraps it as a Buffer; still no copy). Output bytes are handed to JS as an external Buffer whose finalizer
// releases the core's allocation (no copy), or copied once when external buffers are not allowed. The synchronous
// entry points read the input in place (no JS runs meanwhile).
// Exceptions: no C++ exception leaves any entry point (each is guarded: std::bad_alloc -> ERR_MEDIA_TOO_LARGE, other
// -> ERR_INTERNAL; node-addon-api's CPP_EXCEPTIONS_ALL is the backstop). Completion callbacks and finalizers swallow
// everything: during worker_thread/environment teardown N-API calls fail, and a throw there would abort the process.
#define NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS
#define NODE_ADDON_API_CPP_EXCEPTIONS_ALL
#include <napi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "budget.h"
#include "media-core.h"

namespace {

struct AddonData {
  Napi::FunctionReference media_error;
};

using AbortFlag = std::shared_ptr<std::atomic<int>>;

Napi::Value make_error(Napi::Env env, const std::string& code, const std::string& message, panto::MediaType t) {
  auto* data = env.GetInstanceData<AddonData>();
  Napi::Value type = t == panto::MediaType::Unknown ? env.Undefined() : Napi::String::New(env, panto::mime_of(t));
  if (data && !data->media_error.IsEmpty()) {
    return data->media_error.New({Napi::String::New(env, code), Napi::String::New(env, message), type});
  }
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  return e.Value();
}

[[noreturn]] void throw_status(Napi::Env env, const panto::Status& s) {
  throw Napi::Error(env, make_error(env, s.code, s.message, s.media_type));
}

[[noreturn]] void throw_invalid(Napi::Env env, const std::string& message) {
  throw_status(env, panto::Status::Err("ERR_INVALID_ARGUMENT", message));
}

/** Runs an entry point's body; turns any C++ exception other than a Napi::Error into a MediaError. */
template <typename F>
Napi::Value guarded(const Napi::CallbackInfo& info, F body) {
  Napi::Env env = info.Env();
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw_status(env, panto::Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory"));
  } catch (const std::exception& e) {
    throw_status(env, panto::Status::Err("ERR_INTERNAL", std::string("unexpected native exception: ") + e.what()));
  } catch (...) {
    throw_status(env, panto::Status::Err("ERR_INTERNAL", "unexpected native exception"));
  }
}

/** Argument `i` as a Uint8Array (a Buffer is one); ERR_INVALID_ARGUMENT otherwise. napi_get_typedarray_info alone
 *  tells: it refuses (napi_invalid_arg, no exception) anything that is not a typed array, so napi_is_typedarray is
 *  never imported (each N-API import costs the first call a lookup in node's symbol table, see ProcessWorker). */
Napi::Uint8Array bytes_arg(const Napi::CallbackInfo& info, size_t i) {
  napi_typedarray_type type;
  if (info.Length() <= i ||
      napi_get_typedarray_info(info.Env(), info[i], &type, nullptr, nullptr, nullptr, nullptr) != napi_ok ||
      type != napi_uint8_array)
    throw_invalid(info.Env(), "bytes must be a Buffer or Uint8Array");
  return info[i].As<Napi::Uint8Array>();
}

/** A copy of `b` the call owns (a budget input block; ERR_MEDIA_TOO_LARGE when it cannot be allocated). */
panto::OwnedBytes copy_input(Napi::Env env, const Napi::Uint8Array& b) {
  const size_t n = b.ByteLength();
  // A budget input block (no call's budget is active here, so nothing is charged): the call owns it and a decoder
  // may return its consumed pages to the OS (ProcessOptions::input_discardable).
  panto::OwnedBytes out =
      panto::OwnedBytes::adopt(static_cast<uint8_t*>(panto_budget_malloc_input(n ? n : 1)), n, panto::budget_release);
  if (!out.data) throw_status(env, panto::Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory copying the input"));
  if (n) std::memcpy(out.data, b.Data(), n);
  return out;
}

/** Moves `bytes` into a JS Buffer without copying (external), or copies once when externals are not allowed; the
 *  finalizer releases the core's allocation either way. */
Napi::Buffer<uint8_t> to_buffer(Napi::Env env, panto::OwnedBytes* bytes) {
  auto* owner = new panto::OwnedBytes(std::move(*bytes));
  const int64_t size = static_cast<int64_t>(owner->size);
  Napi::Buffer<uint8_t> buf;
  try {
    buf = Napi::Buffer<uint8_t>::NewOrCopy(
        env, owner->data, owner->size,
        [size](Napi::Env e, uint8_t*, panto::OwnedBytes* o) {
          delete o;
          try {
            Napi::MemoryManagement::AdjustExternalMemory(e, -size);
          } catch (...) {  // environment teardown: nothing to adjust
          }
        },
        owner);
  } catch (...) {
    delete owner;  // a failed NewOrCopy drops its finalizer without running it
    throw;
  }
  // Tell V8 about the external bytes so GC pressure reflects them (undone by the finalizer; net zero on a copy).
  Napi::MemoryManagement::AdjustExternalMemory(env, size);
  return buf;
}

Napi::Value InitErrors(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsFunction()) throw_invalid(env, "init(MediaError) needs the error class");
    auto* data = env.GetInstanceData<AddonData>();
    data->media_error = Napi::Persistent(info[0].As<Napi::Function>());
    return env.Undefined();
  });
}

Napi::Value Sniff(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Uint8Array b = bytes_arg(info, 0);
    panto::MediaType t = panto::sniff(b.Data(), b.ByteLength());
    if (t == panto::MediaType::Unknown) return info.Env().Null();
    return Napi::String::New(info.Env(), panto::mime_of(t));
  });
}

Napi::Object info_object(Napi::Env env, const panto::MediaInfo& m) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("mediaType", panto::mime_of(m.type));
  o.Set("width", Napi::Number::New(env, m.width));
  o.Set("height", Napi::Number::New(env, m.height));
  o.Set("frames", Napi::Number::New(env, m.frames));
  o.Set("hasAlpha", Napi::Boolean::New(env, m.has_alpha));
  o.Set("orientation", Napi::Number::New(env, m.orientation));
  return o;
}

Napi::Value Probe(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    Napi::Uint8Array b = bytes_arg(info, 0);
    panto::MediaType t = panto::sniff(b.Data(), b.ByteLength());
    if (!panto::is_supported(t)) return env.Null();
    panto::MediaInfo m;
    panto::Status s = panto::probe(b.Data(), b.ByteLength(), &m);
    if (!s.ok()) throw_status(env, s);
    return info_object(env, m);
  });
}

// ---- options: resolved by src/media/policy.ts, asserted here ------------------------------------------------------

constexpr double kMaxSafe = 9007199254740991.0;  // Number.MAX_SAFE_INTEGER

std::string describe(Napi::Value v) {
  if (v.IsUndefined()) return "undefined";
  if (v.IsNull()) return "null";
  if (v.IsNumber()) {
    double d = v.As<Napi::Number>().DoubleValue();
    if (d == static_cast<double>(static_cast<int64_t>(d)) && d >= -kMaxSafe && d <= kMaxSafe)
      return std::to_string(static_cast<int64_t>(d));
    return std::to_string(d);
  }
  if (v.IsString()) return "'" + v.As<Napi::String>().Utf8Value() + "'";
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value() ? "true" : "false";
  return "a non-primitive value";
}

/** `v` as an integer in [min, max]; ERR_INVALID_ARGUMENT with name, expected and actual otherwise (`def` when
 *  undefined and a default is allowed). Checking before any cast matters: casting a NaN, infinite or out-of-range
 *  double to an integer type is undefined behaviour. */
double integer_arg(Napi::Env env, Napi::Value v, const char* key, double min, double max, const double* def = nullptr) {
  if (v.IsUndefined() && def) return *def;
  double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : 0.0;
  if (!v.IsNumber() || !(d >= min && d <= max) || d != static_cast<double>(static_cast<int64_t>(d)))
    throw_invalid(env, std::string(key) + ": expected an integer in [" + std::to_string(static_cast<int64_t>(min)) +
                           ", " + std::to_string(static_cast<int64_t>(max)) + "], got " + describe(v));
  return d;
}

panto::ProcessOptions parse_options(Napi::Env env, Napi::Value v) {
  panto::ProcessOptions o;
  if (!v.IsObject()) throw_invalid(env, "options: expected resolved processing options (an object), got " + describe(v));
  Napi::Object obj = v.As<Napi::Object>();
  auto num = [&](const char* key, double min, double max) { return integer_arg(env, obj.Get(key), key, min, max); };
  o.max_dimension = static_cast<uint32_t>(num("maxDimension", 1, 65535));
  o.max_encoded_bytes = static_cast<uint64_t>(num("maxEncodedBytes", 1, kMaxSafe));
  o.max_pixels = static_cast<uint64_t>(num("maxPixels", 1, kMaxSafe));
  o.max_input_bytes = static_cast<uint64_t>(num("maxInputBytes", 1, kMaxSafe));
  o.max_pdf_bytes = static_cast<uint64_t>(num("maxPdfBytes", 1, kMaxSafe));
  o.jpeg_quality = static_cast<int>(num("jpegQuality", 1, 100));
  Napi::Value keep = obj.Get("keepMetadata");
  if (!keep.IsBoolean()) throw_invalid(env, "keepMetadata: expected a boolean, got " + describe(keep));
  o.keep_metadata = keep.As<Napi::Boolean>().Value();
  Napi::Value hint = obj.Get("mediaTypeHint");
  if (!hint.IsUndefined()) {
    if (!hint.IsString()) throw_invalid(env, "mediaTypeHint: expected a string, got " + describe(hint));
    o.media_type_hint = hint.As<Napi::String>().Utf8Value();
  }
  Napi::Value fmt = obj.Get("format");
  std::string f = fmt.IsString() ? fmt.As<Napi::String>().Utf8Value() : "";
  if (f == "auto") o.format = panto::OutputFormat::Auto;
  else if (f == "jpeg") o.format = panto::OutputFormat::Jpeg;
  else if (f == "png") o.format = panto::OutputFormat::Png;
  else if (f == "webp") o.format = panto::OutputFormat::Webp;
  else throw_invalid(env, "format: expected 'auto', 'jpeg', 'png' or 'webp', got " + describe(fmt));
  return o;
}

// ---- abort tokens ---------------------------------------------------------------------------------------------------

AbortFlag* token_arg(Napi::Env env, Napi::Value v) {
  if (!v.IsExternal()) throw_invalid(env, "token: expected a value from abortToken(), got " + describe(v));
  return v.As<Napi::External<AbortFlag>>().Data();
}

Napi::Value AbortToken(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    auto* flag = new AbortFlag(std::make_shared<std::atomic<int>>(0));
    return Napi::External<AbortFlag>::New(info.Env(), flag, [](Napi::Env, AbortFlag* f) { delete f; });
  });
}

Napi::Value Abort(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    AbortFlag* f = token_arg(info.Env(), info.Length() > 0 ? info[0] : info.Env().Undefined());
    (*f)->store(1);
    return info.Env().Undefined();
  });
}

// ---- process ---------------------------------------------------------------------------------------------------

/**
 * One process() call: its input, options and result, run as raw Node-API async work (Execute on a libuv threadpool
 * thread, then Complete on the JS thread, which settles the promise and deletes the worker). Not Napi::AsyncWorker:
 * node opens the completion callback's handle scope itself, and every N-API function the addon calls is looked up by
 * name in node's dynamic symbol table the first time (lazy binding), faulting in 64 KiB blocks of a table several MB
 * large at scattered places; AsyncWorker's extra imports (a latin1 resource name, its own handle scope) cost the
 * first call ~128 KB of resident memory for nothing.
 */
class ProcessWorker {
 public:
  /** A call on its own copy of the input (`input`). */
  ProcessWorker(Napi::Env env, panto::OwnedBytes input, panto::ProcessOptions opts, AbortFlag abort)
      : env_(env),
        deferred_(Napi::Promise::Deferred::New(env)),
        input_(std::move(input)),
        opts_(std::move(opts)),
        abort_(std::move(abort)) {
    opts_.abort_flag = abort_.get();
    in_ = input_.view();
  }

  /** A call on an input it was handed (`owned`, see Ownership above): read in place, referenced until destroyed. */
  ProcessWorker(Napi::Env env, const Napi::Uint8Array& owned, panto::ProcessOptions opts, AbortFlag abort)
      : env_(env), deferred_(Napi::Promise::Deferred::New(env)), opts_(std::move(opts)), abort_(std::move(abort)) {
    opts_.abort_flag = abort_.get();
    Napi::ArrayBuffer ab = owned.ArrayBuffer();
    owned_ = Napi::Persistent(ab);
    owned_offset_ = owned.ByteOffset();
    in_ = {owned.Data(), owned.ByteLength()};
  }

  ~ProcessWorker() {
    if (work_) napi_delete_async_work(env_, work_);  // environment teardown: nothing left to release
  }

  ProcessWorker(const ProcessWorker&) = delete;
  ProcessWorker& operator=(const ProcessWorker&) = delete;

  Napi::Promise Promise() { return deferred_.Promise(); }

  /** Creates and queues the work (throws a Napi::Error when N-API refuses). Once it returns, the work owns `this`:
   *  Complete deletes it. */
  void Queue() {
    napi_value name;
    napi_status s = napi_create_string_utf8(env_, "panto:processMedia", NAPI_AUTO_LENGTH, &name);
    if (s == napi_ok) s = napi_create_async_work(env_, nullptr, name, Execute, Complete, this, &work_);
    if (s == napi_ok) s = napi_queue_async_work(env_, work_);
    NAPI_THROW_IF_FAILED_VOID(env_, s);
  }

 private:
  /** Threadpool thread: the core's work; nothing escapes. */
  static void Execute(napi_env, void* data) {
    auto* self = static_cast<ProcessWorker*>(data);
    try {
      self->status_ = panto::process(self->in_.data, self->in_.size, self->opts_, &self->result_);
    } catch (...) {
      self->status_ = panto::Status::Err("ERR_INTERNAL", "unexpected exception in the media worker");
    }
  }

  // Completion runs on the JS thread, also while a worker_thread's environment is being torn down (N-API calls then
  // fail). Nothing may escape: a throw here terminates the whole process. `napi_cancelled` (never asked for) leaves
  // the promise pending, as Napi::AsyncWorker did.
  static void Complete(napi_env env, napi_status status, void* data) {
    auto* self = static_cast<ProcessWorker*>(data);
    if (status != napi_cancelled) self->Finish(Napi::Env(env));
    delete self;
  }

  void Finish(Napi::Env env) {
    try {
      Settle(env);
    } catch (const Napi::Error& e) {
      try {
        deferred_.Reject(e.Value());
      } catch (...) {
      }
    } catch (...) {
      try {
        deferred_.Reject(
            make_error(env, "ERR_MEDIA_TOO_LARGE", "out of memory building the result", panto::MediaType::Unknown));
      } catch (...) {
      }
    }
  }

  void Settle(Napi::Env env) {
    if (!status_.ok()) {
      deferred_.Reject(make_error(env, status_.code, status_.message, status_.media_type));
      return;
    }
    Napi::Object o = Napi::Object::New(env);
    const size_t input_len = in_.size;
    // Pass-through: the call's own copy of the input (or the input it was handed) is the result (no second copy).
    if (result_.unchanged && !owned_.IsEmpty()) {
      napi_value view;  // a Uint8Array over the handed ArrayBuffer (napi directly: Napi::Uint8Array::New asks for
                        // the buffer's data pointer too, one more N-API import)
      napi_status s = napi_create_typedarray(env, napi_uint8_array, in_.size, owned_.Value(), owned_offset_, &view);
      NAPI_THROW_IF_FAILED_VOID(env, s);
      o.Set("data", Napi::Value(env, view));
    } else {
      o.Set("data", to_buffer(env, result_.unchanged ? &input_ : &result_.data));
    }
    o.Set("mediaType", panto::mime_of(result_.type));
    o.Set("width", Napi::Number::New(env, result_.width));
    o.Set("height", Napi::Number::New(env, result_.height));
    o.Set("original", info_object(env, result_.original));
    Napi::Array changes = Napi::Array::New(env, result_.changes.size());
    for (size_t i = 0; i < result_.changes.size(); i++) changes.Set(static_cast<uint32_t>(i), result_.changes[i]);
    o.Set("changes", changes);
    o.Set("byteLength", Napi::Number::New(env, static_cast<double>(input_len)));
    deferred_.Resolve(o);
  }

  napi_env env_;
  napi_async_work work_ = nullptr;
  Napi::Promise::Deferred deferred_;
  panto::OwnedBytes input_;                    // the call's copy (empty when it was handed its input)
  Napi::Reference<Napi::ArrayBuffer> owned_;   // the input it was handed (empty on a copy)
  size_t owned_offset_ = 0;
  panto::ByteView in_;                         // what the call reads: input_ or the bytes of owned_
  panto::ProcessOptions opts_;
  AbortFlag abort_;  // shared with the token; kept alive by the worker
  panto::Status status_;
  panto::ProcessResult result_;
};

Napi::Value Process(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    Napi::Uint8Array b = bytes_arg(info, 0);
    panto::ProcessOptions opts = parse_options(env, info.Length() > 1 ? info[1] : env.Undefined());
    AbortFlag abort;
    if (info.Length() > 2 && !info[2].IsUndefined()) abort = *token_arg(env, info[2]);
    // Refuse an oversized input before copying it (the core would refuse it anyway).
    const uint64_t limit = std::max(opts.max_input_bytes, opts.max_pdf_bytes);
    if (b.ByteLength() > limit) {
      panto::MediaType t = panto::sniff(b.Data(), b.ByteLength());
      const uint64_t cap = t == panto::MediaType::Pdf ? opts.max_pdf_bytes : opts.max_input_bytes;
      throw_status(env, panto::Status::Err("ERR_MEDIA_TOO_LARGE",
                                           "input is " + std::to_string(b.ByteLength()) + " bytes; the limit is " +
                                               std::to_string(cap) + " bytes",
                                           t));
    }
    // The worker's own copy (copy_input), or the input it was handed: read again only as a pass-through result.
    opts.input_discardable = true;
    const bool owned = info.Length() > 3 && info[3].IsBoolean() && info[3].As<Napi::Boolean>().Value();
    std::unique_ptr<ProcessWorker> w(owned ? new ProcessWorker(env, b, std::move(opts), std::move(abort))
                                           : new ProcessWorker(env, copy_input(env, b), std::move(opts), std::move(abort)));
    Napi::Promise p = w->Promise();
    w->Queue();
    w.release();  // the queued work owns it now (ProcessWorker::Complete deletes it)
    return p;
  });
}

Napi::Value SetMemoryCap(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    const double bytes = integer_arg(env, info.Length() > 0 ? info[0] : env.Undefined(), "bytes", 1, kMaxSafe);
    return Napi::Number::New(env, static_cast<double>(panto::set_memory_cap(static_cast<uint64_t>(bytes))));
  });
}

Napi::Value MemoryInFlight(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    return Napi::Number::New(info.Env(), static_cast<double>(panto::memory_in_flight()));
  });
}

Napi::Value DecodeToRgba(const Napi::CallbackInfo& info) {
  return guarded(info, [&]() -> Napi::Value {
    Napi::Env env = info.Env();
    Napi::Uint8Array b = bytes_arg(info, 0);
    const double def = double(panto::ProcessOptions{}.max_pixels);
    const double max_pixels =
        integer_arg(env, info.Length() > 1 ? info[1] : env.Undefined(), "maxPixels", 1, kMaxSafe, &def);
    panto::DecodedImage img;
    panto::Status s = panto::decode_to_rgba(b.Data(), b.ByteLength(), static_cast<uint64_t>(max_pixels), &img);
    if (!s.ok()) throw_status(env, s);
    Napi::Object o = Napi::Object::New(env);
    o.Set("width", Napi::Number::New(env, img.width));
    o.Set("height", Napi::Number::New(env, img.height));
    o.Set("data", to_buffer(env, &img.rgba));
    return o;
  });
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new AddonData());
  exports.Set("init", Napi::Function::New(env, InitErrors, "init"));
  exports.Set("sniff", Napi::Function::New(env, Sniff, "sniff"));
  exports.Set("probe", Napi::Function::New(env, Probe, "probe"));
  exports.Set("process", Napi::Function::New(env, Process, "process"));
  exports.Set("abortToken", Napi::Function::New(env, AbortToken, "abortToken"));
  exports.Set("abort", Napi::Function::New(env, Abort, "abort"));
  exports.Set("setMemoryCap", Napi::Function::New(env, SetMemoryCap, "setMemoryCap"));
  exports.Set("memoryInFlight", Napi::Function::New(env, MemoryInFlight, "memoryInFlight"));
  exports.Set("decodeToRgba", Napi::Function::New(env, DecodeToRgba, "decodeToRgba"));
  return exports;
}

}  // namespace

NODE_API_MODULE(panto_media, Init)
