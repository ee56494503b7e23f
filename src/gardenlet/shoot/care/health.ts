/**
 * What the care controller's health checks report about what runs on the seed (the control plane's workloads, the
 * machine pods): a condition's status, reason and message.
 */
export interface HealthCheck {
  readonly ok: boolean;
  readonly reason: string;
  readonly message: string;
}

/** APIServerAvailable and ControlPlaneHealthy. */
export interface ControlPlaneHealth {
  readonly apiServer: HealthCheck;
  readonly controlPlane: HealthCheck;
}

/** EveryNodeReady and SystemComponentsHealthy. */
export interface WorkersHealth {
  readonly nodes: HealthCheck;
  readonly system: HealthCheck;
}
