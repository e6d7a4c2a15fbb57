#pragma once
// Private to pkg/config: strict decoding of JSON values into configuration structs. A Decoder keeps
// the first error ("path: problem"); once it has one, every further call is a no-op, so decoding
// code can read field after field without checking each step (Abseil's Status::Update idea).

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/config/internal/text.h"

namespace berth::config::internal {

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

  bool failed() const { return error_.has_value(); }
  // "path: problem", or "problem" when the path is empty.
  const std::string& error() const { return *error_; }
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

  std::optional<std::string> error_;
};

// Typed plugin arguments (pluginConfig[i].args), decoded, defaulted and validated as upstream's
// v1 types and validation_pluginargs.go. `path` is "profiles[0].pluginConfig[1].args".
void decodeNodeResourcesFitArgs(Decoder& d, const Json& j, const std::string& path,
                                NodeResourcesFitArgs& out);
void decodeNodeResourcesBalancedAllocationArgs(Decoder& d, const Json& j, const std::string& path,
                                               NodeResourcesBalancedAllocationArgs& out);
void decodeNodeAffinityArgs(Decoder& d, const Json& j, const std::string& path,
                            NodeAffinityArgs& out);

// Upstream's defaults for arguments not given: cpu and memory with weight 1.
std::vector<ResourceSpec> defaultResources();

}  // namespace berth::config::internal
