import { describe, expect, it } from 'vitest';
import {
  JOIN_PROBLEM_AFTER_MS,
  JOIN_PROBLEM_REPEAT_MS,
  apiServerUnreachable,
  joinProblemToReport,
} from '../../../../src/extensions/provider-local/machine/join-problem.js';

const URL = 'https://[fd00:10:2::1]:443';
// The kubelet's own lines (klog), as a kubelet that can't reach its API server writes them.
const REGISTER =
  `E1129 03:00:10.000000    4242 kubelet_node_status.go:107] "Unable to register node with API server" ` +
  `err="Post \\"${URL}/api/v1/nodes\\": dial tcp [fd00:10:2::1]:443: connect: connection refused" node="machine-a-0"`;
const WATCH =
  `E1129 03:00:11.000000    4242 reflector.go:166] "Unhandled Error" err="k8s.io/client-go/informers/factory.go:160: ` +
  `Failed to watch *v1.Node: failed to list *v1.Node: Get \\"${URL}/api/v1/nodes?fieldSelector=metadata.name%3Dmachine-a-0` +
  `&limit=500&resourceVersion=0\\": tls: failed to verify certificate: x509: certificate signed by unknown authority" ` +
  `logger="UnhandledError"`;
const CSR =
  `E1129 03:00:12.000000    4242 certificate_manager.go:562] "Unhandled Error" err="kubernetes.io/kube-apiserver-client-kubelet: ` +
  `Failed while requesting a signed certificate from the control plane: cannot create certificate signing request: ` +
  `Post \\"${URL}/apis/certificates.k8s.io/v1/certificatesigningrequests\\": dial tcp [fd00:10:2::1]:443: i/o timeout" ` +
  `logger="UnhandledError"`;
const OTHER = 'I1129 03:00:13.000000    4242 kubelet.go:2400] "Starting kubelet main sync loop"';

describe("the kubelet's log when it can't reach its API server", () => {
  it('names the API server and the last connection error', () => {
    expect(apiServerUnreachable([REGISTER, OTHER].join('\n'))).toBe(
      `kubelet can't reach the API server at ${URL}: dial tcp [fd00:10:2::1]:443: connect: connection refused`,
    );
    expect(apiServerUnreachable([REGISTER, WATCH, OTHER].join('\n'))).toBe(
      `kubelet can't reach the API server at ${URL}: tls: failed to verify certificate: x509: certificate signed by ` +
        'unknown authority',
    );
    expect(apiServerUnreachable([WATCH, CSR].join('\n'))).toBe(
      `kubelet can't reach the API server at ${URL}: dial tcp [fd00:10:2::1]:443: i/o timeout`,
    );
  });

  it('is undefined without such an error: a healthy log, an HTTP answer the server gave', () => {
    expect(apiServerUnreachable(OTHER)).toBeUndefined();
    expect(apiServerUnreachable('')).toBeUndefined();
    const forbidden =
      `E1129 03:00:10.000000    4242 kubelet_node_status.go:107] "Unable to register node with API server" ` +
      `err="nodes is forbidden: User \\"system:anonymous\\" cannot create resource \\"nodes\\"" node="machine-a-0"`;
    expect(apiServerUnreachable(forbidden)).toBeUndefined();
  });
});

describe('when the agent says it', () => {
  const problem = `kubelet can't reach the API server at ${URL}: dial tcp: connect: connection refused`;
  const started = 1_000_000;

  it('not before the machine is JOIN_PROBLEM_AFTER_MS old, then once a JOIN_PROBLEM_REPEAT_MS or when it changes', () => {
    expect(joinProblemToReport(problem, started, started + JOIN_PROBLEM_AFTER_MS - 1, undefined)).toBeUndefined();
    const at = started + JOIN_PROBLEM_AFTER_MS;
    expect(joinProblemToReport(problem, started, at, undefined)).toBe(problem);
    const said = { text: problem, at };
    expect(joinProblemToReport(problem, started, at + JOIN_PROBLEM_REPEAT_MS - 1, said)).toBeUndefined();
    expect(joinProblemToReport(problem, started, at + JOIN_PROBLEM_REPEAT_MS, said)).toBe(problem);
    expect(joinProblemToReport(`${problem}!`, started, at + 1, said)).toBe(`${problem}!`);
    expect(joinProblemToReport(undefined, started, at, undefined)).toBeUndefined();
  });
});
