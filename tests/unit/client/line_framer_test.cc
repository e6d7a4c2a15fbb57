#include "pkg/client/line_framer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::client {
namespace {

// Every line the framer gives for `blocks` appended one by one, then "END" or "FAIL: message".
std::vector<std::string> frameAll(size_t maxLineBytes, const std::vector<std::string>& blocks) {
  LineFramer framer(maxLineBytes);
  std::vector<std::string> out;
  size_t next = 0;
  while (true) {
    auto line = framer.next();
    if (!line.ok()) {
      out.push_back("FAIL: " + line.error().status.message);
      return out;
    }
    if (line->has_value()) {
      out.emplace_back(**line);
      continue;
    }
    if (next == blocks.size()) {
      const auto end = framer.finish();
      out.push_back(end.ok() ? "END" : "FAIL: " + end.error().status.message);
      return out;
    }
    framer.append(blocks[next++]);
  }
}

TEST(LineFramer, SplitsLinesAcrossBlocksAndSkipsBlankOnes) {
  EXPECT_EQ(frameAll(100, {"{\"a\"", ":1}\n\n  \r\n{\"b\":2}\r", "\n", "\t\n"}),
            (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}\r", "END"}));
}

TEST(LineFramer, FailsWhenTheBodyEndsInsideALine) {
  EXPECT_EQ(frameAll(100, {"{\"a\":1}\n{\"b\""}),
            (std::vector<std::string>{"{\"a\":1}", "FAIL: watch stream ended inside an event"}));
  EXPECT_EQ(frameAll(100, {"{\"a\":1}\n \r"}), (std::vector<std::string>{"{\"a\":1}", "END"}));
}

TEST(LineFramer, RejectsLinesOverTheLimitBeforeTheirNewlineArrives) {
  EXPECT_EQ(frameAll(4, {"1234\n12345\n"}),
            (std::vector<std::string>{"1234", "FAIL: watch event longer than 4 bytes"}));
  // Five bytes without a newline already fail: the buffer never holds more than a line's worth.
  EXPECT_EQ(frameAll(4, {"123", "45", "\n"}),
            (std::vector<std::string>{"FAIL: watch event longer than 4 bytes"}));
}

}  // namespace
}  // namespace berth::client
