// Upstream's schedule_one.go: scheduleOne takes a popped pod through the scheduling cycle, which
// returns the assumed attempt or the one Failure to report, and hands the attempt to the binding
// cycle on the binder pool. Every way out of an assumed pod that is not a binding goes through
// undoAssume.

#include <algorithm>
#include <utility>

#include "pkg/log/log.h"
#include "pkg/scheduler/pod_condition.h"
#include "pkg/scheduler/scheduler.h"

namespace berth::scheduler {
namespace {

using framework::Code;

std::string podRef(const api::Pod& pod) {
  return log::ref(pod.metadata.namespace_, pod.metadata.name);
}

}  // namespace

// One pod from pop to bound or requeued: what the binding cycle needs from the scheduling cycle.
struct Scheduler::Attempt {
  queue::QueuedPod queued;
  Profile* profile = nullptr;
  framework::CycleState state;
  framework::PodInfoPtr assumed;  // the pod with spec.nodeName set, as counted in the cache
  std::string node;
  util::MonotonicTime started{};
  util::Duration decided{};  // pop to the placement decision, as the attempt is reported
  int evaluatedNodes = 0;
  size_t feasibleNodes = 0;
  bool preBind = false;     // some PreBind plugin has work: the volume binder pool runs it
  std::stop_source cancel;  // ends PreBind's waits (shutdown, the pod deleted)
};

void Scheduler::scheduleOne(const queue::QueuedPod& queued) {
  const api::Pod& pod = queued.pod();
  Profile* profile = profileFor(pod);
  if (profile == nullptr || pod.metadata.deletionTimestamp || api::isAssigned(pod)) {
    // Upstream's skipPodSchedule: a pod being deleted is not scheduled.
    queue_->done(pod);
    return;
  }
  if (parkIfPreempting(queued)) return;
  log::info(3, "Attempting to schedule pod", {{"pod", log::kobj(pod)}});
  auto attempt = schedulingCycle(queued, *profile);
  const std::string& profileName = profile->framework->profileName();
  if (!attempt.ok()) {
    Failure failure = attempt.error();
    attempted(pod, profileName, failure.result, failure.took);
    queue::QueuedPod failed = queued;
    failed.unschedulablePlugins = failure.unschedulablePlugins;
    handleFailure(failed, *profile, failure.code, failure.reason, failure.message,
                  std::move(failure.preemption), failure.clearNomination);
    return;
  }
  // scheduler_schedule_attempts_total counts a "scheduled" attempt once bound (confirmBound).
  if (options_.observer) {
    options_.observer->attempted(pod, profileName, "scheduled", (*attempt)->decided);
  }
  // Bind asynchronously: the assumption in the scheduling cycle lets the next pod be scheduled
  // meanwhile.
  std::shared_ptr<Attempt> a = std::move(*attempt);
  a->preBind = profile->framework->hasPreBindWork(a->state, *a->assumed, a->node);
  if (a->preBind) {
    trackVolumeWait(*a);
    volume_binders_.submit([this, a] { bindingCycle(a); });
    return;
  }
  binders_.submit([this, a] { bindingCycle(a); });
}

util::Result<std::shared_ptr<Scheduler::Attempt>, Scheduler::Failure> Scheduler::schedulingCycle(
    const queue::QueuedPod& queued, Profile& profile) {
  auto attempt = std::make_shared<Attempt>();
  attempt->queued = queued;
  attempt->profile = &profile;
  attempt->started = clock_.monotonicNow();
  // Upstream's pluginMetricsSamplePercent: 10% of cycles time every plugin call.
  attempt->state.setRecordPluginMetrics(options_.metrics != nullptr && sampler_() % 100 < 10);
  const framework::runtime::Framework& fw = *profile.framework;

  cache_.updateSnapshot(snapshot_);
  algorithm::ScheduleOutcome outcome =
      algorithm_.schedulePod(fw, attempt->state, *queued.info.podInfo, snapshot_);
  const util::Duration took = clock_.monotonicNow() - attempt->started;
  if (metrics::Metrics* m = options_.metrics) {
    m->schedulingAlgorithm(took);
    for (const auto& point : outcome.extensionPoints) {
      m->extensionPoint(point.point, framework::codeName(point.code), fw.profileName(), point.took);
    }
  }
  if (!outcome.status.isSuccess()) {
    if (!outcome.fitError) {
      return Failure{"error",
                     Code::Error,
                     "SchedulerError",
                     outcome.status.message(),
                     queued.unschedulablePlugins,
                     took};
    }
    framework::FitError& fitError = *outcome.fitError;
    std::optional<framework::PostFilterResult> preemption;
    bool clearNomination = false;
    if (fw.hasPostFilterPlugins()) {
      // Upstream: a pod that fits nowhere may fit once lower-priority pods are evicted.
      if (metrics::Metrics* m = options_.metrics) m->preemptionAttempt();
      const util::MonotonicTime postFilterStart = clock_.monotonicNow();
      framework::PostFilterResult result;
      framework::Status s =
          fw.runPostFilterPlugins(attempt->state, *queued.info.podInfo, fitError.diagnosis, result);
      extensionPoint(config::pointName(config::Point::PostFilter), s.code(), fw.profileName(),
                     postFilterStart);
      fitError.diagnosis.postFilterMsg = s.message();
      if (!s.isSuccess() && !s.isRejected()) {
        log::error(s.message(), "Status after running PostFilter plugins for pod",
                   {{"pod", log::kobj(queued.pod())}});
      }
      clearNomination = !s.isSuccess() && result.clearNomination;
      if (s.isSuccess() && !result.nominatedNode.empty()) preemption = std::move(result);
    }
    return Failure{"unschedulable",
                   outcome.status.code(),
                   "Unschedulable",
                   fitError.message(),
                   fitError.diagnosis.unschedulablePlugins,
                   took,
                   std::move(preemption),
                   clearNomination};
  }
  attempt->decided = took;
  attempt->node = outcome.node;
  attempt->evaluatedNodes = outcome.evaluatedNodes;
  attempt->feasibleNodes = std::max<size_t>(outcome.feasible.size(), 1);

  // Assume: the next cycle must see this pod's requests on its node before the Binding lands.
  auto bound = std::make_shared<api::Pod>(queued.pod());
  bound->spec.nodeName = outcome.node;
  attempt->assumed = framework::makePodInfo(std::move(bound));
  if (auto r = cache_.assumePod(attempt->assumed); !r.ok()) {
    return Failure{
        "error", Code::Error, "SchedulerError", r.error().message, queued.unschedulablePlugins,
        took};
  }
  // Assumed, the pod counts on its node: a nomination would count it twice.
  nominator_.remove(queued.pod());
  const util::MonotonicTime reserveStart = clock_.monotonicNow();
  framework::Status reserved =
      fw.runReservePluginsReserve(attempt->state, *attempt->assumed, attempt->node);
  extensionPoint(config::pointName(config::Point::Reserve), reserved.code(), fw.profileName(),
                 reserveStart);
  if (!reserved.isSuccess()) {
    undoAssume(*attempt);
    return Failure{
        "error", Code::Error, "SchedulerError", reserved.message(), queued.unschedulablePlugins,
        took};
  }
  return attempt;
}

void Scheduler::bindingCycle(const std::shared_ptr<Attempt>& attempt) {
  ++bindings_in_flight_;
  struct Done {
    std::atomic<int64_t>& n;
    ~Done() { --n; }
  } done{bindings_in_flight_};
  const framework::runtime::Framework& fw = *attempt->profile->framework;
  const api::Pod& pod = *attempt->assumed->pod;
  if (attempt->preBind) {
    // Deleted before its wait was tracked: the delete handler found nothing to cancel.
    if (!feeds_.pods->get(podRef(pod))) attempt->cancel.request_stop();
    const util::MonotonicTime preBindStart = clock_.monotonicNow();
    framework::Status pre = fw.runPreBindPlugins(attempt->state, *attempt->assumed, attempt->node);
    extensionPoint(config::pointName(config::Point::PreBind), pre.code(), fw.profileName(),
                   preBindStart);
    untrackVolumeWait(*attempt);
    if (!pre.isSuccess()) {
      undoAssume(*attempt);
      // As upstream: the room the pod held is free again for the pods waiting for it.
      queue_->movePodsOnEvent(framework::events::kAssignedPodDelete, {.oldPod = &pod});
      log::error(pre.message(), "Failed running PreBind plugin",
                 {{"pod", podRef(pod)}, {"node", attempt->node}});
      if (options_.metrics) {
        options_.metrics->scheduleAttempt(fw.profileName(), "error",
                                          clock_.monotonicNow() - attempt->started);
      }
      const Code code = pre.isRejected() ? pre.code() : Code::Error;
      handleFailure(attempt->queued, *attempt->profile, code,
                    pre.isRejected() ? "Unschedulable" : "SchedulerError", pre.message());
      return;
    }
  }
  const util::MonotonicTime bindStart = clock_.monotonicNow();
  framework::Status status = fw.runBindPlugins(attempt->state, *attempt->assumed, attempt->node);
  extensionPoint(config::pointName(config::Point::Bind), status.code(), fw.profileName(),
                 bindStart);
  if (status.isSuccess()) {
    confirmBound(*attempt);
    return;
  }
  // The answer may have been lost after the binding landed, or someone else bound the pod (409):
  // read the pod back rather than sending a second Binding.
  auto current = api_.getPod(pod.metadata.namespace_, pod.metadata.name);
  if (current.ok()) {
    if (!*current) {  // deleted meanwhile: nothing to schedule
      undoAssume(*attempt);
      queue_->done(pod);
      return;
    }
    const std::string& boundTo = (*current)->spec.nodeName;
    if (boundTo == attempt->node) {
      confirmBound(*attempt);
      return;
    }
    if (!boundTo.empty()) {
      undoAssume(*attempt);
      queue_->done(pod);
      log::info(2, "Pod was bound by someone else; dropping it",
                {{"pod", log::kobj(pod)}, {"node", boundTo}});
      return;
    }
  }
  undoAssume(*attempt);
  log::error(status.message(), "Failed to bind pod",
             {{"pod", log::kobj(pod)}, {"node", attempt->node}});
  if (options_.metrics) {
    options_.metrics->scheduleAttempt(fw.profileName(), "error",
                                      clock_.monotonicNow() - attempt->started);
  }
  handleFailure(attempt->queued, *attempt->profile, Code::Error, "SchedulerError",
                "binding rejected: " + status.message());
}

void Scheduler::trackVolumeWait(Attempt& attempt) {
  attempt.state.setStopToken(attempt.cancel.get_token());
  std::lock_guard lock(volume_waits_mu_);
  if (volume_waits_cancelled_) attempt.cancel.request_stop();
  volume_waits_[podRef(*attempt.assumed->pod)] = attempt.cancel;
}

void Scheduler::untrackVolumeWait(const Attempt& attempt) {
  std::lock_guard lock(volume_waits_mu_);
  volume_waits_.erase(podRef(*attempt.assumed->pod));
}

void Scheduler::cancelVolumeWait(const api::Pod& pod) {
  std::lock_guard lock(volume_waits_mu_);
  if (auto it = volume_waits_.find(podRef(pod)); it != volume_waits_.end()) {
    it->second.request_stop();
  }
}

void Scheduler::cancelVolumeWaits() {
  std::lock_guard lock(volume_waits_mu_);
  volume_waits_cancelled_ = true;
  for (auto& [pod, source] : volume_waits_) source.request_stop();
}

void Scheduler::undoAssume(Attempt& attempt) {
  const api::Pod& pod = *attempt.assumed->pod;
  attempt.profile->framework->runReservePluginsUnreserve(attempt.state, *attempt.assumed,
                                                         attempt.node);
  if (auto r = cache_.forgetPod(pod); !r.ok()) {
    log::error(r.error().message, "Scheduler cache ForgetPod failed", {{"pod", log::kobj(pod)}});
  }
}

void Scheduler::confirmBound(const Attempt& attempt) {
  const api::Pod& pod = *attempt.assumed->pod;
  cache_.finishBinding(pod);
  queue_->done(pod);
  util::Duration took = clock_.monotonicNow() - attempt.started;
  log::info(2, "Successfully bound pod to node",
            {{"pod", log::kobj(pod)},
             {"node", attempt.node},
             {"evaluatedNodes", attempt.evaluatedNodes},
             {"feasibleNodes", attempt.feasibleNodes},
             {"duration", std::chrono::duration<double>(took).count()}});
  attempt.profile->recorder->record(events::podReference(pod), "Normal", "Scheduled", "Binding",
                                    "Successfully assigned " + podRef(pod) + " to " + attempt.node);
  if (options_.observer) options_.observer->bound(pod, attempt.node, attempt.queued);
  if (metrics::Metrics* m = options_.metrics) {
    const util::MonotonicTime now = clock_.monotonicNow();
    m->scheduleAttempt(attempt.profile->framework->profileName(), "scheduled", took);
    m->podScheduled(attempt.queued.attempts(), now - attempt.queued.initialEnqueue);
    if (attempt.queued.flushedFromUnschedulable) m->podScheduledAfterFlush();
  }
}

void Scheduler::handleFailure(const queue::QueuedPod& queued, const Profile& profile, Code code,
                              const std::string& reason, const std::string& message,
                              std::optional<framework::PostFilterResult> preemption,
                              bool clearNomination) {
  const api::Pod& pod = queued.pod();
  // Upstream checks the informer's copy: a pod deleted or bound meanwhile is not requeued.
  std::shared_ptr<const api::Pod> latest = feeds_.pods->get(podRef(pod));
  if (!latest) {
    queue_->done(pod);
    log::info(3, "Pod doesn't exist in informer cache", {{"pod", log::kobj(pod)}});
    return;
  }
  if (api::isAssigned(*latest)) {
    queue_->done(pod);
    log::info(3, "Pod has been assigned to node. Abort adding it back to queue.",
              {{"pod", log::kobj(pod)}, {"node", latest->spec.nodeName}});
    return;
  }
  if (preemption) {
    // Nominated before it is requeued, so that no cycle from now on takes its room.
    nominator_.nominate(framework::makePodInfo(latest), preemption->nominatedNode);
    std::lock_guard lock(preempting_mu_);
    preempting_.insert(podRef(pod));
  } else if (clearNomination) {
    nominator_.remove(*latest);
  } else {
    // The status's nomination (an assumed pod whose binding failed lost it).
    nominator_.updateFromStatus(latest);
  }
  if (auto r = queue_->addUnschedulableIfNotPresent(queued, code); !r.ok()) {
    log::error(r.error().message, "Error occurred", {{"pod", log::kobj(pod)}});
  }
  // As upstream's handleSchedulingFailure: an error (a PreFilter error, a failed binding) is
  // logged as one and retried with backoff; a pod that fits nowhere waits for a cluster event.
  if (code == Code::Error) {
    log::error(message, "Error scheduling pod; retrying", {{"pod", log::kobj(pod)}});
  } else {
    log::info(2, "Unable to schedule pod; no fit; waiting",
              {{"pod", log::kobj(pod)}, {"err", message}});
  }
  if (options_.observer) options_.observer->failed(pod, message);
  if (preemption) {
    startPreemption(Preemption{latest, &profile, std::move(*preemption), reason, message});
    return;
  }
  profile.recorder->record(events::podReference(*latest), "Warning", "FailedScheduling",
                           "Scheduling", message);
  auto patch =
      podScheduledConditionPatch(*latest, reason, message, api::toTimestamp(clock_.systemNow()),
                                 clearNomination ? std::optional<std::string>("") : std::nullopt);
  if (!patch) return;
  std::string ns = pod.metadata.namespace_;
  std::string name = pod.metadata.name;
  binders_.submit([this, ns, name, patch = std::move(*patch)] {
    auto r = api_.patchPodStatus(ns, name, patch);
    if (!r.ok() && r.error().code != util::ErrorCode::NotFound) {
      log::error(r.error().message, "Error updating pod", {{"pod", log::kobj(ns, name)}});
    }
  });
}

void Scheduler::attempted(const api::Pod& pod, const std::string& profile, std::string_view result,
                          util::Duration took) {
  if (options_.observer) options_.observer->attempted(pod, profile, result, took);
  if (options_.metrics) options_.metrics->scheduleAttempt(profile, result, took);
}

void Scheduler::extensionPoint(std::string_view point, Code code, const std::string& profile,
                               util::MonotonicTime start) {
  if (options_.metrics) {
    options_.metrics->extensionPoint(point, framework::codeName(code), profile,
                                     clock_.monotonicNow() - start);
  }
}

}  // namespace berth::scheduler
