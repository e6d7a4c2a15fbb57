#include "pkg/informer/lister_watcher.h"

#include <utility>

#include "pkg/client/rest.h"

namespace berth::informer {
namespace {

class RestListerWatcher final : public ListerWatcher {
 public:
  RestListerWatcher(client::RestClient& client, client::Resource resource, std::string ns,
                    std::string labelSelector, std::string fieldSelector)
      : client_(client),
        resource_(resource),
        ns_(std::move(ns)),
        label_selector_(std::move(labelSelector)),
        field_selector_(std::move(fieldSelector)) {}

  client::ApiResult<client::ObjectList> list(const client::ListOptions& options,
                                             std::stop_token stop) override {
    client::ListOptions o = options;
    o.labelSelector = label_selector_;
    o.fieldSelector = field_selector_;
    return client_.list(resource_, ns_, o, std::move(stop));
  }

  client::ApiResult<client::WatchStreamPtr> watch(const client::WatchOptions& options,
                                                  std::stop_token stop) override {
    client::WatchOptions o = options;
    o.labelSelector = label_selector_;
    o.fieldSelector = field_selector_;
    return client_.watch(resource_, ns_, o, std::move(stop));
  }

 private:
  client::RestClient& client_;
  const client::Resource resource_;
  const std::string ns_;
  const std::string label_selector_;
  const std::string field_selector_;
};

}  // namespace

ListerWatcherPtr makeListerWatcher(client::RestClient& client, client::Resource resource,
                                   std::string ns, std::string labelSelector,
                                   std::string fieldSelector) {
  return std::make_unique<RestListerWatcher>(client, resource, std::move(ns),
                                             std::move(labelSelector), std::move(fieldSelector));
}

}  // namespace berth::informer
