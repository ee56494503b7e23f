/**
 * The long-running commands' stop: SIGTERM (a pod being stopped) or SIGINT (Ctrl-C) aborts what runs, which then
 * stops what it started before the command returns.
 */

/** Runs `work` with a signal that aborts on SIGTERM or SIGINT; the handlers go when it returns. */
export async function untilSignalled<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    return await work(stop.signal);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/** A log line with a timestamp, on stderr (a pod's log). */
export function timestamped(err: (text: string) => void): (line: string) => void {
  return (line) => err(`${new Date().toISOString()} ${line}\n`);
}
