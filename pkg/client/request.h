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

using Resource = api::ResourceInfo;
using api::kCSIDrivers;
using api::kCSINodes;
using api::kCSIStorageCapacities;
using api::kEvents;
using api::kEventsV1;
using api::kLeases;
using api::kNamespaces;
using api::kNodes;
using api::kPersistentVolumeClaims;
using api::kPersistentVolumes;
using api::kPodDisruptionBudgets;
using api::kPods;
using api::kReplicaSets;
using api::kReplicationControllers;
using api::kServices;
using api::kStatefulSets;
using api::kStorageClasses;

using ListOptions = api::ListOptions;
using WatchOptions = api::WatchOptions;

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
  // The type as sent when it is none of the above (`type` is then meaningless): client-go's
  // reflector skips such events, and so does berth's.
  std::string unknownType{};

  // The object's metadata.resourceVersion ("" when absent).
  std::string resourceVersion() const;
};
// Parses one watch line; a line that is not JSON or not an event is a BadResponse failure. An
// event of an unknown type is returned with unknownType set.
ApiResult<WatchEvent> decodeWatchEvent(std::string_view line);

// An open watch. next() blocks until an event arrives, the stream ends (nullopt: the server closed
// it normally, e.g. after timeoutSeconds) or fails. It returns a Cancelled failure promptly once
// the stop token given when the watch was opened is requested.
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  virtual ApiResult<std::optional<WatchEvent>> next() = 0;
  // The most bytes of the body read ahead of the events returned so far, at any one time: what
  // the stream buffers, for tests of its bound. 0 for a stream that reads no bytes.
  virtual size_t mostBufferedBytes() const { return 0; }
};
using WatchStreamPtr = std::unique_ptr<WatchStream>;

// One page of a list.
using ListPageFn = std::function<ApiResult<ObjectList>(const ListOptions&)>;

// Lists everything by pages of `options.limit` (500 when 0, as client-go's pager), following
// `continue` tokens. The result's resourceVersion is that of the list (all pages are one snapshot).
// As client-go's pager, an expired continue token (410) falls back to one unpaged list. A page
// over the client's response size limit (isResponseTooLarge) is asked again with half the limit,
// down to 1, and the rest of the list keeps the smaller limit; the first shrink is logged.
ApiResult<ObjectList> listAllPages(const ListPageFn& listPage, ListOptions options,
                                   std::stop_token stop = {});

inline constexpr int64_t kDefaultPageSize = 500;

}  // namespace berth::client
