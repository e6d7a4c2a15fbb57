#pragma once
// Strict decoding of JSON values into configuration structs, for pkg/config and for the plugins
// that decode their own args. Every field of a mapping and every item of a list is decoded on its
// own: an error in one does not stop its siblings, so a file's problems are all reported at once
// (upstream's aggregated validation). Within one field the first error wins: once it has one,
// every further call there is a no-op, so decoding code can read part after part without checking
// each step (Abseil's Status::Update idea), and code that checks failed() after decoding a group
// sees whether anything in the group failed.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace berth::config {

// Ordered, so that the first error reported is the first in the file.
using Json = nlohmann::ordered_json;

inline constexpr std::string_view kApiVersion = "kubescheduler.config.k8s.io/v1";

std::string child(const std::string& path, std::string_view key);
std::string index(const std::string& path, size_t i);

class Decoder {
 public:
  using Handler = std::function<void(const Json& value, const std::string& path)>;
  struct Field {
    std::string_view name;
    Handler handler;
  };

  // An error was reported in the current field (or, outside any, at all).
  bool failed() const { return errors_.size() > floor_; }
  // Every error, "path: problem" (or "problem" when the path is empty), in document order.
  const std::vector<std::string>& errors() const { return errors_; }
  // The errors as one message: the error itself, or "N errors:" and one indented line each.
  std::string error() const;
  void fail(const std::string& path, const std::string& problem);

  // Walks a mapping in document order and hands each field to its handler. A field that is not
  // listed is an "unknown field"; one in `unsupported` (a real upstream field) is "not supported by
  // berth". A null value counts as absent, as in Go's JSON decoding.
  void object(const Json& j, const std::string& path, const std::vector<Field>& fields,
              std::span<const std::string_view> unsupported = {});
  void list(const Json& j, const std::string& path, const Handler& each);

  std::optional<std::string> string(const Json& v, const std::string& path);
  std::optional<bool> boolean(const Json& v, const std::string& path);
  std::optional<int32_t> int32(const Json& v, const std::string& path);
  std::optional<int64_t> int64(const Json& v, const std::string& path);
  std::optional<double> number(const Json& v, const std::string& path);
  std::vector<std::string> strings(const Json& v, const std::string& path);

 private:
  std::optional<int64_t> integer(const Json& v, const std::string& path, int64_t min, int64_t max,
                                 std::string_view type);

  // Runs `decode` as a field of its own: it starts without the errors of its siblings.
  template <typename F>
  void isolated(F&& decode) {
    const size_t saved = floor_;
    floor_ = errors_.size();
    decode();
    floor_ = saved;
  }

  std::vector<std::string> errors_;
  size_t floor_ = 0;  // errors before this index belong to an enclosing or earlier field
};

// The apiVersion and kind fields a plugin's args may carry; they must name its args type `kind`.
std::vector<Decoder::Field> typeMetaFields(Decoder& d, const std::string& kind);

// A short rendering of a value for messages: "3", "\"abc\"", "a list".
std::string describe(const Json& value);

// Why `name` is not a Kubernetes qualified name ("example.com/gpu", "cpu"); nullopt when it is.
std::optional<std::string> qualifiedNameProblem(std::string_view name);

// Why `value` is not a valid label value (empty, or up to 63 alphanumerics, '-', '_', '.'); nullopt
// when it is.
std::optional<std::string> labelValueProblem(std::string_view value);

}  // namespace berth::config
