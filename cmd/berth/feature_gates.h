#pragma once
// --feature-gates as kube-scheduler v1.35 takes it (component-base featuregate): "Name=bool,..."
// (optionally "kube:Name=bool"), for the scheduler's gates. A GA gate is locked to its default, as
// upstream's; a gate berth implements only at one value refuses the other with what berth does; a
// gate berth does not know is an error.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/util/result.h"

namespace berth::cmd {

struct FeatureGate {
  std::string_view name;
  std::string_view stage;  // "ALPHA", "BETA", "GA" in v1.35
  bool upstreamDefault;
  bool locked;           // GA: LockToDefault
  bool berth;            // the value berth implements (upstreamDefault unless `why` says otherwise)
  std::string_view why;  // what berth does instead, when it does not implement the other value
};

// The gates berth knows, by name.
const std::vector<FeatureGate>& knownFeatureGates();

// Parses and checks a --feature-gates value; the gates set, by name.
util::Result<std::map<std::string, bool>> parseFeatureGates(const std::string& value);

// The --feature-gates help text: upstream's sentence and one "Name=true|false (STAGE -
// default=...)" line per gate.
std::string featureGatesHelp();

}  // namespace berth::cmd
