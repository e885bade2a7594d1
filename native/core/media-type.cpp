// Media types: magic-number sniffing and MIME names.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "media-core.h"

namespace panto {

const char* mime_of(MediaType t) {
  switch (t) {
    case MediaType::Png: return "image/png";
    case MediaType::Jpeg: return "image/jpeg";
    case MediaType::Gif: return "image/gif";
    case MediaType::Bmp: return "image/bmp";
    case MediaType::Webp: return "image/webp";
    case MediaType::Pdf: return "application/pdf";
    case MediaType::Tiff: return "image/tiff";
    case MediaType::Heic: return "image/heic";
    case MediaType::Avif: return "image/avif";
    case MediaType::Ico: return "image/x-icon";
    case MediaType::Jxl: return "image/jxl";
    case MediaType::Svg: return "image/svg+xml";
    case MediaType::Unknown: break;
  }
  return "";
}

bool is_supported(MediaType t) {
  return t == MediaType::Png || t == MediaType::Jpeg || t == MediaType::Gif || t == MediaType::Bmp ||
         t == MediaType::Webp || t == MediaType::Pdf;
}

MediaType media_type_from_mime(const std::string& mime) {
  std::string m;
  for (char c : mime) {
    if (c == ';') break;
    if (!std::isspace(static_cast<unsigned char>(c))) m.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (m == "image/jpg" || m == "image/pjpeg") return MediaType::Jpeg;
  if (m == "image/x-png") return MediaType::Png;
  if (m == "image/x-ms-bmp" || m == "image/x-bmp") return MediaType::Bmp;
  if (m == "image/vnd.microsoft.icon" || m == "image/ico") return MediaType::Ico;
  if (m == "image/heif") return MediaType::Heic;
  for (MediaType t : {MediaType::Png, MediaType::Jpeg, MediaType::Gif, MediaType::Bmp, MediaType::Webp, MediaType::Pdf,
                      MediaType::Tiff, MediaType::Heic, MediaType::Avif, MediaType::Ico, MediaType::Jxl,
                      MediaType::Svg}) {
    if (m == mime_of(t)) return t;
  }
  return MediaType::Unknown;
}

namespace {

bool starts(const uint8_t* d, size_t len, const char* magic, size_t n) {
  return len >= n && std::memcmp(d, magic, n) == 0;
}

MediaType sniff_ftyp(const uint8_t* d, size_t len) {
  // ISO-BMFF: size(4) 'ftyp' major(4) minor(4) compatible brands...
  if (len < 12 || std::memcmp(d + 4, "ftyp", 4) != 0) return MediaType::Unknown;
  uint32_t box = (uint32_t(d[0]) << 24) | (uint32_t(d[1]) << 16) | (uint32_t(d[2]) << 8) | d[3];
  size_t end = std::min<size_t>(len, box >= 16 && box <= 256 ? box : 16);
  bool heic = false;
  for (size_t off = 8; off + 4 <= end; off += 4) {
    if (off == 12) continue;  // minor version
    const uint8_t* b = d + off;
    if (!std::memcmp(b, "avif", 4) || !std::memcmp(b, "avis", 4)) return MediaType::Avif;
    if (!std::memcmp(b, "heic", 4) || !std::memcmp(b, "heix", 4) || !std::memcmp(b, "heim", 4) ||
        !std::memcmp(b, "heis", 4) || !std::memcmp(b, "hevc", 4) || !std::memcmp(b, "hevx", 4) ||
        !std::memcmp(b, "mif1", 4) || !std::memcmp(b, "msf1", 4))
      heic = true;
  }
  return heic ? MediaType::Heic : MediaType::Unknown;
}

bool looks_like_svg(const uint8_t* d, size_t len) {
  size_t n = std::min<size_t>(len, 1024);
  size_t i = 0;
  if (n >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF) i = 3;
  while (i < n && std::isspace(d[i])) i++;
  if (i >= n || d[i] != '<') return false;
  std::string head(reinterpret_cast<const char*>(d + i), n - i);
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (head.rfind("<svg", 0) == 0) return true;
  if (head.rfind("<?xml", 0) == 0 || head.rfind("<!doctype svg", 0) == 0 || head.rfind("<!--", 0) == 0)
    return head.find("<svg") != std::string::npos;
  return false;
}

}  // namespace

MediaType sniff(const uint8_t* d, size_t len) {
  if (!d || len == 0) return MediaType::Unknown;
  if (starts(d, len, "\x89PNG\r\n\x1a\n", 8)) return MediaType::Png;
  if (len >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return MediaType::Jpeg;
  if (starts(d, len, "GIF87a", 6) || starts(d, len, "GIF89a", 6)) return MediaType::Gif;
  if (len >= 12 && starts(d, len, "RIFF", 4) && std::memcmp(d + 8, "WEBP", 4) == 0) return MediaType::Webp;
  if (starts(d, len, "%PDF-", 5)) return MediaType::Pdf;
  if (len >= 14 && starts(d, len, "BM", 2)) {
    // File header (14) + DIB header size: 12 (core), 40, 52, 56, 64 (OS/2), 108 (v4), 124 (v5).
    if (len < 18) return MediaType::Bmp;
    uint32_t dib = uint32_t(d[14]) | (uint32_t(d[15]) << 8) | (uint32_t(d[16]) << 16) | (uint32_t(d[17]) << 24);
    if (dib == 12 || dib == 16 || dib == 40 || dib == 52 || dib == 56 || dib == 64 || dib == 108 || dib == 124)
      return MediaType::Bmp;
  }
  if (starts(d, len, "II*\0", 4) || starts(d, len, "MM\0*", 4) || starts(d, len, "II+\0", 4) ||
      starts(d, len, "MM\0+", 4))
    return MediaType::Tiff;
  if (MediaType t = sniff_ftyp(d, len); t != MediaType::Unknown) return t;
  if (len >= 2 && d[0] == 0xFF && d[1] == 0x0A) return MediaType::Jxl;
  if (starts(d, len, "\0\0\0\x0CJXL \r\n\x87\n", 12)) return MediaType::Jxl;
  if (len >= 6 && d[0] == 0 && d[1] == 0 && (d[2] == 1 || d[2] == 2) && d[3] == 0 && (d[4] | d[5]) != 0)
    return MediaType::Ico;
  if (looks_like_svg(d, len)) return MediaType::Svg;
  return MediaType::Unknown;
}

}  // namespace panto
