#include "cmd/berth/feature_gates.h"

#include <algorithm>

#include "cmd/berth/serving_flags.h"  // splitList

namespace berth::cmd {

const std::vector<FeatureGate>& knownFeatureGates() {
  // Stages and defaults are v1.35's (pkg/features/versioned_kube_features.go).
  static const std::vector<FeatureGate> kGates = {
      {"MatchLabelKeysInPodAffinity", "GA", true, true, true, ""},
      {"MatchLabelKeysInPodTopologySpread", "BETA", true, false, true,
       "berth always merges matchLabelKeys into the spread constraints' selectors"},
      {"NodeInclusionPolicyInPodTopologySpread", "GA", true, true, true, ""},
      {"SchedulerAsyncAPICalls", "BETA", false, false, false,
       "berth has no asynchronous API dispatcher; it binds on its own worker pool"},
      {"SchedulerAsyncPreemption", "BETA", true, false, true,
       "berth always preempts asynchronously: the victims are deleted off the scheduling loop"},
      {"SchedulerPopFromBackoffQ", "BETA", true, false, false,
       "berth pops pods from activeQ only; a pod in backoffQ waits its backoff out"},
      {"SchedulerQueueingHints", "GA", true, true, true, ""},
      {"SidecarContainers", "GA", true, true, true, ""},
  };
  return kGates;
}

util::Result<std::map<std::string, bool>> parseFeatureGates(const std::string& value) {
  std::map<std::string, bool> out;
  for (const std::string& item : splitList(value)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      return util::invalidArgument("missing bool value for " + item);
    }
    std::string name = item.substr(0, eq);
    // The component prefix of `--feature-gates kube:Name=true` (ComponentGlobalsRegistry).
    if (auto colon = name.find(':'); colon != std::string::npos) {
      if (name.substr(0, colon) != "kube") {
        return util::invalidArgument("component not registered: " + name.substr(0, colon));
      }
      name = name.substr(colon + 1);
    }
    const std::string text = item.substr(eq + 1);
    bool enabled = false;
    if (text == "true" || text == "True" || text == "TRUE" || text == "1" || text == "t") {
      enabled = true;
    } else if (text != "false" && text != "False" && text != "FALSE" && text != "0" &&
               text != "f") {
      return util::invalidArgument("invalid value of " + name + "=" + text +
                                   ", err: strconv.ParseBool: parsing \"" + text +
                                   "\": invalid syntax");
    }
    const auto& gates = knownFeatureGates();
    auto gate = std::find_if(gates.begin(), gates.end(),
                             [&](const FeatureGate& g) { return g.name == name; });
    if (gate == gates.end()) {
      return util::invalidArgument("unrecognized feature gate: " + name +
                                   " (berth knows the scheduler's gates listed in --help)");
    }
    if (gate->locked && enabled != gate->upstreamDefault) {
      // component-base's message, word for word.
      return util::invalidArgument("cannot set feature gate " + name + " to " +
                                   (enabled ? "true" : "false") + ", feature is locked to " +
                                   (gate->upstreamDefault ? "true" : "false"));
    }
    if (enabled != gate->berth) {
      return util::invalidArgument("berth implements " + name + "=" +
                                   (gate->berth ? "true" : "false") +
                                   " only: " + std::string(gate->why));
    }
    out[name] = enabled;
  }
  return out;
}

std::string featureGatesHelp() {
  std::string help =
      "Comma-separated list of component:key=value pairs that describe feature gates for "
      "alpha/experimental features of the scheduler. Options are:";
  for (const FeatureGate& g : knownFeatureGates()) {
    help += "\nkube:" + std::string(g.name) + "=true|false (" + std::string(g.stage) +
            " - default=" + (g.upstreamDefault ? "true" : "false") + ")";
    if (g.berth != g.upstreamDefault) {
      help += " (berth: " + std::string(g.berth ? "true" : "false") + " only)";
    }
  }
  return help;
}

}  // namespace berth::cmd
