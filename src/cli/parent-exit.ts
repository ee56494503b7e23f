/**
 * Noticing that the process that started us is gone. `npx gardener-ipv6 up` runs us under npm and a shell; when a
 * signal ends those (or a terminal closes) we are re-parented and would run on unseen, holding the control plane.
 */

/** How often the parent is looked at. */
export const PARENT_CHECK_INTERVAL_MS = 500;

/**
 * Calls `onExit` once when the parent process has gone (our ppid changed). Returns a function that stops watching.
 * The timer does not keep the process alive.
 */
export function onParentExit(onExit: () => void, intervalMs = PARENT_CHECK_INTERVAL_MS): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onExit();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
