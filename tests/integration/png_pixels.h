// The pixels of a PNG file, for tests that look at a screenshot: 8-bit RGB or RGBA, not
// interlaced (what Chromium's --screenshot writes), decoded with zlib and PNG's five row filters
// (PNG spec, sections 9.2-9.4). Anything else is refused with a reason, never guessed at.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace lockscope::testing {

struct PngPixels {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint32_t> rgb;  // width × height, row by row, 0xRRGGBB (alpha dropped)
  std::string error;          // why the file was not decoded; empty when it was

  uint32_t at(uint32_t x, uint32_t y) const { return rgb[size_t(y) * width + x]; }
};

inline PngPixels decode_png(const std::string& file) {
  PngPixels png;
  const auto be32 = [&](size_t at) {
    return uint32_t(uint8_t(file[at])) << 24 | uint32_t(uint8_t(file[at + 1])) << 16 |
           uint32_t(uint8_t(file[at + 2])) << 8 | uint32_t(uint8_t(file[at + 3]));
  };
  if (file.size() < 33 || file.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 ||
      file.compare(12, 4, "IHDR") != 0) {
    png.error = "not a PNG";
    return png;
  }
  png.width = be32(16);
  png.height = be32(20);
  const int depth = uint8_t(file[24]), colour = uint8_t(file[25]), interlace = uint8_t(file[28]);
  if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0) {
    png.error = "not 8-bit RGB(A) without interlacing";
    return png;
  }
  const size_t channels = colour == 6 ? 4 : 3;
  std::string compressed;
  for (size_t at = 8; at + 12 <= file.size();) {
    const uint32_t length = be32(at);
    if (at + 12 + length > file.size()) break;
    if (file.compare(at + 4, 4, "IDAT") == 0) compressed.append(file, at + 8, length);
    at += 12 + length;
  }
  const size_t stride = png.width * channels;
  std::vector<uint8_t> raw((stride + 1) * png.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()),
                 compressed.size()) != Z_OK ||
      raw_size != raw.size()) {
    png.error = "IDAT does not inflate to width × height";
    return png;
  }
  std::vector<uint8_t> previous(stride, 0), row(stride);
  png.rgb.reserve(size_t(png.width) * png.height);
  for (uint32_t y = 0; y < png.height; ++y) {
    const uint8_t* in = &raw[y * (stride + 1)];
    const int filter = in[0];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= channels ? row[i - channels] : 0, b = previous[i];
      const int c = i >= channels ? previous[i - channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) / 2;
          break;
        case 4: {  // Paeth
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          break;
      }
      row[i] = uint8_t(in[1 + i] + predictor);
    }
    for (size_t x = 0; x < png.width; ++x) {
      const uint8_t* p = &row[x * channels];
      png.rgb.push_back(uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]);
    }
    previous.swap(row);
  }
  return png;
}

}  // namespace lockscope::testing
