// VolumeBindingArgs as in kube-scheduler's v1 types, defaults.go and validation_pluginargs.go.

#include "pkg/plugins/volumebinding/args.h"

namespace berth::plugins::volumebinding {

void decodeVolumeBindingArgs(config::Decoder& d, const config::Json& j, const std::string& path,
                             VolumeBindingArgs& out) {
  std::vector<config::Decoder::Field> fields = config::typeMetaFields(d, "VolumeBindingArgs");
  fields.push_back({"bindTimeoutSeconds", [&](const config::Json& v, const std::string& p) {
                      if (auto n = d.int64(v, p)) out.bindTimeoutSeconds = *n;
                    }});
  // Accepted for compatibility; berth does not score volumes.
  fields.push_back({"shape", [](const config::Json&, const std::string&) {}});
  d.object(j, path, fields);
  if (d.failed()) return;
  if (out.bindTimeoutSeconds < 0) {
    d.fail(config::child(path, "bindTimeoutSeconds"),
           "Invalid value: " + std::to_string(out.bindTimeoutSeconds) +
               ": invalid BindTimeoutSeconds, should not be a negative value");
  }
}

}  // namespace berth::plugins::volumebinding
