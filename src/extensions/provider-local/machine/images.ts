/**
 * The images the machines take, without a registry: the `pause` sandbox, a static busybox for tests, CoreDNS,
 * agnhost on Debian's packages, the shoot control plane's components (the machine pods' image is pod-image.ts's),
 * built as OCI archives (image-archive.ts) and imported into each machine's containerd. Nothing is pulled: the
 * machines have no route to a registry, and the kubelet never pulls an image that is present (`IfNotPresent` for
 * tagged images; the sandbox image is pinned in containerd's CRI config).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { IMAGES } from '../../../imagevector/images.js';
import { buildImage, treeSpec, type BuiltImage, type ImageSpec } from './image-archive.js';

/** The sandbox image the kubelet's Kubernetes version expects (kubeadm's default for 1.3x). */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
/** The same pause under the name the pinned release's e2e tests run it (test/utils/image/manifest.go). */
export const E2E_PAUSE_IMAGE = 'registry.k8s.io/pause:3.10.2';
/** The test image: a static busybox with sh, httpd, nc, wget, nslookup. */
export const TEST_IMAGE = IMAGES.busybox;
export const COREDNS_IMAGE = IMAGES.coredns;

/** The busybox applets the test image links (each a symlink to /bin/busybox). */
export const BUSYBOX_APPLETS = [
  'cat',
  'echo',
  'env',
  'hostname',
  'httpd',
  'ip',
  'ls',
  'mkdir',
  'nc',
  'nslookup',
  'ping',
  'ps',
  'sh',
  'sleep',
  'timeout',
  'wget',
] as const;

export function pauseImageSpec(pauseBinary: string, name = PAUSE_IMAGE): ImageSpec {
  return { name, files: [{ path: 'pause', source: pauseBinary }], entrypoint: ['/pause'] };
}

/** Debian's busybox-static installs it here. */
export const DEBIAN_STATIC_BUSYBOX = '/bin/busybox';

export function testImageSpec(busyboxBinary = DEBIAN_STATIC_BUSYBOX): ImageSpec {
  return {
    name: TEST_IMAGE,
    files: [{ path: 'bin/busybox', source: busyboxBinary }],
    symlinks: BUSYBOX_APPLETS.map((applet) => ({ path: `bin/${applet}`, target: 'busybox' })),
    dirs: ['etc', 'tmp', 'www'],
    cmd: ['sh'],
  };
}

/** The e2e tests' busybox (test/utils/image/manifest.go), which the sig-node tests run `sh -c` in. */
export const E2E_BUSYBOX_IMAGE = 'registry.k8s.io/e2e-test-images/busybox:1.37.0-2';

/** The applets a busybox binary has (`busybox --list`), each of which upstream's busybox image links in /bin. */
export function busyboxApplets(busyboxBinary = DEBIAN_STATIC_BUSYBOX): string[] {
  return execFileSync(busyboxBinary, ['--list'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    .split('\n')
    .filter((a) => /^[a-z0-9_.[-]+$/.test(a) && a !== 'busybox');
}

/** Upstream's e2e busybox: the static binary with every applet in /bin, and the folders a shell expects. */
export function e2eBusyboxImageSpec(applets: readonly string[], busyboxBinary = DEBIAN_STATIC_BUSYBOX): ImageSpec {
  return {
    name: E2E_BUSYBOX_IMAGE,
    files: [{ path: 'bin/busybox', source: busyboxBinary }],
    symlinks: applets.map((applet) => ({ path: `bin/${applet}`, target: 'busybox' })),
    dirs: ['etc', 'home', 'root', 'tmp', 'var', 'var/tmp'],
    dirModes: { tmp: 0o1777, 'var/tmp': 0o1777, root: 0o700 },
    cmd: ['sh'],
  };
}

/**
 * Kubernetes' e2e test image: the agnhost binary on `rootfs`, the Debian tools the tests exec in it (sh, nc, curl,
 * dig, ...) and `porter`'s key pair (hack/ensure-binaries.sh agnhost-rootfs), with CoreDNS at /coredns and the
 * `agnhost-2` link, as upstream's is the binary on Alpine with the same. Without `rootfs`, the binary alone.
 */
export function agnhostImageSpec(agnhostBinary: string, rootfs?: string, corednsBinary?: string): ImageSpec {
  const tree = rootfs ? treeSpec(rootfs) : { files: [] };
  return {
    name: IMAGES.agnhost,
    ...tree,
    files: [
      ...tree.files,
      { path: 'agnhost', source: agnhostBinary },
      ...(corednsBinary ? [{ path: 'coredns', source: corednsBinary }] : []),
    ],
    ...(rootfs ? { symlinks: [...(tree.symlinks ?? []), { path: 'agnhost-2', target: 'agnhost' }] } : {}),
    entrypoint: ['/agnhost'],
    cmd: ['pause'],
  };
}

/** The e2e DNS tests' glibc resolver image (test/utils/image/manifest.go), as upstream's: Debian with dnsutils. */
export const GLIBC_DNS_TESTING_IMAGE = 'registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1';

/** Upstream's is Debian bookworm-slim with dnsutils and a CoreDNS at /coredns: `rootfs` and the pinned CoreDNS. */
export function glibcDNSTestingImageSpec(rootfs: string, corednsBinary: string): ImageSpec {
  const tree = treeSpec(rootfs);
  return {
    name: GLIBC_DNS_TESTING_IMAGE,
    ...tree,
    files: [...tree.files, { path: 'coredns', source: corednsBinary }],
    cmd: ['bash'],
  };
}

/** The e2e tests' host tools image (test/utils/image/manifest.go): what `KubeProxy` tests exec on a node's network. */
export const E2E_DISTROLESS_IPTABLES_IMAGE = 'registry.k8s.io/build-image/distroless-iptables:v0.9.7';

/**
 * Upstream's is Debian's iptables, ip6tables, conntrack and ipset on a distroless base with a shell: `rootfs`, which
 * has them (hack/ensure-binaries.sh agnhost-rootfs), in the very layer of glibc-dns-testing (the same files, CoreDNS
 * among them), which a machine's containerd then stores and unpacks once for both.
 */
export function distrolessIptablesImageSpec(rootfs: string, corednsBinary: string): ImageSpec {
  return { ...glibcDNSTestingImageSpec(rootfs, corednsBinary), name: E2E_DISTROLESS_IPTABLES_IMAGE };
}

/** The e2e conntrack test's server (test/utils/image/manifest.go), which answers with out-of-window TCP packets. */
export const E2E_REGRESSION_ISSUE_74839_IMAGE = 'registry.k8s.io/e2e-test-images/regression-issue-74839:1.5';

/** Upstream's is the static binary at / on Debian's base image, which it doesn't use: the binary alone. */
export function regressionIssue74839ImageSpec(binary: string): ImageSpec {
  return {
    name: E2E_REGRESSION_ISSUE_74839_IMAGE,
    files: [{ path: 'regression-issue-74839', source: binary }],
    entrypoint: ['/regression-issue-74839'],
  };
}

export function corednsImageSpec(corednsBinary: string): ImageSpec {
  return { name: COREDNS_IMAGE, files: [{ path: 'coredns', source: corednsBinary }], entrypoint: ['/coredns'] };
}

/** The binaries of a shoot control plane's images (and of the garden's own control plane). */
export const CONTROL_PLANE_BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

/**
 * The shoot control plane's images (the gardenlet's image vector), each the static binary alone: etcd,
 * kube-apiserver, kube-controller-manager and kube-scheduler, from the binaries in `binDir`.
 */
export function controlPlaneImageSpecs(binDir: string): ImageSpec[] {
  const binary = (name: string, binaryName: string): ImageSpec => ({
    name,
    files: [{ path: `usr/local/bin/${binaryName}`, source: join(binDir, binaryName) }],
    dirs: ['tmp', 'var/lib'],
    entrypoint: [`/usr/local/bin/${binaryName}`],
  });
  return [
    binary(IMAGES.etcd, 'etcd'),
    binary(IMAGES.kubeAPIServer, 'kube-apiserver'),
    binary(IMAGES.kubeControllerManager, 'kube-controller-manager'),
    binary(IMAGES.kubeScheduler, 'kube-scheduler'),
  ];
}

/**
 * The images every machine gets: the sandbox (also under the e2e tests' name for it), the test image, CoreDNS, and
 * the e2e tests' agnhost, glibc-dns-testing, distroless-iptables, regression-issue-74839 and busybox, built from the
 * binaries in `binDir`.
 */
export function buildMachineImages(binDir: string, cacheDir: string): Promise<BuiltImage[]> {
  return Promise.all([
    buildImage(pauseImageSpec(join(binDir, 'pause')), cacheDir),
    buildImage(pauseImageSpec(join(binDir, 'pause'), E2E_PAUSE_IMAGE), cacheDir),
    buildImage(testImageSpec(), cacheDir),
    buildImage(corednsImageSpec(join(binDir, 'coredns')), cacheDir),
    buildImage(
      agnhostImageSpec(join(binDir, 'agnhost'), join(binDir, 'agnhost-rootfs'), join(binDir, 'coredns')),
      cacheDir,
    ),
    buildImage(glibcDNSTestingImageSpec(join(binDir, 'agnhost-rootfs'), join(binDir, 'coredns')), cacheDir),
    buildImage(distrolessIptablesImageSpec(join(binDir, 'agnhost-rootfs'), join(binDir, 'coredns')), cacheDir),
    buildImage(regressionIssue74839ImageSpec(join(binDir, 'regression-issue-74839')), cacheDir),
    buildImage(e2eBusyboxImageSpec(busyboxApplets()), cacheDir),
  ]);
}
