/**
 * How the control plane's pods are probed, sized and tell why they stopped: the settings every control plane
 * container shares, apart from what it runs (workloads.ts).
 */
/**
 * A control plane container that exited says why in its pod's status (`lastState.terminated.message`): the end of its
 * log, as kubeadm's static pods have it. A restart on a busy seed (a lost leader election, a probe that gave up) is
 * then told by the status alone, after the container's log is gone.
 */
export const LAST_WORDS = { terminationMessagePolicy: 'FallbackToLogsOnError' } as const;

/**
 * What each control plane container asks the seed's scheduler for: what it uses at rest, with some room (the density
 * benchmark, 12 shoots on one seed: kube-apiserver 0.035-0.04 cores, etcd 0.015, kube-controller-manager 0.01,
 * kube-scheduler and the vpn-seed sidecar 0.003), as Gardener's seeds have VPA set them from usage. Requests reserve,
 * they don't limit: a control plane starting takes more while its neighbours idle, and the CPU's weight between
 * busy pods follows the requests. At the earlier 100m/50m/20m/20m/10m, a seed with two Nodes of 2 cores was full
 * at 13 shoots by its requests while half its CPU was idle.
 */
export const CPU_REQUESTS = {
  kubeAPIServer: '50m',
  etcd: '25m',
  kubeControllerManager: '15m',
  kubeScheduler: '10m',
  vpnSeed: '5m',
} as const;

/**
 * The control plane's probes, with kubeadm's timeouts and thresholds for its static control plane pods: a seed with
 * many shoots is a busy host, where an API server that answers in 4 s is slow, not dead. With a 3-s timeout and 30 s
 * of patience, kube-apiservers of running shoots were restarted under load and a new one was killed before it had
 * started, each restart costing the host more CPU than the probes saved.
 *
 * Readiness every 5 s (a control plane's start waits for it); unready after 30 s of failures.
 */
export const readinessProbe = (path: string, port: number, scheme: 'HTTP' | 'HTTPS') => ({
  httpGet: { path, port, scheme },
  periodSeconds: 5,
  timeoutSeconds: 15,
  failureThreshold: 6,
});

/**
 * Liveness at Kubernetes' default period of 10 s, restarted after 80 s of failures (kubeadm's 8): nothing waits for
 * it, and every probe of an HTTPS endpoint is a TLS handshake, per component and shoot. It starts once the startup
 * probe succeeded.
 */
export const livenessProbe = (path: string, port: number, scheme: 'HTTP' | 'HTTPS') => ({
  httpGet: { path, port, scheme },
  periodSeconds: 10,
  timeoutSeconds: 15,
  failureThreshold: 8,
});

/**
 * Up to 4 minutes to start (kubeadm's 240 s) before liveness takes over. Readiness waits for it: tried every 2 s, so
 * that a control plane that starts quickly is not kept waiting for it.
 */
export const startupProbe = (path: string, port: number, scheme: 'HTTP' | 'HTTPS') => ({
  httpGet: { path, port, scheme },
  periodSeconds: 2,
  timeoutSeconds: 15,
  failureThreshold: 120,
});
