#include "pkg/apiserver/kubelet_stand_in.h"

#include "pkg/util/sleep.h"

namespace berth::apiserver {

KubeletStandIn::KubeletStandIn(Store& store, std::optional<util::Duration> bound,
                               util::Duration period)
    : store_(store), bound_(bound), period_(period), thread_([this](std::stop_token stop) {
        while (util::sleepFor(period_, stop)) store_.finalizeGracefulDeletions(bound_);
      }) {}

KubeletStandIn::~KubeletStandIn() {
  thread_.request_stop();
  thread_.join();
}

}  // namespace berth::apiserver
