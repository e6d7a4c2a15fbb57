// DefaultPreemptionArgs as in kube-scheduler's v1 types, defaults.go and validation_pluginargs.go.

#include "pkg/plugins/defaultpreemption/args.h"

namespace berth::plugins::defaultpreemption {

void decodeDefaultPreemptionArgs(config::Decoder& d, const config::Json& j, const std::string& path,
                                 DefaultPreemptionArgs& out) {
  std::vector<config::Decoder::Field> fields = config::typeMetaFields(d, "DefaultPreemptionArgs");
  fields.push_back(
      {"minCandidateNodesPercentage", [&](const config::Json& v, const std::string& p) {
         if (auto n = d.int32(v, p)) out.minCandidateNodesPercentage = *n;
       }});
  fields.push_back({"minCandidateNodesAbsolute", [&](const config::Json& v, const std::string& p) {
                      if (auto n = d.int32(v, p)) out.minCandidateNodesAbsolute = *n;
                    }});
  d.object(j, path, fields);
  if (d.failed()) return;
  const std::string percentagePath = config::child(path, "minCandidateNodesPercentage");
  const std::string absolutePath = config::child(path, "minCandidateNodesAbsolute");
  const std::string percentage = std::to_string(out.minCandidateNodesPercentage);
  const std::string absolute = std::to_string(out.minCandidateNodesAbsolute);
  if (out.minCandidateNodesPercentage < 0 || out.minCandidateNodesPercentage > 100) {
    d.fail(percentagePath, "not in valid range [0, 100], got " + percentage);
  } else if (out.minCandidateNodesAbsolute < 0) {
    d.fail(absolutePath, "not in valid range [0, inf), got " + absolute);
  } else if (out.minCandidateNodesPercentage == 0 && out.minCandidateNodesAbsolute == 0) {
    d.fail(percentagePath,
           "cannot be zero at the same time as minCandidateNodesAbsolute, got " + percentage);
  }
}

}  // namespace berth::plugins::defaultpreemption
