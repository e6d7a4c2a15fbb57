"""The storage kinds through the official Python client (Debian's python3-kubernetes): a
StorageClass, a PersistentVolume and a PersistentVolumeClaim created, read and listed with
CoreV1Api and StorageV1Api, typed models both ways, and a claim bound as the PV controller would.

Usage: python_storage.py URL
Prints one line per step; fidelity_test.cc runs it and checks the lines.
"""

import sys

from kubernetes import client


def main(url):
    configuration = client.Configuration()
    configuration.host = url
    api = client.ApiClient(configuration)
    core = client.CoreV1Api(api)
    storage = client.StorageV1Api(api)

    storage.create_storage_class(client.V1StorageClass(
        metadata=client.V1ObjectMeta(name="fast"), provisioner="disk.csi.example.com"))
    sc = storage.read_storage_class("fast")
    print("storageclass: %s %s %s" % (sc.metadata.name, sc.volume_binding_mode, sc.reclaim_policy))

    core.create_persistent_volume(client.V1PersistentVolume(
        metadata=client.V1ObjectMeta(name="pv1"),
        spec=client.V1PersistentVolumeSpec(
            capacity={"storage": "5Gi"}, access_modes=["ReadWriteOnce"],
            storage_class_name="fast",
            csi=client.V1CSIPersistentVolumeSource(driver="disk.csi.example.com",
                                                   volume_handle="vol-1"))))
    pv = core.read_persistent_volume("pv1")
    print("persistentvolume: %s %s %s %s" % (pv.metadata.name, pv.status.phase,
                                             pv.spec.persistent_volume_reclaim_policy,
                                             pv.spec.volume_mode))

    core.create_namespaced_persistent_volume_claim("default", client.V1PersistentVolumeClaim(
        metadata=client.V1ObjectMeta(name="data"),
        spec=client.V1PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"], storage_class_name="fast",
            resources=client.V1ResourceRequirements(requests={"storage": "1Gi"}))))
    claims = core.list_persistent_volume_claim_for_all_namespaces().items
    print("claims: " + ",".join("%s/%s %s" % (c.metadata.namespace, c.metadata.name,
                                              c.status.phase) for c in claims))

    # Bound as the PV controller does it: the claim's volumeName, then its status.
    core.patch_namespaced_persistent_volume_claim("data", "default",
                                                  {"spec": {"volumeName": "pv1"}})
    core.patch_namespaced_persistent_volume_claim_status("data", "default",
                                                         {"status": {"phase": "Bound"}})
    pvc = core.read_namespaced_persistent_volume_claim("data", "default")
    print("bound: %s %s" % (pvc.spec.volume_name, pvc.status.phase))

    storage.delete_storage_class("fast")
    print("storageclasses after delete: %d" % len(storage.list_storage_class().items))


if __name__ == "__main__":
    main(sys.argv[1])
