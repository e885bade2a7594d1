// PDF checks: passed through untouched, so only the envelope is verified (header, and an %%EOF near the end so a
// truncated download is caught). Page count by scanning for page objects; 0 when they are hidden in compressed
// object streams.
#include <algorithm>
#include <cstring>

#include "internal.h"

namespace panto {
namespace {

/** First occurrence of `needle` (n > 0 bytes) in [p, end), or nullptr. Portable stand-in for GNU memmem (absent from
 * the Windows CRTs): memchr finds each candidate first byte, memcmp confirms. */
const uint8_t* find_bytes(const uint8_t* p, const uint8_t* end, const char* needle, size_t n) {
  while (size_t(end - p) >= n) {
    const void* c = std::memchr(p, static_cast<unsigned char>(needle[0]), size_t(end - p) - n + 1);
    if (!c) return nullptr;
    const uint8_t* q = static_cast<const uint8_t*>(c);
    if (std::memcmp(q, needle, n) == 0) return q;
    p = q + 1;
  }
  return nullptr;
}

}  // namespace

Status pdf_check(const uint8_t* d, size_t len, uint32_t* pages) {
  const MediaType T = MediaType::Pdf;
  *pages = 0;
  if (len < 8 || std::memcmp(d, "%PDF-", 5) != 0) return Status::Err("ERR_CORRUPT_MEDIA", "missing %PDF- header", T);
  // %%EOF must appear in the last 1 KiB (the spec says at the end; writers append a newline or a little junk).
  size_t tail = std::min<size_t>(len, 1024);
  const uint8_t* t = d + len - tail;
  bool eof = false;
  for (size_t i = tail; i >= 5 && !eof; i--) eof = std::memcmp(t + i - 5, "%%EOF", 5) == 0;
  if (!eof)
    return Status::Err("ERR_CORRUPT_MEDIA", "application/pdf is corrupt: truncated (no %%EOF marker at the end)", T);
  // "/Type /Page" not followed by "s" (that is the /Pages tree node); whitespace between the tokens is optional.
  uint32_t n = 0;
  const uint8_t* p = d;
  const uint8_t* end = d + len;
  while (p < end) {
    const uint8_t* hit = find_bytes(p, end, "/Type", 5);
    if (!hit) break;
    const uint8_t* q = hit + 5;
    while (q < end && (*q == ' ' || *q == '\r' || *q == '\n' || *q == '\t')) q++;
    if (end - q >= 5 && std::memcmp(q, "/Page", 5) == 0) {
      q += 5;
      if (q >= end || !((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z'))) n++;
    }
    p = q;
  }
  *pages = n;
  return Status::Ok();
}

}  // namespace panto
