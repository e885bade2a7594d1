// Thin Node-API layer over native/core/media-core.h.
//
// Exports:
//   init(MediaError)            must be called once before anything else; errors are built as
//                               `new MediaError(code, message, mediaType)` so `instanceof` and `.code` hold.
//   sniff(u8) -> string|null    synchronous, magic bytes only.
//   probe(u8) -> info|null      synchronous, header only; null for unrecognised/unsupported types, throws
//                               MediaError(ERR_CORRUPT_MEDIA/...) for a supported type with an unreadable header.
//   process(u8, opts) -> Promise<result>   work on the libuv threadpool (AsyncWorker).
//   decodeToRgba(u8, maxPixels?) -> {width, height, data}   TEST/DIAGNOSTIC ONLY (synchronous first-frame decode;
//                               not part of the public API). maxPixels: integer >= 1, default ProcessOptions's.
// Every numeric argument is checked (integer within its range) before it is cast: ERR_INVALID_ARGUMENT otherwise.
//
// Ownership: the input Uint8Array is kept alive by a reference for the worker's lifetime and read in place (the
// caller must not mutate it while a call is pending). Output bytes are handed to JS as an external Buffer whose
// finalizer releases the core's allocation (no copy), or copied once when external buffers are not allowed.
// C++ exceptions are enabled; every core call is noexcept by contract and the worker catches anything else; a
// failure while building the result in OnOK rejects the promise (it never becomes an uncaught exception).
#include <napi.h>

#include <string>

#include "media-core.h"

namespace {

struct AddonData {
  Napi::FunctionReference media_error;
};

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

Napi::Uint8Array bytes_arg(const Napi::CallbackInfo& info, size_t i) {
  if (info.Length() <= i || !info[i].IsTypedArray() ||
      info[i].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    throw_invalid(info.Env(), "bytes must be a Buffer or Uint8Array");
  return info[i].As<Napi::Uint8Array>();
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
          Napi::MemoryManagement::AdjustExternalMemory(e, -size);
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
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) throw_invalid(env, "init(MediaError) needs the error class");
  auto* data = env.GetInstanceData<AddonData>();
  data->media_error = Napi::Persistent(info[0].As<Napi::Function>());
  return env.Undefined();
}

Napi::Value Sniff(const Napi::CallbackInfo& info) {
  Napi::Uint8Array b = bytes_arg(info, 0);
  panto::MediaType t = panto::sniff(b.Data(), b.ByteLength());
  if (t == panto::MediaType::Unknown) return info.Env().Null();
  return Napi::String::New(info.Env(), panto::mime_of(t));
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
  Napi::Env env = info.Env();
  Napi::Uint8Array b = bytes_arg(info, 0);
  panto::MediaType t = panto::sniff(b.Data(), b.ByteLength());
  if (!panto::is_supported(t)) return env.Null();
  panto::MediaInfo m;
  panto::Status s = panto::probe(b.Data(), b.ByteLength(), &m);
  if (!s.ok()) throw_status(env, s);
  return info_object(env, m);
}

// ---- options ---------------------------------------------------------------------------------------------------

constexpr double kMaxSafe = 9007199254740991.0;  // Number.MAX_SAFE_INTEGER

/** `v` as an integer in [min, max] (`def` when undefined); ERR_INVALID_ARGUMENT naming `key` otherwise. Checking
 *  before any cast matters: a NaN, infinite or out-of-range double cast to an integer type is undefined behaviour. */
double integer_arg(Napi::Env env, Napi::Value v, const char* key, double def, double min, double max) {
  if (v.IsUndefined()) return def;
  if (!v.IsNumber()) throw_invalid(env, std::string(key) + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= min && d <= max) || d != static_cast<double>(static_cast<int64_t>(d)))
    throw_invalid(env, std::string(key) + " must be an integer in [" + std::to_string(static_cast<int64_t>(min)) +
                           ", " + std::to_string(static_cast<int64_t>(max)) + "]");
  return d;
}

double number_opt(Napi::Env env, Napi::Object o, const char* key, double def, double min, double max) {
  return integer_arg(env, o.Get(key), key, def, min, max);
}

panto::ProcessOptions parse_options(Napi::Env env, Napi::Value v) {
  panto::ProcessOptions o;
  if (v.IsUndefined() || v.IsNull()) return o;
  if (!v.IsObject()) throw_invalid(env, "options must be an object");
  Napi::Object obj = v.As<Napi::Object>();
  o.max_dimension = static_cast<uint32_t>(number_opt(env, obj, "maxDimension", o.max_dimension, 1, 65535));
  // Defaults come from panto::ProcessOptions (one source of truth in C++; the TS layer mirrors them).
  o.max_encoded_bytes =
      static_cast<uint64_t>(number_opt(env, obj, "maxEncodedBytes", double(o.max_encoded_bytes), 1, kMaxSafe));
  o.max_pixels = static_cast<uint64_t>(number_opt(env, obj, "maxPixels", double(o.max_pixels), 1, kMaxSafe));
  o.max_input_bytes =
      static_cast<uint64_t>(number_opt(env, obj, "maxInputBytes", double(o.max_input_bytes), 1, kMaxSafe));
  o.max_pdf_bytes = static_cast<uint64_t>(number_opt(env, obj, "maxPdfBytes", double(o.max_pdf_bytes), 1, kMaxSafe));
  o.jpeg_quality = static_cast<int>(number_opt(env, obj, "jpegQuality", o.jpeg_quality, 1, 100));
  Napi::Value keep = obj.Get("keepMetadata");
  if (!keep.IsUndefined()) {
    if (!keep.IsBoolean()) throw_invalid(env, "keepMetadata must be a boolean");
    o.keep_metadata = keep.As<Napi::Boolean>().Value();
  }
  Napi::Value hint = obj.Get("mediaTypeHint");
  if (!hint.IsUndefined()) {
    if (!hint.IsString()) throw_invalid(env, "mediaTypeHint must be a string");
    o.media_type_hint = hint.As<Napi::String>().Utf8Value();
  }
  Napi::Value fmt = obj.Get("format");
  if (!fmt.IsUndefined()) {
    std::string f = fmt.IsString() ? fmt.As<Napi::String>().Utf8Value() : "";
    if (f == "auto") o.format = panto::OutputFormat::Auto;
    else if (f == "jpeg") o.format = panto::OutputFormat::Jpeg;
    else if (f == "png") o.format = panto::OutputFormat::Png;
    else if (f == "webp") o.format = panto::OutputFormat::Webp;
    else throw_invalid(env, "format must be 'auto', 'jpeg', 'png' or 'webp'");
  }
  return o;
}

// ---- process ---------------------------------------------------------------------------------------------------

class ProcessWorker : public Napi::AsyncWorker {
 public:
  ProcessWorker(Napi::Env env, Napi::Uint8Array input, panto::ProcessOptions opts)
      : Napi::AsyncWorker(env, "panto:processMedia"),
        deferred_(Napi::Promise::Deferred::New(env)),
        input_ref_(Napi::Persistent(input)),
        data_(input.Data()),
        len_(input.ByteLength()),
        opts_(std::move(opts)) {}

  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  void Execute() override {
    try {
      status_ = panto::process(data_, len_, opts_, &result_);
    } catch (...) {
      status_ = panto::Status::Err("ERR_INTERNAL", "unexpected exception in the media worker");
    }
  }

  void OnOK() override {
    // A throw here (e.g. a Buffer that cannot be allocated) would surface as an uncaught exception and leave the
    // promise pending forever: reject it instead.
    try {
      Settle();
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  void Settle() {
    Napi::Env env = Env();
    if (!status_.ok()) {
      deferred_.Reject(make_error(env, status_.code, status_.message, status_.media_type));
      return;
    }
    Napi::Object o = Napi::Object::New(env);
    if (result_.unchanged) {
      o.Set("data", Napi::Buffer<uint8_t>::Copy(env, data_, len_));
    } else {
      o.Set("data", to_buffer(env, &result_.data));
    }
    o.Set("mediaType", panto::mime_of(result_.type));
    o.Set("width", Napi::Number::New(env, result_.width));
    o.Set("height", Napi::Number::New(env, result_.height));
    o.Set("original", info_object(env, result_.original));
    Napi::Array changes = Napi::Array::New(env, result_.changes.size());
    for (size_t i = 0; i < result_.changes.size(); i++) changes.Set(static_cast<uint32_t>(i), result_.changes[i]);
    o.Set("changes", changes);
    o.Set("byteLength", Napi::Number::New(env, static_cast<double>(len_)));
    deferred_.Resolve(o);
  }

  Napi::Promise::Deferred deferred_;
  Napi::Reference<Napi::Uint8Array> input_ref_;
  const uint8_t* data_;
  size_t len_;
  panto::ProcessOptions opts_;
  panto::Status status_;
  panto::ProcessResult result_;
};

Napi::Value Process(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Uint8Array b = bytes_arg(info, 0);
  panto::ProcessOptions opts = parse_options(env, info.Length() > 1 ? info[1] : env.Undefined());
  auto* w = new ProcessWorker(env, b, std::move(opts));
  Napi::Promise p = w->Promise();
  w->Queue();
  return p;
}

Napi::Value DecodeToRgba(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Uint8Array b = bytes_arg(info, 0);
  const double max_pixels = integer_arg(env, info.Length() > 1 ? info[1] : env.Undefined(), "maxPixels",
                                        double(panto::ProcessOptions{}.max_pixels), 1, kMaxSafe);
  panto::DecodedImage img;
  panto::Status s = panto::decode_to_rgba(b.Data(), b.ByteLength(), static_cast<uint64_t>(max_pixels), &img);
  if (!s.ok()) throw_status(env, s);
  Napi::Object o = Napi::Object::New(env);
  o.Set("width", Napi::Number::New(env, img.width));
  o.Set("height", Napi::Number::New(env, img.height));
  o.Set("data", to_buffer(env, &img.rgba));
  return o;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new AddonData());
  exports.Set("init", Napi::Function::New(env, InitErrors, "init"));
  exports.Set("sniff", Napi::Function::New(env, Sniff, "sniff"));
  exports.Set("probe", Napi::Function::New(env, Probe, "probe"));
  exports.Set("process", Napi::Function::New(env, Process, "process"));
  exports.Set("decodeToRgba", Napi::Function::New(env, DecodeToRgba, "decodeToRgba"));
  return exports;
}

}  // namespace

NODE_API_MODULE(panto_media, Init)
