/**
 * The images of the workloads the gardenlet deploys into a seed (Gardener's image vector): the shoot control plane's
 * components. They carry the names `kubeadm config images list` gives for the pinned releases, and are built here
 * from the pinned binaries (no registry is involved): the versions below are hack/versions.env's, which a test
 * keeps equal.
 */
export const KUBERNETES_VERSION = 'v1.37.1';
export const ETCD_VERSION = 'v3.7.3';

export const IMAGES = {
  etcd: `registry.k8s.io/etcd:${ETCD_VERSION.replace(/^v/, '')}-0`,
  kubeAPIServer: `registry.k8s.io/kube-apiserver:${KUBERNETES_VERSION}`,
  kubeControllerManager: `registry.k8s.io/kube-controller-manager:${KUBERNETES_VERSION}`,
  kubeScheduler: `registry.k8s.io/kube-scheduler:${KUBERNETES_VERSION}`,
  /** A static busybox (Debian's): the test image, and what removes etcd's data from a Node. */
  busybox: 'local.gardener.cloud/test/busybox:1',
  /** CoreDNS of the shoots (and the seed of `up`), from the pinned build. */
  coredns: 'local.gardener.cloud/coredns:1',
  /**
   * Kubernetes' e2e test server (`agnhost webhook`, `netexec`, ...), built from the pinned release's
   * test/images/agnhost under the name that release's e2e tests use (test/utils/image/manifest.go).
   */
  agnhost: 'registry.k8s.io/e2e-test-images/agnhost:2.66.1',
  /**
   * The machine pods' image (provider-local): node with this project's agent, the kubelet, kube-proxy, containerd
   * and the host tools they need. Tagged with the kubelet's version; its digest changes with the agent too.
   */
  machine: `local.gardener.cloud/machine:${KUBERNETES_VERSION}`,
} as const;
export type ImageName = keyof typeof IMAGES;
