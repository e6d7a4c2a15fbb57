#pragma once
// KubeletStandIn: the one part of a kubelet the embedded API server needs. kube-apiserver deletes a
// running pod gracefully: it gets a deletionTimestamp and stays until its node's kubelet has
// stopped it and confirms the deletion. The embedded server has no kubelets, so `berth apiserver`
// and `berth demo` run this instead: it finalizes each graceful deletion once its grace period is
// over, or sooner with a bound (a demo need not wait 30 seconds for a preempted pod). The store's
// own tests run without it, so a terminating pod stays until they finalize it.

#include <chrono>
#include <optional>
#include <thread>

#include "pkg/apiserver/store.h"
#include "pkg/util/clock.h"

namespace berth::apiserver {

class KubeletStandIn {
 public:
  // Checks every `period`; `bound`, if set, caps how long any deletion waits.
  KubeletStandIn(Store& store, std::optional<util::Duration> bound,
                 util::Duration period = std::chrono::milliseconds(100));
  ~KubeletStandIn();  // stops the thread
  KubeletStandIn(const KubeletStandIn&) = delete;
  KubeletStandIn& operator=(const KubeletStandIn&) = delete;

 private:
  Store& store_;
  std::optional<util::Duration> bound_;
  util::Duration period_;
  std::jthread thread_;  // last: started once the rest is set
};

}  // namespace berth::apiserver
