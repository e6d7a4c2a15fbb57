#pragma once
// ClusterApi: everything the scheduler asks of the API server, declared here so the scheduler
// depends on no client. The daemon implements it over REST (cmd/berth/rest_adapters.h); tests
// implement it in memory and drive whole scheduling cycles without HTTP.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pkg/api/types.h"
#include "pkg/events/recorder.h"
#include "pkg/framework/handle.h"
#include "pkg/util/result.h"

namespace berth::scheduler {

// framework::PodBinder::bind sends exactly one Binding per call and never retries it: a lost
// answer may hide a binding that landed, so the scheduler reads the pod back instead.
// events::Sink writes the Scheduled and FailedScheduling events the profiles' recorders build.
class ClusterApi : public framework::PodBinder, public events::Sink {
 public:
  // The pod as the API server holds it now; nullopt when it no longer exists.
  virtual util::Result<std::optional<api::Pod>> getPod(const std::string& ns,
                                                       const std::string& name) = 0;
  // Strategic-merge patch of pods/NAME/status (the PodScheduled condition). A pod that no longer
  // exists is an error with code NotFound.
  virtual util::Result<void> patchPodStatus(const std::string& ns, const std::string& name,
                                            const nlohmann::json& patch) = 0;
  // Deletes the pod if it still has `uid` (preemption evicts victims through it).
  virtual util::Result<void> deletePod(const std::string& ns, const std::string& name,
                                       const std::string& uid) = 0;
};

}  // namespace berth::scheduler
