#pragma once
// Structured logging in kube-scheduler's two formats, so berth's logs read and parse like
// klog's and component-base's:
//
//   text: I1201 14:36:27.788248   16336 schedule_one.cc:286] "Successfully bound pod to node"
//         pod="default/web-1" node="n1"
//   json: {"ts":1764599787788.248,"caller":"scheduler/schedule_one.cc:286","msg":"Successfully
//         bound pod to node","v":2,"pod":{"name":"web-1","namespace":"default"},"node":"n1"}
//
// A message is a constant sentence plus key/value fields (klog.InfoS), kept in call order. The
// call site (file:line) is a default argument, so call sites stay `log::info(2, "msg", {{"k",
// v}})`. `--v N` enables info messages of verbosity <= N, as klog's V(N), and `--vmodule` raises it
// per file; errors and warnings always print. Each message is one write of one whole line to
// stderr, so lines from threads never interleave.

#include <chrono>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "pkg/util/result.h"

namespace berth::log {

enum class Format { Text, Json };
enum class Severity : char { Info = 'I', Warning = 'W', Error = 'E' };

// A call site. std::source_location would do, but clang 14 cannot build libstdc++'s; the
// builtins, as default arguments, name the caller in both compilers.
struct Location {
  const char* file = "";
  int line = 0;
  static constexpr Location here(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return Location{file, line};
  }
};

// klog.KObj / klog.KRef: written "namespace/name" in text and {"name":..,"namespace":..} in JSON;
// the namespace is omitted for cluster-scoped objects.
struct ObjectRef {
  std::string namespace_;
  std::string name;
  // "namespace/name", or "name".
  std::string str() const;
};
ObjectRef kobj(std::string_view ns, std::string_view name);
// An API object's reference (anything with metadata.namespace_ and metadata.name).
template <typename Object>
ObjectRef kobj(const Object& object) {
  return kobj(object.metadata.namespace_, object.metadata.name);
}

struct Field {
  Field(std::string_view k, nlohmann::json v) : key(k), value(std::move(v)) {}
  Field(std::string_view k, const ObjectRef& ref);

  std::string_view key;
  nlohmann::json value;
  bool objectRef = false;  // value is {"name", "namespace"}; text writes it as "namespace/name"
};
using Fields = std::initializer_list<Field>;

// "text" or "json"; anything else is an error naming the flag value.
util::Result<Format> parseFormat(std::string_view text);

// Sets the format and verbosity of every later message (default: text, 0). `berth run`,
// `apiserver` and `demo` call it once, before their threads start.
void configure(Format format, int verbosity);
// klog's --vmodule: "pattern=N,..." where pattern is a glob over a source file's base name without
// its extension ("schedule_one", "reflector*"), and N the verbosity for the files it matches. The
// first matching pattern wins; an empty value clears it. Errors read as klog's.
util::Result<void> setVModule(std::string_view spec);
int verbosity();
// klog's V(level).Enabled() at the call site: worth building an expensive message?
bool enabled(int level, Location where = Location::here());

void info(int level, std::string_view msg, Fields fields = {}, Location where = Location::here());
void warning(std::string_view msg, Fields fields = {}, Location where = Location::here());
// `err` is the error's text, rendered as the field "err" (klog.ErrorS).
void error(std::string_view err, std::string_view msg, Fields fields = {},
           Location where = Location::here());

// "namespace/name", or "name" for cluster-scoped objects (klog.KRef's text).
std::string ref(std::string_view ns, std::string_view name);

// One message, as the formats render it. It borrows its strings and fields: build it where it is
// formatted (an initializer_list's array ends with the full expression that made it).
struct Record {
  Severity severity = Severity::Info;
  int v = 0;
  std::string_view msg;
  std::string_view err;  // errors only
  Fields fields;
  Location where;
  std::chrono::system_clock::time_point time;
  int pid = 0;
};
// The whole line, with its newline. Text uses the local time zone, as klog.
std::string formatRecord(Format format, const Record& record);

// The text-format rendering of one message, without the header: `"msg" k="v" n=3`.
std::string renderText(std::string_view msg, Fields fields, std::string_view err = {});

// Where lines go (stderr unless set); set before threads start, or to capture lines in tests. An
// empty function restores stderr.
using Sink = std::function<void(std::string_view line)>;
void setSink(Sink sink);

}  // namespace berth::log
