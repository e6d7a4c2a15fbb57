// The watch-stream line framer the REST client splits chunked watch bodies with, and the event
// decoding of each line. The first byte picks the line limit (RestOptions::maxWatchEventBytes,
// small so that the limit is reached), the second seeds the sizes of the blocks the body
// arrives in; the rest is the body.
// Invariant: how the body is cut into blocks changes nothing: the same lines come out, then the
// same end or failure, as when the body arrives in one block.

#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "pkg/client/line_framer.h"
#include "pkg/client/request.h"

namespace {

namespace client = berth::client;
using berth::fuzz::check;

struct Framed {
  std::vector<std::string> lines;
  std::string end;  // "" for a clean end, else the failure
};

// Reads `body` through a framer, in blocks of the given sizes (cycled); 0 means all at once.
Framed frame(std::string_view body, size_t maxLineBytes, const std::vector<size_t>& blockSizes) {
  client::LineFramer framer(maxLineBytes);
  Framed out;
  size_t offset = 0;
  for (size_t block = 0;; ++block) {
    auto line = framer.next();
    if (!line.ok()) {
      out.end = line.error().status.message;
      return out;
    }
    if (line->has_value()) {
      out.lines.emplace_back(**line);
      static_cast<void>(client::decodeWatchEvent(**line));
      continue;
    }
    if (offset == body.size()) {
      const auto finished = framer.finish();
      out.end = finished.ok() ? "" : finished.error().status.message;
      return out;
    }
    const size_t size = blockSizes.empty() ? body.size() : blockSizes[block % blockSizes.size()];
    const std::string_view piece = body.substr(offset, size);
    framer.append(piece);
    offset += piece.size();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) {
    return 0;
  }
  // 0 stands for the real default, so that long lines are not all failures.
  const size_t maxLineBytes = data[0] == 0 ? 16 * 1024 * 1024 : data[0];
  std::vector<size_t> blockSizes;
  for (uint32_t state = data[1] | 1u, i = 0; i < 8; ++i) {
    state = state * 1103515245u + 12345u;  // any cheap deterministic sequence will do
    blockSizes.push_back(1 + (state >> 16) % 97);
  }
  const std::string_view body = berth::fuzz::asText(data + 2, size - 2);

  const Framed whole = frame(body, maxLineBytes, {});
  const Framed blocks = frame(body, maxLineBytes, blockSizes);
  check(blocks.lines == whole.lines, "block boundaries do not change the lines");
  check(blocks.end == whole.end, "block boundaries do not change how the stream ends", blocks.end);
  for (const std::string& line : whole.lines) {
    check(line.size() <= maxLineBytes, "no line is longer than the limit");
    check(line.find('\n') == std::string::npos, "a line holds no newline");
  }
  return 0;
}
