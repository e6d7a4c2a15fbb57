#pragma once
// Structured logging in klog's two formats, so berth's logs read and parse like kube-scheduler's:
//
//   text: I1130 08:00:00.123456   12345 ] "Successfully bound pod to node" pod="default/web-1"
//   node="n1" json: {"ts":1764489600.123456,"v":2,"msg":"Successfully bound pod to
//   node","pod":"default/web-1",...}
//
// A message is a constant sentence plus key/value fields (klog.InfoS). `--v N` enables info
// messages of verbosity <= N, as klog's V(N); errors and warnings always print. Lines go to stderr
// through spdlog; each call writes one whole line, so lines from threads never interleave.

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::log {

enum class Format { Text, Json };

struct Field {
  std::string_view key;
  nlohmann::json value;
};

// "text" or "json"; anything else is an error naming the flag value.
util::Result<Format> parseFormat(std::string_view text);

// Sets the format and verbosity of every later message (default: text, 0).
void configure(Format format, int verbosity);
int verbosity();
// klog's V(level).Enabled(): worth building an expensive message?
bool enabled(int level);

void info(int level, std::string_view msg, std::initializer_list<Field> fields = {});
void warning(std::string_view msg, std::initializer_list<Field> fields = {});
// `err` is the error's text, rendered as the field "err" (klog.ErrorS).
void error(std::string_view err, std::string_view msg, std::initializer_list<Field> fields = {});

// "namespace/name", or "name" for cluster-scoped objects (klog.KRef).
std::string ref(std::string_view ns, std::string_view name);

// The text-format rendering of one message, without the header: `"msg" k="v" n=3`.
std::string renderText(std::string_view msg, std::initializer_list<Field> fields,
                       std::string_view err = {});

}  // namespace berth::log
