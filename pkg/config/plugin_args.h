#pragma once
// The plugins, as the configuration sees them: which exist, and their arguments (a profile's
// pluginConfig). Each plugin's args type, defaults and validation live next to the plugin; the
// configuration keeps the args as given and hands them, by plugin name, to the PluginCatalog it is
// given (the plugin registry implements it; plugins are a higher layer than the configuration).

#include <string>
#include <string_view>

#include "pkg/config/decoder.h"

namespace berth::config {

// One pluginConfig entry, undecoded.
struct PluginConfig {
  std::string name;   // the plugin's
  Json args;          // as in the file (null when the entry has no args)
  std::string field;  // "profiles[0].pluginConfig[1].args"
};

class PluginCatalog {
 public:
  virtual ~PluginCatalog() = default;
  // Whether berth has plugin `name` (a profile may enable only those).
  virtual bool hasPlugin(std::string_view name) const = 0;
  // Whether plugin `name` takes args at all (a pluginConfig entry for any other is an error).
  virtual bool takesArgs(std::string_view name) const = 0;
  // Decodes, defaults and validates `args` of plugin `name` (one that takes args), reporting the
  // first problem on `d` under `path`.
  virtual void checkArgs(std::string_view name, Decoder& d, const Json& args,
                         const std::string& path) const = 0;
};

}  // namespace berth::config
