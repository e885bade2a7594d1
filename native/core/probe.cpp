// Header-only probing: dimensions, frames, alpha and EXIF orientation without decoding pixels.
#include <webp/decode.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "internal.h"

namespace panto {
namespace {

Status corrupt(MediaType t, const std::string& why) {
  return Status::Err("ERR_CORRUPT_MEDIA", std::string(mime_of(t)) + " is corrupt: " + why, t);
}

// ---- JPEG ------------------------------------------------------------------------------------------------------

/** EXIF orientation from a raw TIFF structure (PNG eXIf, WebP EXIF, after JPEG's "Exif\0\0"); 1 when absent. */
int tiff_orientation(const uint8_t* t, size_t tn) {
  if (tn < 8) return 1;
  bool le;
  if (t[0] == 'I' && t[1] == 'I') le = true;
  else if (t[0] == 'M' && t[1] == 'M') le = false;
  else return 1;
  auto u16 = [&](size_t o) { return le ? le16(t + o) : be16(t + o); };
  auto u32 = [&](size_t o) { return le ? le32(t + o) : be32(t + o); };
  if (u16(2) != 42) return 1;
  uint32_t ifd = u32(4);
  if (ifd < 8 || ifd > tn - 2) return 1;
  uint16_t count = u16(ifd);
  for (uint32_t i = 0; i < count; i++) {
    size_t e = size_t(ifd) + 2 + size_t(i) * 12;
    if (e + 12 > tn) return 1;
    if (u16(e) == 0x0112) {
      uint16_t type = u16(e + 2);
      uint16_t v = type == 3 ? u16(e + 8) : (type == 4 ? uint16_t(u32(e + 8)) : 0);
      return v >= 1 && v <= 8 ? v : 1;
    }
  }
  return 1;
}

/** EXIF orientation from an APP1 "Exif\0\0" payload; 1 when absent or malformed. */
int exif_orientation(const uint8_t* p, size_t n) {
  if (n < 6 + 8 || std::memcmp(p, "Exif\0\0", 6) != 0) return 1;
  return tiff_orientation(p + 6, n - 6);
}

/** Progression state of one walk: what each scan may still send (libjpeg's coef_bits, plus redundancy). */
struct ScanChecker {
  const JpegLayout* l;
  int8_t coef_bits[4][64];  // -1 = not yet sent; else the Al of the last scan that sent it
  bool seen_seq[4] = {false, false, false, false};

  explicit ScanChecker(const JpegLayout* layout) : l(layout) { std::memset(coef_bits, -1, sizeof coef_bits); }

  /** Checks one SOS payload and adds its blocks to the layout's work counter. */
  Status scan(const uint8_t* p, size_t pn, JpegLayout* out) {
    const MediaType T = MediaType::Jpeg;
    if (pn < 1) return corrupt(T, "short SOS segment");
    const int ns = p[0];
    if (ns < 1 || ns > 4 || pn != size_t(1 + 2 * ns + 3)) return corrupt(T, "bad SOS segment length");
    const uint8_t ss = p[1 + 2 * ns], se = p[2 + 2 * ns], ah = p[3 + 2 * ns] >> 4, al = p[3 + 2 * ns] & 15;
    int idx[4];
    uint64_t blocks = 0;
    for (int i = 0; i < ns; i++) {
      idx[i] = -1;
      for (int k = 0; k < l->components; k++)
        if (l->comp[k].id == p[1 + 2 * i]) idx[i] = k;
      if (idx[i] < 0) return corrupt(T, "scan names a component the frame does not have");
      for (int j = 0; j < i; j++)
        if (idx[j] == idx[i]) return corrupt(T, "scan names a component twice");
      blocks += jpeg_component_blocks(*l, idx[i]);
    }
    if (l->progressive) {
      if (ss == 0 ? se != 0 : (se < ss || se > 63 || ns != 1))
        return corrupt(T, "invalid progressive scan (spectral selection " + std::to_string(ss) + ".." +
                              std::to_string(se) + ")");
      if ((ah != 0 && al != ah - 1) || al > 13) return corrupt(T, "invalid successive approximation in a scan");
      for (int i = 0; i < ns; i++) {
        int8_t* bits = coef_bits[idx[i]];
        if (ss != 0 && bits[0] < 0) return corrupt(T, "inconsistent progression (AC scan before the DC scan)");
        for (int k = ss; k <= se; k++) {
          if (ah == 0 ? bits[k] >= 0 : bits[k] != ah)
            return corrupt(T, std::string(ah == 0 ? "redundant" : "inconsistent") +
                                  " progression (coefficient " + std::to_string(k) + " sent out of order)");
          bits[k] = int8_t(al);
        }
      }
    } else {
      for (int i = 0; i < ns; i++) {
        if (seen_seq[idx[i]]) return corrupt(T, "redundant scan (a component appears in two sequential scans)");
        seen_seq[idx[i]] = true;
      }
    }
    out->scans++;
    out->scan_blocks += blocks;
    if (out->scan_blocks > kMaxScanWork * jpeg_total_blocks(*l))
      return corrupt(T, "scans decode more than " + std::to_string(kMaxScanWork) +
                            " times the image's blocks (refused: decoding cost)");
    return Status::Ok();
  }

  static constexpr uint64_t kMaxScanWork = 16;
};

}  // namespace

uint64_t jpeg_component_blocks(const JpegLayout& l, int k) {
  int hmax = 1, vmax = 1;
  for (int i = 0; i < l.components; i++) {
    hmax = std::max<int>(hmax, l.comp[i].h);
    vmax = std::max<int>(vmax, l.comp[i].v);
  }
  const uint64_t mcux = (uint64_t(l.width) + 8 * hmax - 1) / (8 * hmax);
  const uint64_t mcuy = (uint64_t(l.height) + 8 * vmax - 1) / (8 * vmax);
  return mcux * l.comp[k].h * mcuy * l.comp[k].v;
}

uint64_t jpeg_total_blocks(const JpegLayout& l) {
  uint64_t t = 0;
  for (int k = 0; k < l.components; k++) t += jpeg_component_blocks(l, k);
  return t;
}

Status jpeg_walk(const uint8_t* d, size_t len, bool to_eoi, JpegLayout* out) {
  const MediaType T = MediaType::Jpeg;
  if (len < 4 || d[0] != 0xFF || d[1] != 0xD8) return corrupt(T, "missing SOI marker");
  size_t i = 2;
  bool seen_sof = false, seen_exif = false;
  ScanChecker checker(out);
  while (true) {
    // Markers may be preceded by fill bytes 0xFF.
    if (i >= len) return corrupt(T, "truncated before the first scan");
    if (d[i] != 0xFF) return corrupt(T, "expected a marker at offset " + std::to_string(i));
    while (i < len && d[i] == 0xFF) i++;
    if (i >= len) return corrupt(T, "truncated before the first scan");
    uint8_t m = d[i];
    size_t start = i - 1;
    i++;
    if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) continue;  // standalone markers
    if (m == 0xD9) return corrupt(T, "end of image before any scan");
    if (i + 2 > len) return corrupt(T, "truncated segment header");
    uint16_t seglen = be16(d + i);
    if (seglen < 2 || i + seglen > len) return corrupt(T, "segment runs past the end of the data");
    const uint8_t* p = d + i + 2;
    size_t pn = seglen - 2;
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      if (m == 0xC3 || m == 0xC7 || m == 0xCB || m == 0xCF)
        return Status::Err("ERR_UNSUPPORTED_MEDIA", "lossless JPEG is not supported; convert it to PNG or JPEG", T);
      if (m >= 0xC9)
        return Status::Err("ERR_UNSUPPORTED_MEDIA",
                           "arithmetic-coded JPEG is not supported; convert it to a baseline or progressive JPEG", T);
      if (m >= 0xC5)
        return Status::Err("ERR_UNSUPPORTED_MEDIA", "hierarchical JPEG is not supported; convert it to PNG or JPEG", T);
      if (pn < 6) return corrupt(T, "short SOF segment");
      if (p[0] != 8)
        return Status::Err("ERR_UNSUPPORTED_MEDIA",
                           std::to_string(p[0]) + "-bit JPEG is not supported; convert it to an 8-bit JPEG or PNG", T);
      out->height = be16(p + 1);
      out->width = be16(p + 3);
      out->components = p[5];
      if (out->components != 1 && out->components != 3 && out->components != 4)
        return corrupt(T, "unsupported component count " + std::to_string(out->components));
      if (out->width == 0 || out->height == 0) return corrupt(T, "zero width or height in SOF");
      if (pn < 6 + size_t(3 * out->components)) return corrupt(T, "short SOF segment");
      for (int k = 0; k < out->components; k++) {
        JpegComponent& c = out->comp[k];
        c.id = p[6 + 3 * k];
        c.h = p[7 + 3 * k] >> 4;
        c.v = p[7 + 3 * k] & 15;
        if (c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4) return corrupt(T, "invalid sampling factors");
      }
      out->progressive = m == 0xC2;
      seen_sof = true;
    } else if (m == 0xE1 && !seen_exif && pn >= 6 && std::memcmp(p, "Exif\0\0", 6) == 0) {
      seen_exif = true;
      out->orientation = exif_orientation(p, pn);
    }
    if (m == 0xDA) {
      if (!seen_sof) return corrupt(T, "scan before frame header");
      if (to_eoi) {
        Status s = checker.scan(p, pn, out);
        if (!s.ok()) return s;
      }
      out->first_sos = start;
      i += seglen;
      break;
    }
    out->header_segments.push_back({start, size_t(seglen) + (i - start), m});
    i += seglen;
  }
  if (!to_eoi) return Status::Ok();
  // Entropy-coded data: skip to the next marker that is not a stuffed 0xFF00 or a restart marker; continue through
  // further scans (progressive) and tables until EOI. Scans are capped: each one revisits every block, so a small
  // file with thousands of progressive scans would otherwise cost minutes of CPU (libjpeg-turbo caps them too).
  constexpr int kMaxScans = 256;
  int scans = 1;
  while (true) {
    const void* ff = std::memchr(d + i, 0xFF, len - i);
    if (!ff) return corrupt(T, "truncated (no end-of-image marker)");
    i = static_cast<const uint8_t*>(ff) - d;
    if (i + 1 >= len) return corrupt(T, "truncated (no end-of-image marker)");
    uint8_t m = d[i + 1];
    if (m == 0x00 || m == 0xFF || (m >= 0xD0 && m <= 0xD7)) {
      i += m == 0xFF ? 1 : 2;
      continue;
    }
    if (m == 0xD9) {
      out->end = i + 2;
      return Status::Ok();
    }
    // A segment between scans (DHT, DQT, SOS, DRI, APPn, ...).
    if (m == 0xDA && ++scans > kMaxScans)
      return corrupt(T, "more than " + std::to_string(kMaxScans) + " scans (refused: decoding cost)");
    if (i + 4 > len) return corrupt(T, "truncated segment header");
    uint16_t seglen = be16(d + i + 2);
    if (seglen < 2 || i + 2 + seglen > len) return corrupt(T, "segment runs past the end of the data");
    if (m == 0xDA) {
      Status s = checker.scan(d + i + 4, seglen - 2, out);
      if (!s.ok()) return s;
    }
    i += 2 + seglen;
  }
}

namespace {

Status probe_jpeg(const uint8_t* d, size_t len, MediaInfo* out) {
  JpegLayout l;
  Status s = jpeg_walk(d, len, false, &l);
  if (!s.ok()) return s;
  out->width = l.width;
  out->height = l.height;
  out->orientation = l.orientation;
  return Status::Ok();
}

// ---- PNG -------------------------------------------------------------------------------------------------------

Status probe_png(const uint8_t* d, size_t len, MediaInfo* out) {
  const MediaType T = MediaType::Png;
  if (len < 8 + 25) return corrupt(T, "truncated header");
  if (be32(d + 8) != 13 || std::memcmp(d + 12, "IHDR", 4) != 0) return corrupt(T, "first chunk is not IHDR");
  out->width = be32(d + 16);
  out->height = be32(d + 20);
  uint8_t depth = d[24], color = d[25];
  if (out->width == 0 || out->height == 0 || out->width > 0x7FFFFFFF || out->height > 0x7FFFFFFF)
    return corrupt(T, "invalid dimensions");
  bool ok_depth = (color == 0 && (depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16)) ||
                  (color == 3 && (depth == 1 || depth == 2 || depth == 4 || depth == 8)) ||
                  ((color == 2 || color == 4 || color == 6) && (depth == 8 || depth == 16));
  if (!ok_depth) return corrupt(T, "invalid colour type/bit depth");
  out->has_alpha = color == 4 || color == 6;
  // Chunks before the first IDAT: tRNS (alpha) and acTL (APNG frame count).
  size_t i = 8;
  while (i + 12 <= len) {
    uint32_t n = be32(d + i);
    if (n > len - i - 12) break;
    const uint8_t* type = d + i + 4;
    if (!std::memcmp(type, "IDAT", 4)) break;
    if (!std::memcmp(type, "tRNS", 4)) out->has_alpha = true;
    if (!std::memcmp(type, "eXIf", 4)) out->orientation = tiff_orientation(d + i + 8, n);
    if (!std::memcmp(type, "acTL", 4) && n >= 8) {
      uint32_t frames = be32(d + i + 8);
      if (frames >= 1) out->frames = frames;
    }
    i += 12 + size_t(n);
  }
  return Status::Ok();
}

// ---- GIF -------------------------------------------------------------------------------------------------------

/** Skips GIF data sub-blocks starting at `i`; false when truncated. */
bool gif_skip_subblocks(const uint8_t* d, size_t len, size_t* i) {
  while (*i < len) {
    uint8_t n = d[*i];
    *i += 1;
    if (n == 0) return true;
    *i += n;
  }
  return false;
}

Status probe_gif(const uint8_t* d, size_t len, MediaInfo* out) {
  const MediaType T = MediaType::Gif;
  if (len < 13) return corrupt(T, "truncated header");
  out->width = le16(d + 6);
  out->height = le16(d + 8);
  if (out->width == 0 || out->height == 0) return corrupt(T, "zero width or height");
  uint8_t packed = d[10];
  size_t i = 13;
  if (packed & 0x80) i += 3u << ((packed & 7) + 1);
  uint32_t frames = 0;
  bool transparent_first = false;
  // Every block must be complete: a cut inside any block is corrupt (a pass-through must never forward a truncated
  // file). A missing trailer after complete blocks is tolerated, as browsers do.
  while (true) {
    if (i >= len) {
      if (frames == 0) return corrupt(T, "truncated before the first image");
      break;
    }
    uint8_t b = d[i++];
    if (b == 0x3B) break;
    if (b == 0x21) {
      if (i >= len) return corrupt(T, "truncated extension");
      uint8_t label = d[i++];
      if (label == 0xF9 && frames == 0 && i + 2 <= len && d[i] >= 1) transparent_first = (d[i + 1] & 1) != 0;
      if (!gif_skip_subblocks(d, len, &i) || i > len) return corrupt(T, "truncated extension");
    } else if (b == 0x2C) {
      if (i + 9 > len) return corrupt(T, "truncated image descriptor");
      uint16_t fx = le16(d + i), fy = le16(d + i + 2), fw = le16(d + i + 4), fh = le16(d + i + 6);
      uint8_t fp = d[i + 8];
      i += 9;
      if (frames == 0 && (fw == 0 || fh == 0 || uint32_t(fx) + fw > out->width || uint32_t(fy) + fh > out->height))
        return corrupt(T, "first frame lies outside the logical screen");
      if (fp & 0x80) i += 3u << ((fp & 7) + 1);
      i += 1;  // LZW minimum code size
      if (i > len || !gif_skip_subblocks(d, len, &i) || i > len) return corrupt(T, "truncated image data");
      frames++;
    } else {
      return corrupt(T, "unknown block type 0x" + std::to_string(b));
    }
  }
  out->frames = frames;
  out->has_alpha = transparent_first;
  return Status::Ok();
}

// ---- WebP ------------------------------------------------------------------------------------------------------

Status probe_webp(const uint8_t* d, size_t len, MediaInfo* out) {
  const MediaType T = MediaType::Webp;
  WebPBitstreamFeatures f;
  VP8StatusCode rc = WebPGetFeatures(d, len, &f);
  if (rc != VP8_STATUS_OK) return corrupt(T, rc == VP8_STATUS_NOT_ENOUGH_DATA ? "truncated header" : "invalid header");
  if (f.width <= 0 || f.height <= 0) return corrupt(T, "invalid dimensions");
  out->width = uint32_t(f.width);
  out->height = uint32_t(f.height);
  out->has_alpha = f.has_alpha != 0;
  out->frames = 1;
  // VP8X files may carry an EXIF chunk (raw TIFF; some writers keep JPEG's "Exif\0\0" prefix).
  if (len >= 30 && !std::memcmp(d + 12, "VP8X", 4) && (d[20] & 0x08)) {
    size_t riff_end = std::min<size_t>(len, size_t(le32(d + 4)) + 8);
    for (size_t i = 12; i + 8 <= riff_end;) {
      uint32_t n = le32(d + i + 4);
      if (n > riff_end - i - 8) break;
      if (!std::memcmp(d + i, "EXIF", 4)) {
        const uint8_t* x = d + i + 8;
        out->orientation = (n >= 6 && !std::memcmp(x, "Exif\0\0", 6)) ? exif_orientation(x, n) : tiff_orientation(x, n);
        break;
      }
      i += 8 + size_t(n) + (n & 1);
    }
  }
  if (f.has_animation) {
    out->animated = true;
    uint32_t frames = 0;
    size_t riff_end = std::min<size_t>(len, size_t(le32(d + 4)) + 8);
    for (size_t i = 12; i + 8 <= riff_end;) {
      uint32_t n = le32(d + i + 4);
      if (!std::memcmp(d + i, "ANMF", 4)) frames++;
      i += 8 + size_t(n) + (n & 1);
    }
    out->frames = frames > 0 ? frames : 1;
  }
  return Status::Ok();
}

// ---- BMP -------------------------------------------------------------------------------------------------------

Status probe_bmp(const uint8_t* d, size_t len, MediaInfo* out) {
  const MediaType T = MediaType::Bmp;
  if (len < 26) return corrupt(T, "truncated header");
  uint32_t dib = le32(d + 14);
  int64_t w, h;
  uint16_t bpp;
  uint32_t compression = 0;
  if (dib == 12) {
    w = le16(d + 18);
    h = le16(d + 20);
    bpp = le16(d + 24);
  } else {
    if (len < 14 + 20 || dib < 16) return corrupt(T, "truncated header");
    w = int32_t(le32(d + 18));
    h = int32_t(le32(d + 22));
    bpp = le16(d + 28);
    if (dib >= 20) compression = le32(d + 30);
  }
  if (h < 0) h = -h;  // top-down rows
  if (w <= 0 || h <= 0 || w > 0x7FFFFFFF || h > 0x7FFFFFFF) return corrupt(T, "invalid dimensions");
  if (compression == 1 || compression == 2)
    return Status::Err("ERR_UNSUPPORTED_MEDIA", "RLE-compressed BMP is not supported; convert it to PNG", T);
  if (compression == 4 || compression == 5)
    return Status::Err("ERR_UNSUPPORTED_MEDIA", "BMP with embedded JPEG/PNG is not supported; convert it to PNG", T);
  if (compression != 0 && compression != 3 && compression != 6) return corrupt(T, "unknown compression");
  if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
    return corrupt(T, "unsupported bit depth " + std::to_string(bpp));
  out->width = uint32_t(w);
  out->height = uint32_t(h);
  out->has_alpha = bpp == 32;
  return Status::Ok();
}

}  // namespace

Status probe(const uint8_t* d, size_t len, MediaInfo* out) {
  try {
    *out = MediaInfo{};
    MediaType t = sniff(d, len);
    out->type = t;
    switch (t) {
      case MediaType::Jpeg: return probe_jpeg(d, len, out);
      case MediaType::Png: return probe_png(d, len, out);
      case MediaType::Gif: return probe_gif(d, len, out);
      case MediaType::Webp: return probe_webp(d, len, out);
      case MediaType::Bmp: return probe_bmp(d, len, out);
      case MediaType::Pdf: {
        out->frames = 0;
        return pdf_check(d, len, &out->frames);
      }
      case MediaType::Unknown:
        return Status::Err("ERR_UNSUPPORTED_MEDIA",
                           len == 0 ? std::string("input is empty")
                                    : "unrecognised media (not PNG, JPEG, GIF, BMP, WebP or PDF)");
      default:
        return Status::Err("ERR_UNSUPPORTED_MEDIA",
                           std::string(mime_of(t)) + " is not supported; convert it to PNG or JPEG", t);
    }
  } catch (const std::bad_alloc&) {
    return Status::Err("ERR_MEDIA_TOO_LARGE", "out of memory while reading the header");
  } catch (...) {
    return Status::Err("ERR_INTERNAL", "unexpected exception while reading the header");
  }
}

}  // namespace panto
