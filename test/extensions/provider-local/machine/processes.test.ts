import { describe, expect, it } from 'vitest';
import { lastErrorLine } from '../../../../src/extensions/provider-local/machine/processes.js';

describe("the line of a machine process's log that says why it stopped", () => {
  it("is klog's last error, without its header", () => {
    const log = [
      'I1128 19:10:00.100000    4242 server.go:487] "Kubelet version" kubeletVersion="v1.31.1"',
      'E1128 19:10:00.200000    4242 run.go:72] "command failed" err="failed to run Kubelet: validate service ' +
        'connection: validate CRI v1 runtime API for endpoint \\"unix:///run/containerd/containerd.sock\\": rpc ' +
        'error: code = Unimplemented desc = unknown service runtime.v1.RuntimeService"',
      'I1128 19:10:00.300000    4242 shutdown.go:12] "shutting down"',
    ].join('\n');
    expect(lastErrorLine(log)).toBe(
      '"command failed" err="failed to run Kubelet: validate service connection: validate CRI v1 runtime API for ' +
        'endpoint \\"unix:///run/containerd/containerd.sock\\": rpc error: code = Unimplemented desc = unknown ' +
        'service runtime.v1.RuntimeService"',
    );
  });

  it("is logrus's last error or fatal line (containerd), without its time", () => {
    const log = [
      'time="2026-11-28T19:10:00Z" level=info msg="starting containerd"',
      'time="2026-11-28T19:10:01Z" level=warning msg="failed to load plugin io.containerd.grpc.v1.cri" ' +
        'error="failed to create inotify watcher: too many open files"',
      'time="2026-11-28T19:10:02Z" level=fatal msg="failed to listen" error="address in use"',
    ].join('\n');
    expect(lastErrorLine(log)).toBe('level=fatal msg="failed to listen" error="address in use"');
  });

  it('is the last line of a log without errors, bounded, and empty for none', () => {
    expect(lastErrorLine('starting\nexec: "kube-proxy": not found\n\n')).toBe('exec: "kube-proxy": not found');
    expect(lastErrorLine('x'.repeat(500), 100)).toHaveLength(100);
    expect(lastErrorLine('')).toBe('');
  });
});
