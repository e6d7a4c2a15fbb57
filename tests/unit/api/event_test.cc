#include "pkg/api/event.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

using nlohmann::json;

Event scheduled() {
  return Event{.name = "web.17cb",
               .namespace_ = "default",
               .time = Timestamp{1714557600123456},
               .reportingController = "berth",
               .reportingInstance = "berth-host",
               .action = "Binding",
               .reason = "Scheduled",
               .regarding = {.kind = "Pod",
                             .apiVersion = "v1",
                             .namespace_ = "default",
                             .name = "web",
                             .uid = "u1"},
               .note = "Successfully assigned default/web to n1",
               .type = "Normal"};
}

TEST(Event, EncodesTheEventsV1Fields) {
  EXPECT_EQ(encodeEvent(scheduled()), json::parse(R"({
    "apiVersion": "events.k8s.io/v1", "kind": "Event",
    "metadata": {"name": "web.17cb", "namespace": "default"},
    "eventTime": "2024-05-01T10:00:00.123456Z",
    "reportingController": "berth", "reportingInstance": "berth-host",
    "action": "Binding", "reason": "Scheduled",
    "regarding": {"kind": "Pod", "apiVersion": "v1", "namespace": "default", "name": "web",
                  "uid": "u1"},
    "note": "Successfully assigned default/web to n1", "type": "Normal"})"));
}

TEST(Event, EncodesTheCoreV1FieldsWithTimesInSeconds) {
  EXPECT_EQ(encodeCoreV1Event(scheduled()), json::parse(R"({
    "apiVersion": "v1", "kind": "Event",
    "metadata": {"name": "web.17cb", "namespace": "default"},
    "involvedObject": {"kind": "Pod", "apiVersion": "v1", "namespace": "default", "name": "web",
                       "uid": "u1"},
    "reason": "Scheduled", "message": "Successfully assigned default/web to n1",
    "source": {"component": "berth"},
    "firstTimestamp": "2024-05-01T10:00:00Z", "lastTimestamp": "2024-05-01T10:00:00Z",
    "count": 1, "type": "Normal", "action": "Binding",
    "reportingComponent": "berth", "reportingInstance": "berth-host"})"));
}

TEST(ObjectReference, OmitsEmptyFields) {
  EXPECT_EQ(encodeObjectReference({.kind = "Node", .name = "n1"}),
            json::parse(R"({"kind":"Node","name":"n1"})"));
}

}  // namespace
}  // namespace berth::api
