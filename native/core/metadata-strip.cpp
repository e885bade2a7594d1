// Lossless privacy-metadata strip for images that are passed through (pixels and colour untouched):
// - JPEG: drops APP1 (EXIF incl. GPS, XMP), APP3..APP13 (maker notes, IPTC), APP15, COM, APP2 other than ICC_PROFILE,
//   and anything after EOI (e.g. appended motion-photo video); keeps APP0 (JFIF), APP2 ICC_PROFILE, APP14 (Adobe).
// - PNG: drops tEXt, zTXt, iTXt, eXIf, tIME, ancillary chunks with a bad CRC and anything after IEND; keeps iCCP and
//   all other chunks.
// - WebP: drops EXIF and XMP chunks (clearing their VP8X flags); keeps ICCP.
// GIF and BMP are never passed through (process.cpp re-encodes them as PNG), so they have no strip here.
#include <libdeflate.h>

#include <cstring>

#include "internal.h"

namespace panto {
namespace {

struct Span {
  size_t off, len;
};

bool assemble(const uint8_t* d, const std::vector<Span>& spans, OwnedBytes* out) {
  size_t total = 0;
  for (const Span& s : spans) total += s.len;
  if (!alloc_owned(total, out)) return false;
  uint8_t* w = out->data;
  for (const Span& s : spans) {
    std::memcpy(w, d + s.off, s.len);
    w += s.len;
  }
  return true;
}

void push(std::vector<Span>* spans, size_t off, size_t len) {
  if (len == 0) return;
  if (!spans->empty() && spans->back().off + spans->back().len == off) spans->back().len += len;
  else spans->push_back({off, len});
}

bool jpeg_drop(const uint8_t* d, const JpegSegment& s) {
  uint8_t m = s.marker;
  if (m == 0xFE || m == 0xE1 || (m >= 0xE3 && m <= 0xED) || m == 0xEF) return true;
  if (m == 0xE2) {
    size_t hdr = s.size >= 4 ? 4 : s.size;
    return !(s.size >= hdr + 12 && std::memcmp(d + s.offset + hdr, "ICC_PROFILE\0", 12) == 0);
  }
  return false;
}

}  // namespace

bool png_chunk_damaged_ancillary(const uint8_t* chunk, uint32_t n) {
  return (chunk[4] & 0x20) != 0 && libdeflate_crc32(0, chunk + 4, size_t(n) + 4) != be32(chunk + 8 + n);
}

Status png_validate(const uint8_t* d, size_t len, int* damaged_ancillary) {
  const MediaType T = MediaType::Png;
  size_t i = 8;
  bool idat = false;
  if (damaged_ancillary) *damaged_ancillary = 0;
  while (true) {
    if (i + 12 > len) return Status::Err("ERR_CORRUPT_MEDIA", "image/png is corrupt: truncated (no IEND chunk)", T);
    uint32_t n = be32(d + i);
    if (n > len - i - 12) return Status::Err("ERR_CORRUPT_MEDIA", "image/png is corrupt: truncated chunk", T);
    uint32_t crc = libdeflate_crc32(0, d + i + 4, size_t(n) + 4);
    if (crc != be32(d + i + 8 + n)) {
      // Ancillary chunks (lower-case first letter) are discarded when damaged, as libpng does; critical ones are not.
      if (!(d[i + 4] & 0x20))
        return Status::Err("ERR_CORRUPT_MEDIA",
                           "image/png is corrupt: CRC mismatch in the " + std::string(reinterpret_cast<const char*>(d + i + 4), 4) +
                               " chunk",
                           T);
      if (damaged_ancillary) ++*damaged_ancillary;
    }
    if (!std::memcmp(d + i + 4, "IDAT", 4)) idat = true;
    if (!std::memcmp(d + i + 4, "IEND", 4)) break;
    i += 12 + size_t(n);
  }
  if (!idat) return Status::Err("ERR_CORRUPT_MEDIA", "image/png is corrupt: no image data", T);
  return Status::Ok();
}

bool strip_metadata(MediaType t, const uint8_t* d, size_t len, OwnedBytes* out, Status* err, bool privacy) {
  if (!privacy && t != MediaType::Png) return false;
  std::vector<Span> spans;
  bool dropped = false;
  if (t == MediaType::Jpeg) {
    JpegLayout l;
    Status s = jpeg_walk(d, len, true, &l);
    if (!s.ok()) {
      *err = s;
      return false;
    }
    push(&spans, 0, 2);
    for (const JpegSegment& seg : l.header_segments) {
      if (jpeg_drop(d, seg)) dropped = true;
      else push(&spans, seg.offset, seg.size);
    }
    push(&spans, l.first_sos, l.end - l.first_sos);
    if (l.end < len) dropped = true;
  } else if (t == MediaType::Png) {
    push(&spans, 0, 8);
    for (size_t i = 8; i + 12 <= len;) {
      uint32_t n = be32(d + i);
      const uint8_t* type = d + i + 4;
      size_t size = 12 + size_t(n);
      const bool damaged = n <= len - i - 12 && png_chunk_damaged_ancillary(d + i, n);
      if (damaged || (privacy && (!std::memcmp(type, "tEXt", 4) || !std::memcmp(type, "zTXt", 4) ||
                                  !std::memcmp(type, "iTXt", 4) || !std::memcmp(type, "eXIf", 4) ||
                                  !std::memcmp(type, "tIME", 4))))
        dropped = true;
      else push(&spans, i, size);
      i += size;
      if (!std::memcmp(type, "IEND", 4)) {
        if (i < len) dropped = true;
        break;
      }
    }
  } else if (t == MediaType::Webp) {
    if (len < 30 || std::memcmp(d + 12, "VP8X", 4) != 0) return false;
    size_t riff_end = std::min<size_t>(len, size_t(le32(d + 4)) + 8);
    push(&spans, 0, 12);
    for (size_t i = 12; i + 8 <= riff_end;) {
      uint32_t n = le32(d + i + 4);
      size_t size = 8 + size_t(n) + (n & 1);
      if (size > riff_end - i) size = riff_end - i;
      if (!std::memcmp(d + i, "EXIF", 4) || !std::memcmp(d + i, "XMP ", 4)) dropped = true;
      else push(&spans, i, size);
      i += size;
    }
    if (!dropped) return false;
    if (!assemble(d, spans, out)) {
      *err = Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while stripping metadata", t);
      return false;
    }
    uint32_t riff = uint32_t(out->size - 8);
    out->data[4] = uint8_t(riff);
    out->data[5] = uint8_t(riff >> 8);
    out->data[6] = uint8_t(riff >> 16);
    out->data[7] = uint8_t(riff >> 24);
    out->data[20] &= uint8_t(~0x0C);  // VP8X flags: clear EXIF (0x08) and XMP (0x04)
    return true;
  }
  if (!dropped) return false;
  if (!assemble(d, spans, out)) {
    *err = Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while stripping metadata", t);
    return false;
  }
  return true;
}

}  // namespace panto
