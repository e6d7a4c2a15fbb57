#pragma once
// InterPodAffinity: required pod affinity and anti-affinity filter nodes, in both directions (the
// incoming pod's terms against the pods already placed, and those pods' required anti-affinity
// against the incoming pod); preferred terms, and existing pods' required affinity weighted by
// hardPodAffinityWeight, score topology domains (upstream's interpodaffinity plugin).

#include <string_view>

#include "pkg/framework/runtime/framework.h"
#include "pkg/plugins/interpodaffinity/args.h"

namespace berth::plugins::interpodaffinity {

inline constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
    "node(s) didn't satisfy existing pods anti-affinity rules";
inline constexpr std::string_view kErrReasonAffinityRulesNotMatch =
    "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch =
    "node(s) didn't match pod anti-affinity rules";

// `args` as decodeInterPodAffinityArgs leaves them; namespaces come from handle.objects.
util::Result<framework::PluginPtr> newInterPodAffinity(const InterPodAffinityArgs& args,
                                                       const framework::Handle& handle);

}  // namespace berth::plugins::interpodaffinity
