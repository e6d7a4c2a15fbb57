#include "pkg/plugins/imagelocality/image_locality.h"

#include <algorithm>
#include <vector>

#include "pkg/framework/snapshot.h"
#include "pkg/plugins/names.h"

namespace berth::plugins::imagelocality {
namespace {

using framework::Status;

// Bounds of the summed image sizes that map to scores 0 and 100: most registry images are
// between them. The upper bound is per container of the pod.
constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kMinThreshold = 23 * kMiB;
constexpr int64_t kMaxContainerThreshold = 1000 * kMiB;

const framework::StateKey kPreScoreStateKey = framework::makeStateKey("PreScoreImageLocality");

// One distinct image of the pod and its spread over the whole snapshot.
struct ImageSpread {
  std::string name;        // normalized
  int64_t containers = 0;  // how many of the pod's init and app containers run it
  int64_t sizeBytes = 0;   // as the first node (in snapshot order) holding it reports
  int64_t numNodes = 0;
  int64_t scaled = 0;  // sizeBytes scaled by numNodes / all nodes: what one container adds
};

// The pod's images with their spread, counted once per cycle: the score of one node depends on
// every node, which is why the plugin is not node-local.
struct PreScoreState final : framework::StateData {
  std::vector<ImageSpread> images;
  size_t numContainers = 0;
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

// The entry of node.status.images that lists `name`, or nullptr.
const api::ContainerImage* findImage(const api::Node& node, std::string_view name) {
  for (const auto& image : node.status.images) {
    if (std::find(image.names.begin(), image.names.end(), name) != image.names.end()) {
      return &image;
    }
  }
  return nullptr;
}

// Maps the summed, spread-scaled image sizes to [0, kMaxNodeScore].
int64_t priority(int64_t sum, size_t numContainers) {
  if (numContainers == 0) return 0;  // what upstream's formula gives too
  const int64_t maxThreshold = kMaxContainerThreshold * static_cast<int64_t>(numContainers);
  sum = std::clamp(sum, kMinThreshold, maxThreshold);
  return framework::kMaxNodeScore * (sum - kMinThreshold) / (maxThreshold - kMinThreshold);
}

class ImageLocality final : public framework::PreScorePlugin, public framework::ScorePlugin {
 public:
  std::string_view name() const override { return names::kImageLocality; }

  Status preScore(framework::CycleState& state, const framework::PodInfo& pod,
                  const std::vector<const framework::NodeInfo*>&) const override {
    const framework::Snapshot* snapshot = state.snapshot();
    if (snapshot == nullptr) return Status::error("no snapshot in the cycle state");
    auto s = std::make_unique<PreScoreState>();
    auto addContainers = [&](const std::vector<api::Container>& containers) {
      for (const auto& c : containers) {
        std::string image = normalizedImageName(c.image);
        auto it = std::find_if(s->images.begin(), s->images.end(),
                               [&](const ImageSpread& i) { return i.name == image; });
        if (it == s->images.end()) {
          s->images.push_back(ImageSpread{std::move(image), 0, 0, 0, 0});
          it = s->images.end() - 1;
        }
        ++it->containers;
        ++s->numContainers;
      }
    };
    addContainers(pod->spec.initContainers);
    addContainers(pod->spec.containers);
    // The size is the first holder's in snapshot order, so holders are visited in that order.
    std::vector<std::pair<size_t, const api::ContainerImage*>> holders;
    bool heldAnywhere = false;
    for (auto& image : s->images) {
      holders.clear();
      for (const framework::NodeInfo* info : snapshot->nodesWithImages()) {
        if (const api::ContainerImage* held = findImage(*info->node(), image.name)) {
          holders.emplace_back(snapshot->positionOf(*info), held);
        }
      }
      if (holders.empty()) continue;  // held nowhere (also: no nodes at all)
      heldAnywhere = true;
      image.numNodes = static_cast<int64_t>(holders.size());
      image.sizeBytes = std::min_element(holders.begin(), holders.end())->second->sizeBytes;
      // The spread ratio first, then the size, in floating point as upstream.
      const double spread =
          static_cast<double>(image.numNodes) / static_cast<double>(snapshot->numNodes());
      image.scaled = static_cast<int64_t>(static_cast<double>(image.sizeBytes) * spread);
    }
    // No image of the pod on any node: every score would be 0.
    if (!heldAnywhere) return Status::skip();
    state.write(kPreScoreStateKey, std::move(s));
    return Status::success();
  }

  Status score(const framework::CycleState& state, const framework::PodInfo&,
               const framework::NodeInfo& node, int64_t& out) const override {
    const auto* s = state.readAs<PreScoreState>(kPreScoreStateKey);
    if (s == nullptr) return Status::error("reading \"PreScoreImageLocality\" from cycleState");
    int64_t sum = 0;
    if (node.node() != nullptr && !node.node()->status.images.empty()) {
      for (const ImageSpread& image : s->images) {
        if (findImage(*node.node(), image.name) != nullptr) sum += image.containers * image.scaled;
      }
    }
    out = priority(sum, s->numContainers);
    return Status::success();
  }
};

}  // namespace

std::string normalizedImageName(std::string_view image) {
  std::string out(image);
  const size_t colon = image.rfind(':');
  const size_t slash = image.rfind('/');
  // npos compares as the largest value: no ':' means untagged; no '/' means any ':' is a tag.
  const bool tagged =
      colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash);
  if (!tagged) out += ":latest";
  return out;
}

util::Result<framework::PluginPtr> newImageLocality(const framework::Handle&) {
  return framework::PluginPtr(std::make_unique<ImageLocality>());
}

}  // namespace berth::plugins::imagelocality
