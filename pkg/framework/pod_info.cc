#include "pkg/framework/pod_info.h"

namespace berth::framework {
namespace {

void collectHostPorts(const std::vector<api::Container>& containers, bool sidecarsOnly,
                      std::vector<HostPort>& out) {
  for (const auto& c : containers) {
    if (sidecarsOnly && c.restartPolicy != "Always") continue;
    for (const auto& p : c.ports) {
      if (p.hostPort <= 0) continue;
      out.push_back(HostPort{p.hostIP.empty() ? "0.0.0.0" : p.hostIP,
                             p.protocol.empty() ? "TCP" : p.protocol, p.hostPort});
    }
  }
}

}  // namespace

PodInfo::PodInfo(api::PodPtr p) : pod(std::move(p)) {
  requests = computePodRequests(*pod, /*nonZero=*/false);
  nonZeroRequests = computePodRequests(*pod, /*nonZero=*/true);
  // Sidecars keep running, so their host ports stay taken like those of regular containers.
  collectHostPorts(pod->spec.initContainers, /*sidecarsOnly=*/true, hostPorts);
  collectHostPorts(pod->spec.containers, /*sidecarsOnly=*/false, hostPorts);
  const auto& a = pod->spec.affinity;
  if (a && (a->podAffinity || a->podAntiAffinity)) {
    affinity = std::make_shared<const PodAffinityTerms>(PodAffinityTerms::compile(*pod));
  }
}

const PodAffinityTerms& PodInfo::affinityTerms() const {
  static const PodAffinityTerms kNone;
  return affinity ? *affinity : kNone;
}

}  // namespace berth::framework
