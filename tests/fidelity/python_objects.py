"""The namespaces, services, controllers, replica sets and stateful sets through the official Python
client (Debian's python3-kubernetes): CoreV1Api and AppsV1Api, typed models both ways.

Usage: python_objects.py URL
Prints one line per step; fidelity_test.cc runs it and checks the lines.
"""

import sys

from kubernetes import client


def main(url):
    configuration = client.Configuration()
    configuration.host = url
    api = client.ApiClient(configuration)
    core = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)

    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="prod")))
    core.patch_namespace("prod", {"metadata": {"labels": {"team": "blue"}}})
    ns = core.read_namespace("prod")
    print("namespace: %s %s team=%s" % (ns.metadata.name, ns.status.phase,
                                        ns.metadata.labels["team"]))

    core.create_namespaced_service("prod", client.V1Service(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ServiceSpec(selector={"app": "web"},
                                  ports=[client.V1ServicePort(port=80)])))
    services = core.list_service_for_all_namespaces()
    print("services: " + ",".join(s.metadata.namespace + "/" + s.metadata.name
                                  for s in services.items))

    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": "web"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]))
    selector = client.V1LabelSelector(match_labels={"app": "web"})
    apps.create_namespaced_replica_set("prod", client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ReplicaSetSpec(replicas=2, selector=selector, template=template)))
    apps.create_namespaced_stateful_set("prod", client.V1StatefulSet(
        metadata=client.V1ObjectMeta(name="db"),
        spec=client.V1StatefulSetSpec(service_name="web", selector=selector, template=template)))
    core.create_namespaced_replication_controller("prod", client.V1ReplicationController(
        metadata=client.V1ObjectMeta(name="old"),
        spec=client.V1ReplicationControllerSpec(selector={"app": "web"}, template=template)))
    rs = apps.list_replica_set_for_all_namespaces().items
    print("replicasets: " + ",".join("%s gen=%d" % (r.metadata.name, r.metadata.generation)
                                     for r in rs))
    sts = apps.read_namespaced_stateful_set("db", "prod")
    print("statefulset: %s replicas=%d" % (sts.metadata.name, sts.status.replicas))
    rcs = core.list_namespaced_replication_controller("prod").items
    print("replicationcontrollers: " + ",".join(r.metadata.name for r in rcs))

    apps.delete_namespaced_replica_set("web", "prod")
    print("replicasets after delete: %d" % len(apps.list_namespaced_replica_set("prod").items))


if __name__ == "__main__":
    main(sys.argv[1])
