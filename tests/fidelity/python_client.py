"""Drives the embedded API server with the official Python client (Debian's python3-kubernetes).

Usage: python_client.py URL
Prints one line per step ("nodes: n1,n2", "watch: ADDED watched", ...); exits non-zero with the
failing step on stderr. fidelity_test.cc runs it and checks both the lines and the store.
"""

import datetime
import sys
import threading

from kubernetes import client, watch


def main(url):
    configuration = client.Configuration()
    configuration.host = url
    api = client.ApiClient(configuration)
    core = client.CoreV1Api(api)
    coordination = client.CoordinationV1Api(api)

    nodes = core.list_node()
    print("nodes: " + ",".join(sorted(n.metadata.name for n in nodes.items)))

    # A watch from the list's resourceVersion sees a pod created while it streams.
    pods = core.list_namespaced_pod("default")
    def create_pod():
        core.create_namespaced_pod("default", client.V1Pod(
            metadata=client.V1ObjectMeta(name="watched"),
            spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")])))
    timer = threading.Timer(0.3, create_pod)
    timer.start()
    w = watch.Watch()
    seen = None
    for event in w.stream(core.list_namespaced_pod, "default",
                          resource_version=pods.metadata.resource_version, timeout_seconds=20):
        if event["object"].metadata.name == "watched":
            seen = event["type"]
            w.stop()
    timer.join()
    print("watch: %s watched" % seen)

    # The binding answers 201 with a Status, which the generated client cannot deserialize as a
    # V1Binding: read the raw response instead.
    binding = client.V1Binding(
        metadata=client.V1ObjectMeta(name="watched"),
        target=client.V1ObjectReference(kind="Node", name=nodes.items[0].metadata.name))
    response = core.create_namespaced_binding("default", binding, _preload_content=False)
    print("binding: %d" % response.status)
    print("nodeName: " + core.read_namespaced_pod("watched", "default").spec.node_name)

    now = datetime.datetime.now(datetime.timezone.utc)
    lease = coordination.create_namespaced_lease("default", client.V1Lease(
        metadata=client.V1ObjectMeta(name="berth"),
        spec=client.V1LeaseSpec(holder_identity="berth-1", lease_duration_seconds=15,
                                acquire_time=now, renew_time=now)))
    print("lease: created %s" % lease.spec.holder_identity)
    lease.spec.renew_time = now + datetime.timedelta(seconds=5, microseconds=123456)
    updated = coordination.replace_namespaced_lease("berth", "default", lease)
    delta = updated.spec.renew_time - lease.spec.acquire_time
    print("lease: renewed +%.6fs" % delta.total_seconds())


if __name__ == "__main__":
    main(sys.argv[1])
