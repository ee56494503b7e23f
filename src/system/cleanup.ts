/**
 * Last-resort cleanup when the process ends without stopping the control plane: an uncaught error, process.exit()
 * in a test runner, Ctrl-C. Handlers must be synchronous (kill, rmSync): nothing asynchronous runs in an `exit`
 * handler. The graceful path is ControlPlane.stop(); this only guarantees nothing is left behind.
 */

type Cleanup = () => void;

const cleanups = new Set<Cleanup>();
const signalUsers = new Set<Cleanup>();
let exitInstalled = false;
let signalsInstalled = false;

function runAll(): void {
  for (const fn of [...cleanups].reverse()) {
    cleanups.delete(fn);
    signalUsers.delete(fn);
    try {
      fn();
    } catch {
      // Keep going: the other resources still need cleaning.
    }
  }
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function onSignal(signal: NodeJS.Signals): void {
  const ours = signalUsers.size > 0;
  runAll();
  // A listener replaces Node's default of dying on the signal. If nobody else (a test runner, `up`) handles it,
  // restore the default and re-raise, so the process still ends as the user asked.
  if (ours && process.listenerCount(signal) === 1) {
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    signalsInstalled = false;
    process.kill(process.pid, signal);
  }
}

/**
 * Registers a synchronous cleanup for process exit, and with `signals` also for SIGINT/SIGTERM/SIGHUP (for
 * library use where nobody else handles them). Returns the function that unregisters it after a normal stop.
 */
export function onEmergencyExit(fn: Cleanup, opts: { signals: boolean }): () => void {
  if (!exitInstalled) {
    process.on('exit', runAll);
    exitInstalled = true;
  }
  cleanups.add(fn);
  if (opts.signals) {
    signalUsers.add(fn);
    if (!signalsInstalled) {
      for (const s of SIGNALS) process.on(s, onSignal);
      signalsInstalled = true;
    }
  }
  return () => {
    cleanups.delete(fn);
    signalUsers.delete(fn);
    if (signalUsers.size === 0 && signalsInstalled) {
      for (const s of SIGNALS) process.removeListener(s, onSignal);
      signalsInstalled = false;
    }
  };
}
