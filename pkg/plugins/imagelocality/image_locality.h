#pragma once
// ImageLocality: prefers nodes that already hold the pod's container images (node
// status.images), each image weighted by its size and by how far it has spread over the cluster,
// so that pods do not pile onto the few nodes that pulled an image first. Score only.

#include <string>
#include <string_view>

#include "pkg/framework/runtime/framework.h"

namespace berth::plugins::imagelocality {

util::Result<framework::PluginPtr> newImageLocality(const framework::Handle&);

// The name the container runtime reports for an image reference: ":latest" is appended when the
// reference has no tag (a ':' after the last '/'); digests and tagged names are kept as they are.
std::string normalizedImageName(std::string_view image);

}  // namespace berth::plugins::imagelocality
