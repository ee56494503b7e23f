/**
 * A machine's configuration files: those its deploy writes (containerd's, the kubeconfigs, kube-proxy's, the CNI
 * plugins' links) and the node agent's work of applying the OperatingSystemConfig, the kubelet's configuration
 * included. What the files say is config.ts's.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, symlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { parse as parseYAML } from 'yaml';
import type { File } from '../../../apis/extensions/v1alpha1/operatingsystemconfig.js';
import {
  KUBELET_CONFIG_FILE_PATH,
  KUBELET_NODE_LABELS_FILE_PATH,
  parseNodeLabels,
} from '../../../apis/provider-local/v1alpha1/kubelet.js';
import type { SupervisedProcess } from '../../../system/supervisor.js';
import {
  applyOperatingSystemConfig,
  decodeFiles,
  directoryTarget,
  OperatingSystemConfigError,
  type ApplyResult,
  type NodeAgentTarget,
} from '../node-agent/node-agent.js';
import {
  CNI_PLUGINS,
  MACHINE_PATHS,
  containerdConfig,
  defaultRegistryHostsToml,
  kubeProxyConfig,
  kubeconfig,
  kubeletConfig,
  machineResolvConf,
  parseOSCKubeletConfig,
  type KubeletConfigOptions,
} from './config.js';
import { writeFileInside } from './holder.js';
import { CGROUP_DELEGATION_HOOK, containerdBaseRuntimeSpec } from './cgroup-delegation.js';
import { kubeletHostProblems, procHostKernel } from './kubelet-host.js';
import { nodeIPsOf, type MachineContext } from './machine-options.js';

const run = promisify(execFile);

/**
 * What the machine's configuration asks and can't be had: a file or kubelet setting it can't use, a kernel parameter
 * the kernel refuses. Another try of the same configuration fails the same way.
 */
export class MachineConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MachineConfigurationError';
  }
}

/** The files a deployed machine needs before its processes start, but for the OSC's. */
export async function writeMachineConfigs(machine: MachineContext): Promise<void> {
  const o = machine.opts;
  const write = (path: string, content: string, mode?: number) => writeFileInside(machine.rootDir, path, content, mode);
  const server = {
    server: o.apiServer.url,
    caPEM: o.apiServer.caPEM,
    ...(o.apiServer.tlsServerName ? { tlsServerName: o.apiServer.tlsServerName } : {}),
  };
  const delegate = o.delegateCgroupsToUserNamespaces === true;
  if (delegate) {
    await write(MACHINE_PATHS.cgroupDelegationHook, CGROUP_DELEGATION_HOOK, 0o755);
    // containerd's own default spec, which a base spec replaces.
    const { stdout } = await run(join(o.binDir, 'ctr'), ['oci', 'spec']);
    const defaultSpec = JSON.parse(stdout) as Record<string, unknown>;
    await write(
      MACHINE_PATHS.containerdBaseRuntimeSpec,
      JSON.stringify(containerdBaseRuntimeSpec(defaultSpec, MACHINE_PATHS.cgroupDelegationHook), null, 2),
    );
  }
  await write(
    MACHINE_PATHS.containerdConfig,
    containerdConfig({
      runcBinary: join(o.binDir, 'runc'),
      ...(delegate ? { baseRuntimeSpec: MACHINE_PATHS.containerdBaseRuntimeSpec } : {}),
      ...(o.cniBinDir !== undefined ? { cniBinDir: o.cniBinDir } : {}),
    }),
  );
  await write(MACHINE_PATHS.caFile, o.apiServer.caPEM);
  await write(MACHINE_PATHS.resolvConf, machineResolvConf(o.upstreamDNS));
  await write(MACHINE_PATHS.defaultRegistryHosts, defaultRegistryHostsToml());
  if ('credentials' in o.join) {
    const { credentials, kubeProxyCredentials } = o.join;
    await write(
      MACHINE_PATHS.kubeletKubeconfig,
      kubeconfig({ ...server, ...credentials, user: `system:node:${o.name}` }),
      0o600,
    );
    await write(
      MACHINE_PATHS.kubeProxyKubeconfig,
      kubeconfig({ ...server, ...kubeProxyCredentials, user: 'system:kube-proxy' }),
      0o600,
    );
  } else {
    await write(
      MACHINE_PATHS.kubeletBootstrapKubeconfig,
      kubeconfig({ ...server, token: o.join.bootstrapToken, user: 'kubelet-bootstrap' }),
      0o600,
    );
    const issued = MACHINE_PATHS.kubeletClientCertificate;
    await write(
      MACHINE_PATHS.kubeProxyKubeconfig,
      kubeconfig({ ...server, certFile: issued, keyFile: issued, user: `system:node:${o.name}` }),
      0o600,
    );
  }
  await write(
    MACHINE_PATHS.kubeProxyConfig,
    kubeProxyConfig({ nodeName: o.name, clusterCIDRs: o.podCIDRs, primaryNodeIP: nodeIPsOf(o)[0]! }),
  );
  // The CNI plugins under the names containerd looks for; the files stay in binDir. A machine image has its own.
  for (const plugin of o.cniBinDir === undefined ? CNI_PLUGINS : []) {
    const link = join(machine.rootDir, MACHINE_PATHS.cniBinDir, plugin);
    await rm(link, { force: true });
    await symlink(join(o.binDir, `cni-${plugin}`), link);
  }
  await mkdir(join(machine.rootDir, MACHINE_PATHS.cniConfDir), { recursive: true });
}

/**
 * The node agent's work: the OSC's files into the machine, its sysctls (with the worker's overrides) into the
 * machine's network namespace, and the kubelet's configuration from the OSC's kubelet file with what the machine
 * owns (config.ts). Called again when the OSC or the worker's sysctls change: a changed kubelet configuration is
 * written and the kubelet restarted, as gardener-node-agent restarts `kubelet.service`. A kubelet file the machine
 * can't use (not a KubeletConfiguration, or asking what this host lacks) fails it before anything is written.
 *
 * @param kubelet the machine's running kubelet, if it runs
 */
export async function applyMachineOperatingSystemConfig(
  machine: MachineContext,
  osc: { spec: { files?: File[] } },
  sysctls: Record<string, string>,
  kubelet: () => SupervisedProcess | undefined,
): Promise<ApplyResult & { kubeletRestarted: boolean; nodeLabels: Record<string, string> }> {
  const kubeletOptions = kubeletConfigFor(machine, osc);
  const nodeLabels = nodeLabelsFor(machine, osc);
  const target = directoryTarget({ rootDir: machine.rootDir, netns: machine.netns });
  // A kernel parameter's value the kernel refuses is the configuration's problem, as is a file it can't decode.
  const configured: NodeAgentTarget = {
    ...target,
    setSysctls: (values) =>
      target.setSysctls(values).catch((e: Error) => {
        throw new MachineConfigurationError(`machine ${machine.opts.name}: ${e.message}`);
      }),
  };
  const result = await applyOperatingSystemConfig(osc, configured, sysctls).catch((e: Error) => {
    throw e instanceof OperatingSystemConfigError
      ? new MachineConfigurationError(`machine ${machine.opts.name}: ${e.message}`)
      : e;
  });
  for (const s of result.sysctls.skipped) machine.log(`sysctl ${s.key} skipped: ${s.reason}`);
  return { ...result, kubeletRestarted: await updateKubeletConfig(machine, kubeletOptions, kubelet), nodeLabels };
}

/** The labels the OSC's node-labels file asks the kubelet to register its Node with (none without one). */
function nodeLabelsFor(machine: MachineContext, osc: { spec: { files?: File[] } }): Record<string, string> {
  const file = decodeFiles(osc.spec.files).files.find((f) => f.path === KUBELET_NODE_LABELS_FILE_PATH);
  try {
    return file ? parseNodeLabels(file.content.toString('utf8')) : {};
  } catch (e) {
    throw new MachineConfigurationError(`machine ${machine.opts.name}: ${(e as Error).message}`);
  }
}

/** The kubelet configuration for an OSC: its kubelet file's settings (if it has one) with the machine's own. */
function kubeletConfigFor(machine: MachineContext, osc: { spec: { files?: File[] } }): KubeletConfigOptions {
  const file = decodeFiles(osc.spec.files).files.find((f) => f.path === KUBELET_CONFIG_FILE_PATH);
  const fromOperatingSystemConfig = file ? parseOSCKubeletConfig(file.content.toString('utf8')) : undefined;
  const problems = kubeletHostProblems(
    fromOperatingSystemConfig,
    machine.opts.hostKernel ?? procHostKernel,
    KUBELET_CONFIG_FILE_PATH,
  );
  if (problems.length > 0) throw new MachineConfigurationError(`machine ${machine.opts.name}: ${problems.join('; ')}`);
  return {
    clusterDNS: [machine.opts.clusterDNS],
    clusterDomain: machine.opts.clusterDomain ?? 'cluster.local',
    ...(fromOperatingSystemConfig ? { fromOperatingSystemConfig } : {}),
  };
}

/**
 * Writes the kubelet's configuration if it changed, and restarts a running kubelet then. A changed CPU manager
 * policy also removes the policy's state file, which the kubelet would otherwise refuse to start with (as
 * gardener-node-agent does).
 */
async function updateKubeletConfig(
  machine: MachineContext,
  opts: KubeletConfigOptions,
  running: () => SupervisedProcess | undefined,
): Promise<boolean> {
  const text = kubeletConfig(opts);
  const file = join(machine.rootDir, MACHINE_PATHS.kubeletConfig);
  const previous = await readFile(file, 'utf8').catch(() => undefined);
  if (previous === text) return false;
  const policy = (yaml: string | undefined) =>
    (yaml ? (parseYAML(yaml) as { cpuManagerPolicy?: string }).cpuManagerPolicy : undefined) ?? 'none';
  if (previous !== undefined && policy(previous) !== policy(text)) {
    await rm(join(machine.rootDir, MACHINE_PATHS.kubeletDir, 'cpu_manager_state'), { force: true });
  }
  await writeFileInside(machine.rootDir, MACHINE_PATHS.kubeletConfig, text);
  const kubelet = running();
  if (kubelet === undefined) return false;
  machine.log('kubelet configuration changed; restarting the kubelet');
  await kubelet.restart(10_000);
  return true;
}
