/**
 * Why a machine's kubelet has not joined yet, while it waits: a kubelet that can't reach its API server (a dial
 * error, a TLS error) retries forever and never exits, so nothing fails before the creation timeout (20 minutes)
 * names it. Its log says so at once; after JOIN_PROBLEM_AFTER_MS the agent says it in its own log, one line
 * (`machine <name>: not joined: kubelet can't reach the API server at https://[…]:443: dial tcp …: connect:
 * connection refused`) repeated every JOIN_PROBLEM_REPEAT_MS while it lasts, where the Worker controller reads it
 * (worker/machine-problems.ts) into its progress description: not an error yet, the machine may still join.
 */

/** How long after the start a machine not Ready has its join problem reported. */
export const JOIN_PROBLEM_AFTER_MS = 2 * 60_000;
/** How often a lasting join problem is said again (the Worker reads only recent lines). */
export const JOIN_PROBLEM_REPEAT_MS = 60_000;
/** What the agent's line says before the cause: `machine <name>: not joined: <cause>`. */
export const JOIN_PROBLEM_MARK = 'not joined: ';

/** Errors of reaching a server: the connection, its TLS, a timeout. HTTP answers are not among them. */
const UNREACHABLE =
  /dial tcp|connect: |i\/o timeout|no route to host|network is unreachable|connection re(fused|set)|tls: |x509: |\bEOF\b|context deadline exceeded|Client\.Timeout exceeded|TLS handshake timeout/;

/**
 * The last error of the kubelet's log (klog's quoted `err="…"` with the request's URL, `Post "https://…": <error>`)
 * that says it can't reach the API server, as `kubelet can't reach the API server at <scheme://host:port>: <error>`;
 * undefined when the log has none.
 */
export function apiServerUnreachable(kubeletLog: string): string | undefined {
  const lines = kubeletLog.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.replace(/\\"/g, '"');
    for (const m of [...line.matchAll(/"(https:\/\/[^"\s]+)": ([^"]+)/g)].reverse()) {
      const error = m[2]!.trim();
      if (!UNREACHABLE.test(error)) continue;
      // Scheme, host and port as the kubelet has them (URL's origin would drop a default port).
      const origin = /^https:\/\/[^/?#]+/.exec(m[1]!)![0];
      return `kubelet can't reach the API server at ${origin}: ${error}`;
    }
  }
  return undefined;
}

/**
 * What the agent says of a machine not Ready yet, at `now`: the join problem once the machine is JOIN_PROBLEM_AFTER_MS
 * old, when it is new or JOIN_PROBLEM_REPEAT_MS after it was last said; undefined otherwise.
 */
export function joinProblemToReport(
  problem: string | undefined,
  started: number,
  now: number,
  last: { readonly text: string; readonly at: number } | undefined,
): string | undefined {
  if (problem === undefined || now - started < JOIN_PROBLEM_AFTER_MS) return undefined;
  if (last !== undefined && last.text === problem && now - last.at < JOIN_PROBLEM_REPEAT_MS) return undefined;
  return problem;
}
