/** Leader election for tests against the fake API server: a lease of 1.5 s, so that a standby takes over quickly. */
import type { ManagerOptions } from '../../src/runtime/manager.js';

export function fastLeaderElection(identity: string): ManagerOptions['leaderElection'] {
  return {
    name: 'lock',
    namespace: 'garden',
    identity,
    leaseDurationMs: 1500,
    renewDeadlineMs: 1000,
    retryPeriodMs: 200,
  };
}
