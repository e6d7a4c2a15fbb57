// Carrying out what a PostFilter plugin (preemption) decided: the API writes of upstream's
// prepareCandidate, off the scheduling thread, in upstream's order. The scheduling loop only
// nominates the preemptor and queues the writes; it never waits on them.

#include <chrono>
#include <utility>

#include "pkg/log/log.h"
#include "pkg/scheduler/pod_condition.h"
#include "pkg/scheduler/scheduler.h"

namespace berth::scheduler {
namespace {

std::string refOf(const api::Pod& pod) {
  return log::ref(pod.metadata.namespace_, pod.metadata.name);
}

// client-go's retry.DefaultBackoff (4 tries: 10ms, then x5 with 10% jitter) on what
// util.Retriable retries: a conflict, a 5xx or no answer.
constexpr int kPatchTries = 4;
constexpr std::chrono::milliseconds kPatchFirstWait{10};
constexpr int kPatchFactor = 5;

bool retriable(const util::Error& e) {
  return e.code == util::ErrorCode::Aborted || e.code == util::ErrorCode::Unavailable;
}

}  // namespace

bool Scheduler::parkIfPreempting(const queue::QueuedPod& queued) {
  {
    std::lock_guard lock(preempting_mu_);
    if (!preempting_.contains(refOf(queued.pod()))) return false;
  }
  // Upstream's DefaultPreemption PreEnqueue: "waiting for the preemption for this pod to be
  // finished". The end of the writes activates it again.
  log::info(4, "Waiting for the preemption for this pod to be finished",
            {{"pod", log::kobj(queued.pod())}});
  if (auto r = queue_->addUnschedulableIfNotPresent(queued, framework::Code::Unschedulable);
      !r.ok()) {
    log::error(r.error().message, "Error occurred", {{"pod", log::kobj(queued.pod())}});
  }
  return true;
}

void Scheduler::startPreemption(Preemption preemption) {
  if (metrics::Metrics* m = options_.metrics) {
    m->preemptionVictims(preemption.result.victims.size());
  }
  log::info(2, "Preempting pods to make room",
            {{"pod", log::kobj(*preemption.preemptor)},
             {"node", preemption.result.nominatedNode},
             {"victims", preemption.result.victims.size()}});
  preemptors_.submit([this, p = std::move(preemption)] { executePreemption(p); });
}

void Scheduler::executePreemption(const Preemption& p) {
  const api::Pod& preemptor = *p.preemptor;
  // Victims one after another: each is a few round trips, and the order of the writes is then
  // the order of the victims.
  bool ok = true;
  for (const auto& victim : p.result.victims) ok = preemptVictim(p, *victim) && ok;
  clearLowerPriorityNominations(p);

  // The preemptor's FailedScheduling event, then its one status patch, as upstream's failure
  // handler writes them (the event is written before the patch is sent).
  p.profile->recorder->record(events::podReference(preemptor), "Warning", "FailedScheduling",
                              "Scheduling", p.message);
  waitForEvents(*p.profile);
  auto current = feeds_.pods->get(refOf(preemptor));
  const api::Pod& latest = current ? *current : preemptor;
  if (auto patch = podScheduledConditionPatch(latest, p.reason, p.message,
                                              api::toTimestamp(clock_.systemNow()),
                                              p.result.nominatedNode)) {
    auto r = api_.patchPodStatus(preemptor.metadata.namespace_, preemptor.metadata.name, *patch);
    if (!r.ok() && r.error().code != util::ErrorCode::NotFound) {
      log::error(r.error().message, "Error updating pod", {{"pod", log::kobj(preemptor)}});
    }
  }
  {
    std::lock_guard lock(preempting_mu_);
    preempting_.erase(refOf(preemptor));
  }
  if (!ok) log::info(2, "Preemption incomplete; retrying the pod", {{"pod", log::kobj(preemptor)}});
  // Scheduled again now: it fits once its victims are gone, or the next attempt decides afresh.
  queue_->activate(preemptor);
}

bool Scheduler::preemptVictim(const Preemption& p, const framework::PodInfo& victim) {
  const api::Pod& pod = *victim.pod;
  const std::string& ns = pod.metadata.namespace_;
  const std::string& name = pod.metadata.name;
  // The informer's copy decides: a victim already being deleted (or gone) is left alone.
  auto latest = feeds_.pods->get(refOf(pod));
  if (!latest || latest->metadata.uid != pod.metadata.uid) return true;
  if (latest->metadata.deletionTimestamp) return true;
  {
    std::lock_guard lock(preempting_mu_);
    if (evicted_.contains(pod.metadata.uid)) return true;
  }

  if (auto patch = disruptionTargetPatch(*latest, p.preemptor->spec.schedulerName,
                                         api::toTimestamp(clock_.systemNow()))) {
    util::Duration wait = kPatchFirstWait;
    for (int attempt = 1;; ++attempt) {
      auto r = api_.patchPodStatus(ns, name, *patch);
      if (r.ok()) break;
      if (r.error().code == util::ErrorCode::NotFound) return true;  // the victim is gone
      if (!retriable(r.error()) || attempt == kPatchTries ||
          !clock_.sleepFor(wait, preemption_stop_.get_token())) {
        log::error(r.error().message, "Could not add DisruptionTarget condition due to preemption",
                   {{"pod", log::kobj(pod)}, {"preemptor", log::kobj(*p.preemptor)}});
        return false;
      }
      wait *= kPatchFactor;
    }
  }
  // Recorded before the DELETE: its watch event may be handled before the DELETE's answer.
  {
    std::lock_guard lock(preempting_mu_);
    evicted_.insert(pod.metadata.uid);
  }
  if (auto r = api_.deletePod(ns, name, pod.metadata.uid);
      !r.ok() && r.error().code != util::ErrorCode::NotFound) {
    log::error(r.error().message, "Preempted pod",
               {{"pod", log::kobj(pod)}, {"preemptor", log::kobj(*p.preemptor)}});
    std::lock_guard lock(preempting_mu_);
    evicted_.erase(pod.metadata.uid);
    return false;
  }
  log::info(3, "Preempted pod",
            {{"pod", log::kobj(pod)},
             {"preemptor", log::kobj(*p.preemptor)},
             {"node", p.result.nominatedNode}});
  p.profile->recorder->record(
      events::podReference(pod), events::podReference(*p.preemptor), "Normal", "Preempted",
      "Preempting",
      "Preempted by pod " + p.preemptor->metadata.uid + " on node " + p.result.nominatedNode);
  waitForEvents(*p.profile);
  return true;
}

void Scheduler::waitForEvents(const Profile& profile) {
  // The writes stay in upstream's order, events included; at shutdown they are not waited for.
  if (!preemption_stop_.stop_requested()) profile.recorder->waitIdle();
}

void Scheduler::clearLowerPriorityNominations(const Preemption& p) {
  const int32_t priority = p.preemptor->spec.priority.value_or(0);
  for (const auto& nominated : nominator_.nominatedPodsForNode(p.result.nominatedNode)) {
    const api::Pod& pod = *nominated->pod;
    if (pod.spec.priority.value_or(0) >= priority) continue;
    nominator_.nominate(nominated, "");
    if (pod.status.nominatedNodeName.empty()) continue;  // only this scheduler knew of it
    auto r = api_.patchPodStatus(pod.metadata.namespace_, pod.metadata.name,
                                 {{"status", {{"nominatedNodeName", nullptr}}}});
    if (!r.ok() && r.error().code != util::ErrorCode::NotFound) {
      log::error(r.error().message, "Cannot clear 'NominatedNodeName' field",
                 {{"pod", log::kobj(pod)}});
    }
  }
}

}  // namespace berth::scheduler
