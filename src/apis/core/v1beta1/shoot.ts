/**
 * Shoot (core.gardener.cloud/v1beta1), every field of Gardener's `types_shoot.go`. Objects are strict, as Gardener's
 * API server decodes them: a misspelled field is an error naming it, not a setting silently ignored. Only the
 * `runtime.RawExtension` fields (`providerConfig`, `infrastructureConfig`, `controlPlaneConfig`, an admission
 * plugin's `config`) keep whatever they hold: their extension validates them.
 *
 * Kept as one file (over 400 lines): it mirrors `types_shoot.go` field by field, so a field is found where Gardener has
 * it.
 */
import { z } from 'zod';
import {
  ConditionSchema,
  int32,
  int64,
  IntOrStringSchema,
  LastErrorSchema,
  LastOperationSchema,
  ObjectMetaSchema,
  QuantitySchema,
  RawExtensionSchema,
} from '../../meta/schemas.js';
import { LabelSelectorRequirementSchema } from '../../meta/label-selector.js';
import {
  AccessRestrictionWithOptionsSchema,
  ControlPlaneAutoscalingSchema,
  CoreTaintSchema,
  DurationSchema,
  ExtensionSchema,
  FeatureGatesSchema,
  GardenerSchema,
  NamedResourceReferenceSchema,
  ObjectReferenceSchema,
  ResourceListSchema,
  StringMapSchema,
  BackupSchema,
} from './common.js';

export const GROUP = 'core.gardener.cloud';
export const VERSION = 'v1beta1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Shoot `spec.networking`. `ipFamilies` is a plain string list here: unsupported values are field errors. */
export const NetworkingSchema = z.strictObject({
  type: z.string().optional(),
  providerConfig: RawExtensionSchema.optional(),
  pods: z.string().optional(),
  nodes: z.string().optional(),
  services: z.string().optional(),
  ipFamilies: z.array(z.string()).optional(),
});
export type Networking = z.infer<typeof NetworkingSchema>;

/** Kubelet eviction thresholds: a quantity or a percentage (`100Mi`, `5%`). */
const KubeletConfigEvictionSchema = z.strictObject({
  memoryAvailable: z.string().optional(),
  imageFSAvailable: z.string().optional(),
  imageFSInodesFree: z.string().optional(),
  nodeFSAvailable: z.string().optional(),
  nodeFSInodesFree: z.string().optional(),
});

const KubeletConfigEvictionMinimumReclaimSchema = z.strictObject({
  memoryAvailable: QuantitySchema.optional(),
  imageFSAvailable: QuantitySchema.optional(),
  imageFSInodesFree: QuantitySchema.optional(),
  nodeFSAvailable: QuantitySchema.optional(),
  nodeFSInodesFree: QuantitySchema.optional(),
});

const KubeletConfigEvictionSoftGracePeriodSchema = z.strictObject({
  memoryAvailable: DurationSchema.optional(),
  imageFSAvailable: DurationSchema.optional(),
  imageFSInodesFree: DurationSchema.optional(),
  nodeFSAvailable: DurationSchema.optional(),
  nodeFSInodesFree: DurationSchema.optional(),
});

const KubeletConfigReservedSchema = z.strictObject({
  cpu: QuantitySchema.optional(),
  memory: QuantitySchema.optional(),
  ephemeralStorage: QuantitySchema.optional(),
  pid: QuantitySchema.optional(),
});

export const KubeletConfigSchema = z.strictObject({
  featureGates: FeatureGatesSchema.optional(),
  cpuCFSQuota: z.boolean().optional(),
  cpuManagerPolicy: z.string().optional(),
  evictionHard: KubeletConfigEvictionSchema.optional(),
  evictionMaxPodGracePeriod: int32().optional(),
  evictionMinimumReclaim: KubeletConfigEvictionMinimumReclaimSchema.optional(),
  evictionPressureTransitionPeriod: DurationSchema.optional(),
  evictionSoft: KubeletConfigEvictionSchema.optional(),
  evictionSoftGracePeriod: KubeletConfigEvictionSoftGracePeriodSchema.optional(),
  maxPods: int32().optional(),
  podPidsLimit: int64().optional(),
  failSwapOn: z.boolean().optional(),
  kubeReserved: KubeletConfigReservedSchema.optional(),
  systemReserved: KubeletConfigReservedSchema.optional(),
  imageGCHighThresholdPercent: int32().optional(),
  imageGCLowThresholdPercent: int32().optional(),
  imageMinimumGCAge: DurationSchema.optional(),
  imageMaximumGCAge: DurationSchema.optional(),
  serializeImagePulls: z.boolean().optional(),
  maxParallelImagePulls: int32().optional(),
  registryPullQPS: int32().optional(),
  registryBurst: int32().optional(),
  seccompDefault: z.boolean().optional(),
  containerLogMaxSize: QuantitySchema.optional(),
  containerLogMaxFiles: int32().optional(),
  protectKernelDefaults: z.boolean().optional(),
  streamingConnectionIdleTimeout: DurationSchema.optional(),
  memorySwap: z.strictObject({ swapBehavior: z.string().optional() }).optional(),
  singleProcessOOMKill: z.boolean().optional(),
  imagePullCredentialsVerificationPolicy: z.string().optional(),
  preloadedImagesVerificationAllowlist: z.array(z.string()).optional(),
});
export type KubeletConfig = z.infer<typeof KubeletConfigSchema>;

export const KubeControllerManagerConfigSchema = z.strictObject({
  featureGates: FeatureGatesSchema.optional(),
  horizontalPodAutoscaler: z
    .strictObject({
      cpuInitializationPeriod: DurationSchema.optional(),
      downscaleStabilization: DurationSchema.optional(),
      initialReadinessDelay: DurationSchema.optional(),
      syncPeriod: DurationSchema.optional(),
      tolerance: z.number().optional(),
    })
    .optional(),
  nodeCIDRMaskSize: int32().optional(),
  nodeCIDRMaskSizeIPv6: int32().optional(),
  podEvictionTimeout: DurationSchema.optional(),
  nodeMonitorGracePeriod: DurationSchema.optional(),
});
export type KubeControllerManagerConfig = z.infer<typeof KubeControllerManagerConfigSchema>;

const OIDCConfigSchema = z.strictObject({
  caBundle: z.string().optional(),
  clientAuthentication: z
    .strictObject({ extraConfig: StringMapSchema.optional(), secret: z.string().optional() })
    .optional(),
  clientID: z.string().optional(),
  groupsClaim: z.string().optional(),
  groupsPrefix: z.string().optional(),
  issuerURL: z.string().optional(),
  requiredClaims: StringMapSchema.optional(),
  signingAlgs: z.array(z.string()).optional(),
  usernameClaim: z.string().optional(),
  usernamePrefix: z.string().optional(),
});

export const KubeAPIServerConfigSchema = z.strictObject({
  featureGates: FeatureGatesSchema.optional(),
  admissionPlugins: z
    .array(
      z.strictObject({
        name: z.string(),
        config: RawExtensionSchema.optional(),
        disabled: z.boolean().optional(),
        kubeconfigSecretName: z.string().optional(),
      }),
    )
    .optional(),
  apiAudiences: z.array(z.string()).optional(),
  auditConfig: z
    .strictObject({
      auditPolicy: z.strictObject({ configMapRef: ObjectReferenceSchema.optional() }).optional(),
    })
    .optional(),
  oidcConfig: OIDCConfigSchema.optional(),
  runtimeConfig: FeatureGatesSchema.optional(),
  serviceAccountConfig: z
    .strictObject({
      issuer: z.string().optional(),
      extendTokenExpiration: z.boolean().optional(),
      maxTokenExpiration: DurationSchema.optional(),
      acceptedIssuers: z.array(z.string()).optional(),
    })
    .optional(),
  watchCacheSizes: z
    .strictObject({
      default: int32().optional(),
      resources: z
        .array(z.strictObject({ apiGroup: z.string().optional(), resource: z.string(), size: int32() }))
        .optional(),
    })
    .optional(),
  requests: z
    .strictObject({ maxNonMutatingInflight: int32().optional(), maxMutatingInflight: int32().optional() })
    .optional(),
  enableAnonymousAuthentication: z.boolean().optional(),
  eventTTL: DurationSchema.optional(),
  logging: z.strictObject({ verbosity: int32().optional(), httpAccessVerbosity: int32().optional() }).optional(),
  defaultNotReadyTolerationSeconds: int64().optional(),
  defaultUnreachableTolerationSeconds: int64().optional(),
  encryptionConfig: z
    .strictObject({
      resources: z.array(z.string()).optional(),
      provider: z.strictObject({ type: z.string().optional() }).optional(),
    })
    .optional(),
  structuredAuthentication: z.strictObject({ configMapName: z.string() }).optional(),
  structuredAuthorization: z
    .strictObject({
      configMapName: z.string(),
      kubeconfigs: z.array(z.strictObject({ authorizerName: z.string(), secretName: z.string() })).optional(),
    })
    .optional(),
  autoscaling: ControlPlaneAutoscalingSchema.optional(),
  tlsMinVersion: z.string().optional(),
});

export const KubeSchedulerConfigSchema = z.strictObject({
  featureGates: FeatureGatesSchema.optional(),
  kubeMaxPDVols: z.string().optional(),
  profile: z.string().optional(),
});

export const KubeProxyConfigSchema = z.strictObject({
  featureGates: FeatureGatesSchema.optional(),
  mode: z.string().optional(),
  enabled: z.boolean().optional(),
});

export const ClusterAutoscalerSchema = z.strictObject({
  scaleDownDelayAfterAdd: DurationSchema.optional(),
  scaleDownDelayAfterDelete: DurationSchema.optional(),
  scaleDownDelayAfterFailure: DurationSchema.optional(),
  scaleDownUnneededTime: DurationSchema.optional(),
  scaleDownUtilizationThreshold: z.number().optional(),
  scanInterval: DurationSchema.optional(),
  expander: z.string().optional(),
  maxNodeProvisionTime: DurationSchema.optional(),
  maxGracefulTerminationSeconds: int32().optional(),
  ignoreTaints: z.array(z.string()).optional(),
  newPodScaleUpDelay: DurationSchema.optional(),
  maxEmptyBulkDelete: int32().optional(),
  ignoreDaemonsetsUtilization: z.boolean().optional(),
  verbosity: int32().optional(),
  startupTaints: z.array(z.string()).optional(),
  statusTaints: z.array(z.string()).optional(),
  maxScaleDownParallelism: int32().optional(),
  maxDrainParallelism: int32().optional(),
  maxBinpackingTime: DurationSchema.optional(),
  initialNodeGroupBackoffDuration: DurationSchema.optional(),
  maxNodeGroupBackoffDuration: DurationSchema.optional(),
  nodeGroupBackoffResetTimeout: DurationSchema.optional(),
  emitPerNodeGroupMetrics: z.boolean().optional(),
  autoscaling: ControlPlaneAutoscalingSchema.optional(),
});

export const VerticalPodAutoscalerSchema = z.strictObject({
  enabled: z.boolean().optional(),
  evictAfterOOMThreshold: DurationSchema.optional(),
  evictionRateBurst: int32().optional(),
  evictionRateLimit: z.number().optional(),
  evictionTolerance: z.number().optional(),
  recommendationMarginFraction: z.number().optional(),
  updaterInterval: DurationSchema.optional(),
  recommenderInterval: DurationSchema.optional(),
  targetCPUPercentile: z.number().optional(),
  recommendationLowerBoundCPUPercentile: z.number().optional(),
  recommendationUpperBoundCPUPercentile: z.number().optional(),
  targetMemoryPercentile: z.number().optional(),
  recommendationLowerBoundMemoryPercentile: z.number().optional(),
  recommendationUpperBoundMemoryPercentile: z.number().optional(),
  cpuHistogramDecayHalfLife: DurationSchema.optional(),
  memoryHistogramDecayHalfLife: DurationSchema.optional(),
  memoryAggregationInterval: DurationSchema.optional(),
  memoryAggregationIntervalCount: int64().optional(),
  featureGates: FeatureGatesSchema.optional(),
  maxAllowed: ResourceListSchema.optional(),
  recommenderUpdateWorkerCount: int32().optional(),
});

const ETCDConfigSchema = z.strictObject({ autoscaling: ControlPlaneAutoscalingSchema.optional() });

export const KubernetesSchema = z.strictObject({
  clusterAutoscaler: ClusterAutoscalerSchema.optional(),
  kubeAPIServer: KubeAPIServerConfigSchema.optional(),
  kubeControllerManager: KubeControllerManagerConfigSchema.optional(),
  kubeScheduler: KubeSchedulerConfigSchema.optional(),
  kubeProxy: KubeProxyConfigSchema.optional(),
  kubelet: KubeletConfigSchema.optional(),
  version: z.string().optional(),
  verticalPodAutoscaler: VerticalPodAutoscalerSchema.optional(),
  enableStaticTokenKubeconfig: z.boolean().optional(),
  etcd: z.strictObject({ main: ETCDConfigSchema.optional(), events: ETCDConfigSchema.optional() }).optional(),
});

export const ShootMachineImageSchema = z.strictObject({
  name: z.string().optional(),
  providerConfig: RawExtensionSchema.optional(),
  version: z.string().optional(),
});

export const MachineSchema = z.strictObject({
  type: z.string().optional(),
  image: ShootMachineImageSchema.optional(),
  architecture: z.string().optional(),
});

export const VolumeSchema = z.strictObject({
  name: z.string().optional(),
  type: z.string().optional(),
  size: z.string().optional(),
  encrypted: z.boolean().optional(),
});

export const DataVolumeSchema = z.strictObject({
  name: z.string(),
  type: z.string().optional(),
  size: z.string().optional(),
  encrypted: z.boolean().optional(),
});

export const CRISchema = z.strictObject({
  name: z.string(),
  containerRuntimes: z
    .array(z.strictObject({ type: z.string(), providerConfig: RawExtensionSchema.optional() }))
    .optional(),
});

export const MachineControllerManagerSettingsSchema = z.strictObject({
  machineDrainTimeout: DurationSchema.optional(),
  machineHealthTimeout: DurationSchema.optional(),
  machineCreationTimeout: DurationSchema.optional(),
  maxEvictRetries: int32().optional(),
  nodeConditions: z.array(z.string()).optional(),
  inPlaceUpdateTimeout: DurationSchema.optional(),
  disableHealthTimeout: z.boolean().optional(),
  machinePreserveTimeout: DurationSchema.optional(),
  autoPreserveFailedMachineMax: int32().optional(),
});

export const ClusterAutoscalerOptionsSchema = z.strictObject({
  scaleDownUtilizationThreshold: z.number().optional(),
  scaleDownGpuUtilizationThreshold: z.number().optional(),
  scaleDownUnneededTime: DurationSchema.optional(),
  scaleDownUnreadyTime: DurationSchema.optional(),
  maxNodeProvisionTime: DurationSchema.optional(),
});

/** A worker pool that runs the control plane of a self-hosted shoot (GEP-28). */
export const WorkerControlPlaneSchema = z.strictObject({
  backup: BackupSchema.optional(),
  exposure: z
    .strictObject({
      extension: z
        .strictObject({ type: z.string().optional(), providerConfig: RawExtensionSchema.optional() })
        .optional(),
      dns: z.strictObject({}).optional(),
    })
    .optional(),
});

export const WorkerSchema = z.strictObject({
  annotations: StringMapSchema.optional(),
  caBundle: z.string().optional(),
  cri: CRISchema.optional(),
  kubernetes: z.strictObject({ kubelet: KubeletConfigSchema.optional(), version: z.string().optional() }).optional(),
  labels: StringMapSchema.optional(),
  name: z.string(),
  machine: MachineSchema.optional(),
  maximum: int32().optional(),
  minimum: int32().optional(),
  maxSurge: IntOrStringSchema.optional(),
  maxUnavailable: IntOrStringSchema.optional(),
  providerConfig: RawExtensionSchema.optional(),
  taints: z.array(CoreTaintSchema).optional(),
  volume: VolumeSchema.optional(),
  dataVolumes: z.array(DataVolumeSchema).optional(),
  kubeletDataVolumeName: z.string().optional(),
  zones: z.array(z.string()).optional(),
  systemComponents: z.strictObject({ allow: z.boolean().optional() }).optional(),
  machineControllerManager: MachineControllerManagerSettingsSchema.optional(),
  sysctls: StringMapSchema.optional(),
  clusterAutoscaler: ClusterAutoscalerOptionsSchema.optional(),
  priority: int32().optional(),
  updateStrategy: z.string().optional(),
  controlPlane: WorkerControlPlaneSchema.optional(),
});
export type Worker = z.infer<typeof WorkerSchema>;

export const ProviderSchema = z.strictObject({
  type: z.string().optional(),
  controlPlaneConfig: RawExtensionSchema.optional(),
  infrastructureConfig: RawExtensionSchema.optional(),
  workers: z.array(WorkerSchema).optional(),
  workersSettings: z
    .strictObject({ sshAccess: z.strictObject({ enabled: z.boolean().optional() }).optional() })
    .optional(),
});

/** A seed taint a shoot tolerates: any value of `key`, or only `value` when given (Gardener's `Toleration`). */
export const TolerationSchema = z.strictObject({
  key: z.string(),
  value: z.string().optional(),
});
export type Toleration = z.infer<typeof TolerationSchema>;

/** Which seeds the scheduler may choose: a label selector on the Seed, as Gardener's `SeedSelector`. */
export const SeedSelectorSchema = z.strictObject({
  matchLabels: StringMapSchema.optional(),
  matchExpressions: z.array(LabelSelectorRequirementSchema).optional(),
  providerTypes: z.array(z.string()).optional(),
});

const DNSIncludeExcludeSchema = z.strictObject({
  include: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
});

export const DNSProviderSchema = z.strictObject({
  domains: DNSIncludeExcludeSchema.optional(),
  primary: z.boolean().optional(),
  secretName: z.string().optional(),
  type: z.string().optional(),
  zones: DNSIncludeExcludeSchema.optional(),
  credentialsRef: ObjectReferenceSchema.optional(),
});

const AddonsSchema = z.strictObject({
  kubernetesDashboard: z
    .strictObject({ enabled: z.boolean().optional(), authenticationMode: z.string().optional() })
    .optional(),
  nginxIngress: z
    .strictObject({
      enabled: z.boolean().optional(),
      loadBalancerSourceRanges: z.array(z.string()).optional(),
      config: StringMapSchema.optional(),
      externalTrafficPolicy: z.string().optional(),
    })
    .optional(),
});

const HibernationSchema = z.strictObject({
  enabled: z.boolean().optional(),
  schedules: z
    .array(
      z.strictObject({
        start: z.string().optional(),
        end: z.string().optional(),
        location: z.string().optional(),
      }),
    )
    .optional(),
});

const RotationPeriodSchema = z.strictObject({ rotationPeriod: DurationSchema.optional() });

const MaintenanceSchema = z.strictObject({
  autoUpdate: z
    .strictObject({ kubernetesVersion: z.boolean().optional(), machineImageVersion: z.boolean().optional() })
    .optional(),
  timeWindow: z.strictObject({ begin: z.string().optional(), end: z.string().optional() }).optional(),
  confineSpecUpdateRollout: z.boolean().optional(),
  autoRotation: z
    .strictObject({
      credentials: z
        .strictObject({
          observability: RotationPeriodSchema.optional(),
          sshKeypair: RotationPeriodSchema.optional(),
          etcdEncryptionKey: RotationPeriodSchema.optional(),
        })
        .optional(),
    })
    .optional(),
});

const SystemComponentsSchema = z.strictObject({
  coreDNS: z
    .strictObject({
      autoscaling: z.strictObject({ mode: z.string() }).optional(),
      rewriting: z.strictObject({ commonSuffixes: z.array(z.string()).optional() }).optional(),
    })
    .optional(),
  nodeLocalDNS: z
    .strictObject({
      enabled: z.boolean().optional(),
      forceTCPToClusterDNS: z.boolean().optional(),
      forceTCPToUpstreamDNS: z.boolean().optional(),
      disableForwardToUpstreamDNS: z.boolean().optional(),
    })
    .optional(),
});

const ControlPlaneSchema = z.strictObject({
  highAvailability: z.strictObject({ failureTolerance: z.strictObject({ type: z.string() }) }).optional(),
});

export const ShootSpecSchema = z.strictObject({
  addons: AddonsSchema.optional(),
  cloudProfileName: z.string().optional(),
  dns: z.strictObject({ domain: z.string().optional(), providers: z.array(DNSProviderSchema).optional() }).optional(),
  extensions: z.array(ExtensionSchema).optional(),
  hibernation: HibernationSchema.optional(),
  kubernetes: KubernetesSchema.optional(),
  networking: NetworkingSchema.optional(),
  maintenance: MaintenanceSchema.optional(),
  monitoring: z
    .strictObject({ alerting: z.strictObject({ emailReceivers: z.array(z.string()).optional() }).optional() })
    .optional(),
  provider: ProviderSchema.optional(),
  purpose: z.string().optional(),
  region: z.string().optional(),
  secretBindingName: z.string().optional(),
  seedName: z.string().optional(),
  seedSelector: SeedSelectorSchema.optional(),
  resources: z.array(NamedResourceReferenceSchema).optional(),
  tolerations: z.array(TolerationSchema).optional(),
  exposureClassName: z.string().optional(),
  systemComponents: SystemComponentsSchema.optional(),
  controlPlane: ControlPlaneSchema.optional(),
  schedulerName: z.string().optional(),
  cloudProfile: z.strictObject({ name: z.string().optional(), kind: z.string().optional() }).optional(),
  credentialsBindingName: z.string().optional(),
  accessRestrictions: z.array(AccessRestrictionWithOptionsSchema).optional(),
});
export type ShootSpec = z.infer<typeof ShootSpecSchema>;

export const NetworkingStatusSchema = z.strictObject({
  pods: z.array(z.string()).optional(),
  nodes: z.array(z.string()).optional(),
  services: z.array(z.string()).optional(),
  egressCIDRs: z.array(z.string()).optional(),
});
export type NetworkingStatus = z.infer<typeof NetworkingStatusSchema>;

const PendingWorkersRolloutSchema = z.strictObject({
  name: z.string(),
  lastInitiationTime: z.string().optional(),
});

/** The times of a credentials rotation, and its phase for those that have phases. */
const RotationSchema = z.strictObject({
  phase: z.string().optional(),
  lastCompletionTime: z.string().optional(),
  lastInitiationTime: z.string().optional(),
  lastInitiationFinishedTime: z.string().optional(),
  lastCompletionTriggeredTime: z.string().optional(),
  pendingWorkersRollouts: z.array(PendingWorkersRolloutSchema).optional(),
});

const ShootCredentialsSchema = z.strictObject({
  rotation: z
    .strictObject({
      certificateAuthorities: RotationSchema.optional(),
      kubeconfig: RotationSchema.optional(),
      sshKeypair: RotationSchema.optional(),
      observability: RotationSchema.optional(),
      serviceAccountKey: RotationSchema.optional(),
      etcdEncryptionKey: RotationSchema.optional(),
    })
    .optional(),
});

export const ShootStatusSchema = z.strictObject({
  conditions: z.array(ConditionSchema).optional(),
  constraints: z.array(ConditionSchema).optional(),
  gardener: GardenerSchema.optional(),
  hibernated: z.boolean().optional(),
  lastOperation: LastOperationSchema.optional(),
  lastErrors: z.array(LastErrorSchema).optional(),
  observedGeneration: int64().optional(),
  retryCycleStartTime: z.string().optional(),
  seedName: z.string().optional(),
  technicalID: z.string().optional(),
  uid: z.string().optional(),
  clusterIdentity: z.string().optional(),
  advertisedAddresses: z.array(z.strictObject({ name: z.string(), url: z.string() })).optional(),
  migrationStartTime: z.string().optional(),
  credentials: ShootCredentialsSchema.optional(),
  lastHibernationTriggerTime: z.string().optional(),
  lastMaintenance: z
    .strictObject({
      description: z.string().optional(),
      triggeredTime: z.string().optional(),
      state: z.string().optional(),
      failureReason: z.string().optional(),
    })
    .optional(),
  encryptedResources: z.array(z.string()).optional(),
  networking: NetworkingStatusSchema.optional(),
  inPlaceUpdates: z
    .strictObject({
      pendingWorkerUpdates: z
        .strictObject({
          autoInPlaceUpdate: z.array(z.string()).optional(),
          manualInPlaceUpdate: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
  manualWorkerPoolRollout: z
    .strictObject({ pendingWorkersRollouts: z.array(PendingWorkersRolloutSchema).optional() })
    .optional(),
});
export type ShootStatus = z.infer<typeof ShootStatusSchema>;

export const ShootSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal('Shoot'),
    metadata: ObjectMetaSchema,
    spec: ShootSpecSchema,
    status: ShootStatusSchema.optional(),
  })
  .meta({ description: 'Shoot represents a Shoot cluster created and managed by Gardener.' });
export type Shoot = z.infer<typeof ShootSchema>;
