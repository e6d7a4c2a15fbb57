// InterPodAffinityArgs as in kube-scheduler's v1 types, defaults.go and validation_pluginargs.go.

#include "pkg/plugins/interpodaffinity/args.h"

namespace berth::plugins::interpodaffinity {

void decodeInterPodAffinityArgs(config::Decoder& d, const config::Json& j, const std::string& path,
                                InterPodAffinityArgs& out) {
  std::vector<config::Decoder::Field> fields = config::typeMetaFields(d, "InterPodAffinityArgs");
  fields.push_back({"hardPodAffinityWeight", [&](const config::Json& v, const std::string& p) {
                      if (auto w = d.int32(v, p)) out.hardPodAffinityWeight = *w;
                    }});
  fields.push_back(
      {"ignorePreferredTermsOfExistingPods", [&](const config::Json& v, const std::string& p) {
         if (auto b = d.boolean(v, p)) out.ignorePreferredTermsOfExistingPods = *b;
       }});
  d.object(j, path, fields);
  if (d.failed()) return;
  if (out.hardPodAffinityWeight < 0 || out.hardPodAffinityWeight > kMaxHardPodAffinityWeight) {
    d.fail(config::child(path, "hardPodAffinityWeight"),
           "not in valid range [0, " + std::to_string(kMaxHardPodAffinityWeight) + "], got " +
               std::to_string(out.hardPodAffinityWeight));
  }
}

}  // namespace berth::plugins::interpodaffinity
