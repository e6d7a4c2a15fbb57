#pragma once
// coordination.k8s.io/v1 Lease, as leader election reads and writes it: the spec in full
// (client-go's LeaderElectionRecord), the metadata by name only.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pkg/api/types.h"
#include "pkg/util/result.h"

namespace berth::api {

struct LeaseSpec {
  std::string holderIdentity{};
  int leaseDurationSeconds = 0;
  std::optional<Timestamp> acquireTime{};  // MicroTime on the wire
  std::optional<Timestamp> renewTime{};
  int leaseTransitions = 0;
};

struct Lease {
  std::string namespace_{};
  std::string name{};
  LeaseSpec spec{};
};

// As client-go's LeaderElectionRecordToLeaseSpec: every field is set, even an empty holder; the
// times only when known.
nlohmann::json encodeLeaseSpec(const LeaseSpec& spec);
// Absent or null fields are zero; a field of the wrong type is an error naming it ("spec.FIELD").
util::Result<LeaseSpec> decodeLeaseSpec(const nlohmann::json& spec);
// {"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{namespace,name},"spec":{..}}
nlohmann::json encodeLease(const Lease& lease);

}  // namespace berth::api
