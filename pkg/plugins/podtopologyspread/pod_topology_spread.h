#pragma once
// PodTopologySpread: spreads pods over topology domains (nodes sharing a label's value) as their
// topologySpreadConstraints ask. DoNotSchedule constraints filter nodes by skew (the domain's
// matching pods, plus the pod itself, minus the global minimum); ScheduleAnyway constraints score
// nodes with fewer matching pods higher. Pods without constraints get the profile's defaults
// (upstream's system defaults: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway) over the pods
// of their Services and controller. It reads every node, so it is not nodeLocal().

#include "pkg/framework/handle.h"
#include "pkg/framework/runtime/framework.h"
#include "pkg/plugins/podtopologyspread/args.h"

namespace berth::plugins::podtopologyspread {

inline constexpr std::string_view kErrReasonConstraintsNotMatch =
    "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view kErrReasonNodeLabelNotMatch =
    "node(s) didn't match pod topology spread constraints (missing required label)";

// `args` as decodePodTopologySpreadArgs leaves them; the handle's objects (if any) must outlive the
// plugin.
util::Result<framework::PluginPtr> newPodTopologySpread(const PodTopologySpreadArgs& args,
                                                        const framework::Handle& handle);

}  // namespace berth::plugins::podtopologyspread
