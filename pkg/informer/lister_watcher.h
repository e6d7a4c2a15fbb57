#pragma once
// ListerWatcher: the two calls a reflector makes, as client-go's cache.ListerWatcher. The real one
// goes through a RestClient to one resource (optionally one namespace and selectors); tests give
// the reflector a fake that scripts lists, watch streams and failures.

#include <memory>
#include <stop_token>
#include <string>

#include "pkg/client/request.h"

namespace berth::client {
class RestClient;
}

namespace berth::informer {

class ListerWatcher {
 public:
  virtual ~ListerWatcher() = default;
  // One page of the list.
  virtual client::ApiResult<client::ObjectList> list(const client::ListOptions& options,
                                                     std::stop_token stop) = 0;
  // Opens a watch; the stream is cancelled when `stop` is requested.
  virtual client::ApiResult<client::WatchStreamPtr> watch(const client::WatchOptions& options,
                                                          std::stop_token stop) = 0;
};
using ListerWatcherPtr = std::unique_ptr<ListerWatcher>;

// Lists and watches `resource` in `ns` (every namespace when empty) with the given selectors.
// `client` must outlive the returned object.
ListerWatcherPtr makeListerWatcher(client::RestClient& client, client::Resource resource,
                                   std::string ns = {}, std::string labelSelector = {},
                                   std::string fieldSelector = {});

}  // namespace berth::informer
