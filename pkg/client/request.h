#pragma once
// What a client call addresses and asks for, independent of the transport: resources as the API
// server's paths name them (/api/v1/namespaces/NS/pods/NAME/binding), list and watch options as
// their query parameters, watch events, and the pager that follows `continue` tokens. The
// informer is written against these (and ListerWatcher), so it is tested without a server.

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pkg/api/meta.h"
#include "pkg/client/failure.h"

namespace berth::client {

// A resource type: group ("" for core), version and plural name, and whether it is namespaced.
struct Resource {
  std::string group;
  std::string version;
  std::string name;
  bool namespaced = true;

  // "/api/v1/namespaces/NS/pods/NAME/SUB", or "/apis/GROUP/VERSION/..."; an empty `ns` addresses
  // every namespace (list and watch), an empty `name` the collection.
  std::string path(std::string_view ns = {}, std::string_view name = {},
                   std::string_view subresource = {}) const;
};

inline const Resource kPods{"", "v1", "pods", true};
inline const Resource kNodes{"", "v1", "nodes", false};
inline const Resource kEvents{"", "v1", "events", true};
inline const Resource kEventsV1{"events.k8s.io", "v1", "events", true};
inline const Resource kLeases{"coordination.k8s.io", "v1", "leases", true};

struct ListOptions {
  std::string labelSelector{};
  std::string fieldSelector{};
  std::string resourceVersion{};  // "" reads the latest state (a consistent read)
  int64_t limit = 0;              // 0: no paging
  std::string continueToken{};    // `continue` from the previous page
};

struct WatchOptions {
  std::string labelSelector{};
  std::string fieldSelector{};
  std::string resourceVersion{};
  // The server ends the watch after this long (client-go's reflector picks 5-10 minutes at random
  // so watches do not all restart together); 0 leaves it to the server.
  int64_t timeoutSeconds = 0;
  bool allowWatchBookmarks = true;
};

// The parameters as a query string, "?labelSelector=a%3Db&limit=500", percent-encoded.
std::string queryString(const ListOptions& options);
std::string queryString(const WatchOptions& options);

// A JSON list response's items and metadata.
struct ObjectList {
  std::vector<nlohmann::json> items{};
  std::string resourceVersion{};
  std::string continueToken{};
};
// Reads {"metadata":{"resourceVersion","continue"},"items":[...]}.
ApiResult<ObjectList> decodeList(nlohmann::json body);

// One line of a watch stream: {"type":"ADDED","object":{...}}.
// clang-tidy cannot see that nlohmann::json's move constructor never throws.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct WatchEvent {
  using Type = api::WatchEventType;
  Type type = Type::Added;
  nlohmann::json object;  // for Error, a metav1.Status

  // The object's metadata.resourceVersion ("" when absent).
  std::string resourceVersion() const;
};
// Parses one watch line; a line that is not JSON or not an event is a BadResponse failure.
ApiResult<WatchEvent> decodeWatchEvent(std::string_view line);

// An open watch. next() blocks until an event arrives, the stream ends (nullopt: the server closed
// it normally, e.g. after timeoutSeconds) or fails. It returns a Cancelled failure promptly once
// the stop token given when the watch was opened is requested.
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  virtual ApiResult<std::optional<WatchEvent>> next() = 0;
};
using WatchStreamPtr = std::unique_ptr<WatchStream>;

// One page of a list.
using ListPageFn = std::function<ApiResult<ObjectList>(const ListOptions&)>;

// Lists everything by pages of `options.limit` (500 when 0, as client-go's pager), following
// `continue` tokens. The result's resourceVersion is that of the list (all pages are one snapshot).
// As client-go's pager, an expired continue token (410) falls back to one unpaged list.
ApiResult<ObjectList> listAllPages(const ListPageFn& listPage, ListOptions options,
                                   std::stop_token stop = {});

inline constexpr int64_t kDefaultPageSize = 500;

}  // namespace berth::client
