import { describe, expect, it, vi } from 'vitest';
import {
  containerdPluginFailure,
  startFailureOf,
} from '../../../../src/extensions/provider-local/machine/start-failure.js';

const kernel = {
  sysctl: (key: string) => ({ 'fs.inotify.max_user_instances': '128', 'fs.inotify.max_user_watches': '8192' })[key],
};

// containerd 2.x: the plugin in `id`, the error quoted with escapes.
const CONTAINERD_2_EMFILE = [
  'time="2026-11-29T03:00:00.000000000Z" level=info msg="starting containerd" revision=abc version=v2.4.2',
  'time="2026-11-29T03:00:00.100000000Z" level=info msg="loading plugin" id=io.containerd.grpc.v1.cri type=io.containerd.grpc.v1',
  'time="2026-11-29T03:00:00.200000000Z" level=warning msg="failed to load plugin" error="failed to create CRI service: ' +
    'failed to create cni conf monitor for default: failed to create fsnotify watcher: too many open files" ' +
    'id=io.containerd.grpc.v1.cri type=io.containerd.grpc.v1',
  'time="2026-11-29T03:00:00.300000000Z" level=info msg="containerd successfully booted in 0.3s"',
].join('\n');

// containerd 1.x: the plugin in the message.
const CONTAINERD_1_OTHER =
  'time="2026-11-29T03:00:00Z" level=warning msg="failed to load plugin io.containerd.grpc.v1.cri" ' +
  'error="invalid plugin config: `mirrors` cannot be set when `config_path` is provided"';

const KUBELET_CAUSE =
  'exited with code 1: "command failed" err="failed to validate kubelet flags: the container runtime endpoint ' +
  'address was not specified or empty, use --container-runtime-endpoint to set"';

describe('containerdPluginFailure', () => {
  it('names the CRI plugin, its error and the host inotify limits with their values for too many open files', () => {
    expect(containerdPluginFailure(CONTAINERD_2_EMFILE, kernel)).toBe(
      'containerd runs without its CRI plugin: failed to load plugin io.containerd.grpc.v1.cri: failed to create ' +
        'CRI service: failed to create cni conf monitor for default: failed to create fsnotify watcher: too many ' +
        "open files: the host's inotify limits are exhausted; raise fs.inotify.max_user_instances (now 128) and " +
        'fs.inotify.max_user_watches (now 8192)',
    );
  });

  it('reads containerd 1.x lines, and names no host setting for another error', () => {
    expect(containerdPluginFailure(CONTAINERD_1_OTHER, kernel)).toBe(
      'containerd runs without its CRI plugin: failed to load plugin io.containerd.grpc.v1.cri: invalid plugin ' +
        'config: `mirrors` cannot be set when `config_path` is provided',
    );
  });

  it('says unknown for a limit it cannot read', () => {
    expect(containerdPluginFailure(CONTAINERD_2_EMFILE, { sysctl: () => undefined })).toContain(
      'fs.inotify.max_user_instances (now unknown)',
    );
  });

  it('is undefined for a log without a CRI plugin failure (another plugin, a healthy start)', () => {
    const other =
      'time="x" level=warning msg="failed to load plugin" error="no btrfs" id=io.containerd.snapshotter.v1.btrfs';
    expect(containerdPluginFailure(`${other}\n${CONTAINERD_2_EMFILE.split('\n')[3]}`, kernel)).toBeUndefined();
    expect(containerdPluginFailure('', kernel)).toBeUndefined();
  });

  it('prefers the plugin whose own error is too many open files over one that failed after it', () => {
    const after =
      'time="x" level=warning msg="failed to load plugin" error="plugin: not found" id=io.containerd.cri.v1.images';
    expect(containerdPluginFailure(`${after}\n${CONTAINERD_2_EMFILE}`, kernel)).toContain(
      'failed to load plugin io.containerd.grpc.v1.cri: failed to create CRI service',
    );
  });
});

describe('startFailureOf', () => {
  const exits = new Map([
    ['containerd', { count: 0, cause: '' }],
    ['kubelet', { count: 4, cause: KUBELET_CAUSE }],
  ]);

  it("reports containerd's CRI plugin failure, not the kubelet's last error, once the kubelet keeps exiting", () => {
    const failure = startFailureOf(exits, 4, () => CONTAINERD_2_EMFILE, kernel);
    expect(failure).toMatch(/^containerd runs without its CRI plugin: .*too many open files/);
    expect(failure).toContain('fs.inotify.max_user_instances (now 128)');
    expect(failure).not.toContain('kubelet');
  });

  it("reports the process's last exit when containerd loaded its plugins", () => {
    expect(startFailureOf(exits, 4, () => 'level=info msg="containerd successfully booted"', kernel)).toBe(
      `kubelet keeps exiting (4 times), last ${KUBELET_CAUSE}`,
    );
  });

  it("is undefined while no process exited `limit` times, without reading containerd's log", () => {
    const read = vi.fn(() => CONTAINERD_2_EMFILE);
    expect(startFailureOf(exits, 5, read, kernel)).toBeUndefined();
    expect(read).not.toHaveBeenCalled();
  });
});
