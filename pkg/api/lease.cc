#include "pkg/api/lease.h"

#include <climits>
#include <string>
#include <utility>

#include "pkg/api/decode.h"

namespace berth::api {
namespace {

using json = nlohmann::json;

util::Result<int> decodeInt32(const json& spec, const char* field) {
  const auto it = spec.find(field);
  if (it == spec.end() || it->is_null()) return 0;
  if (!it->is_number_integer() || *it < INT_MIN || *it > INT_MAX) {
    return util::invalidArgument(std::string("spec.") + field + ": not an int32: " + it->dump());
  }
  return it->get<int>();
}

util::Result<std::optional<Timestamp>> decodeMicroTime(const json& spec, const char* field) {
  const auto it = spec.find(field);
  if (it == spec.end() || it->is_null()) return std::optional<Timestamp>();
  if (!it->is_string()) {
    return util::invalidArgument(std::string("spec.") + field + ": not a timestamp: " + it->dump());
  }
  auto t = parseTimestamp(it->get<std::string>());
  if (!t) return t.error().wrap(std::string("spec.") + field);
  return std::optional<Timestamp>(*t);
}

}  // namespace

json encodeLeaseSpec(const LeaseSpec& spec) {
  json out = {{"holderIdentity", spec.holderIdentity},
              {"leaseDurationSeconds", spec.leaseDurationSeconds},
              {"leaseTransitions", spec.leaseTransitions}};
  if (spec.acquireTime) out["acquireTime"] = formatMicroTimestamp(*spec.acquireTime);
  if (spec.renewTime) out["renewTime"] = formatMicroTimestamp(*spec.renewTime);
  return out;
}

util::Result<LeaseSpec> decodeLeaseSpec(const json& spec) {
  LeaseSpec out;
  if (spec.is_null()) return out;
  if (!spec.is_object()) return util::invalidArgument("spec: not an object");
  if (auto it = spec.find("holderIdentity"); it != spec.end() && !it->is_null()) {
    if (!it->is_string()) return util::invalidArgument("spec.holderIdentity: not a string");
    out.holderIdentity = it->get<std::string>();
  }
  auto duration = decodeInt32(spec, "leaseDurationSeconds");
  if (!duration) return duration.error();
  out.leaseDurationSeconds = *duration;
  auto acquire = decodeMicroTime(spec, "acquireTime");
  if (!acquire) return acquire.error();
  out.acquireTime = *acquire;
  auto renew = decodeMicroTime(spec, "renewTime");
  if (!renew) return renew.error();
  out.renewTime = *renew;
  auto transitions = decodeInt32(spec, "leaseTransitions");
  if (!transitions) return transitions.error();
  out.leaseTransitions = *transitions;
  return out;
}

json encodeLease(const Lease& lease) {
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", {{"namespace", lease.namespace_}, {"name", lease.name}}},
          {"spec", encodeLeaseSpec(lease.spec)}};
}

}  // namespace berth::api
