/**
 * Which kernel parameters a machine of provider-local can have of its own, the one rule the Shoot's admission (a
 * worker pool's `sysctls`) and the machine's node agent (what it sets) share.
 *
 * A machine is a network namespace of the host (with mount and cgroup namespaces of its own), not a VM: it shares
 * the host's kernel, so only what Linux keeps per network namespace is the machine's. That is most of `net.*`; the
 * rest of `net.*` below is kept once for the whole host: these parameters exist only in the host's initial network
 * namespace, or are read-only copies of its values in every other one. The lists are what Linux 6.18 does, found by
 * listing `/proc/sys/net` in a new network namespace and comparing it with the initial one's
 * (test/extensions/provider-local/sysctls.test.ts checks them against the running kernel). Outside `net.*`, the IPC
 * parameters (`kernel.shm*`, `kernel.msg*`, `kernel.sem`, `fs.mqueue.*`) belong to an IPC namespace, which the
 * machines don't have, and the rest (`vm.*`, `fs.*`, `kernel.*`) to the host.
 */

/** Subtrees of `net.` kept once for the host (a trailing `.` matches everything below). */
const HOST_ONLY_NET = new Set([
  // net/core/sysctl_net_core.c: net_core_table, registered for the initial namespace only.
  ...[
    'bpf_jit_enable',
    'bpf_jit_harden',
    'bpf_jit_kallsyms',
    'bpf_jit_limit',
    'busy_poll',
    'busy_read',
    'default_qdisc',
    'dev_weight',
    'dev_weight_rx_bias',
    'dev_weight_tx_bias',
    'devconf_inherit_init_net',
    'fb_tunnels_only_for_init_net',
    'flow_limit_cpu_bitmap',
    'flow_limit_table_len',
    'gro_normal_batch',
    'high_order_alloc_disable',
    'max_skb_frags',
    'mem_pcpu_rsv',
    'message_burst',
    'message_cost',
    'netdev_budget',
    'netdev_budget_usecs',
    'netdev_max_backlog',
    'netdev_rss_key',
    'netdev_tstamp_prequeue',
    'netdev_unregister_timeout_secs',
    'rps_sock_flow_entries',
    'skb_defer_max',
    'warnings',
  ].map((k) => `net.core.${k}`),
  ...[
    'cipso_cache_bucket_size',
    'cipso_cache_enable',
    'cipso_rbm_optfmt',
    'cipso_rbm_strictvalid',
    'fib_sync_mem',
    'inet_peer_maxttl',
    'inet_peer_minttl',
    'inet_peer_threshold',
    'ipfrag_secret_interval',
    'tcp_available_ulp',
    'tcp_low_latency',
    'tcp_max_orphans',
    'tcp_mem',
    'udp_mem',
    'neigh.default.',
    ...[
      'error_burst',
      'error_cost',
      'gc_elasticity',
      'gc_interval',
      'gc_min_interval',
      'gc_min_interval_ms',
      'gc_thresh',
      'gc_timeout',
      'max_size',
      'redirect_load',
      'redirect_number',
      'redirect_silence',
    ].map((k) => `route.${k}`),
  ].map((k) => `net.ipv4.${k}`),
  ...[
    'calipso_cache_bucket_size',
    'calipso_cache_enable',
    'ip6frag_secret_interval',
    'mld_max_msf',
    'mld_qrv',
    'neigh.default.',
  ].map((k) => `net.ipv6.${k}`),
  'net.netfilter.nf_log_all_netns',
  'net.nf_conntrack_max',
]);

/** Present in every network namespace, but only the initial one may write them (the others read the host's value). */
const READ_ONLY_NET = new Set([
  'net.core.rmem_default',
  'net.core.rmem_max',
  'net.core.wmem_default',
  'net.core.wmem_max',
  'net.ipv4.tcp_allowed_congestion_control',
  'net.netfilter.nf_conntrack_buckets',
  'net.netfilter.nf_conntrack_expect_max',
  'net.netfilter.nf_conntrack_max',
]);

/** IPC namespace parameters (Kubernetes' namespaced sysctls besides `net.*`). */
const IPC = /^(kernel\.(shm(all|max|mni|_rmid_forced)|msg(max|mnb|mni)|sem)|fs\.mqueue\.)/;

/** `net/ipv4/ip_forward` → `net.ipv4.ip_forward`: sysctl(8) takes both separators. */
export function sysctlKey(key: string): string {
  return key.replace(/\//g, '.');
}

/**
 * Why `key` can't be a machine's own setting; undefined when it can (it belongs to the machine's network
 * namespace). Every reason says that machines share the host kernel.
 */
export function machineSysctlRefusal(key: string): string | undefined {
  const name = sysctlKey(key);
  const perMachine = 'only network-namespace settings (net.*) apply per machine';
  if (!name.startsWith('net.')) {
    return IPC.test(name)
      ? `machines share the host kernel and IPC namespace; ${perMachine}`
      : `machines share the host kernel; ${perMachine}`;
  }
  if (READ_ONLY_NET.has(name)) {
    return (
      "machines share the host kernel, which lets only the host's network namespace write this net.* setting; " +
      perMachine
    );
  }
  if (isHostOnlyNet(name)) {
    return (
      'machines share the host kernel, which keeps this net.* setting for the whole host, not per network ' +
      `namespace; ${perMachine}`
    );
  }
  return undefined;
}

function isHostOnlyNet(name: string): boolean {
  if (HOST_ONLY_NET.has(name)) return true;
  for (let end = name.indexOf('.'); end >= 0; end = name.indexOf('.', end + 1)) {
    if (HOST_ONLY_NET.has(name.slice(0, end + 1))) return true;
  }
  return false;
}
