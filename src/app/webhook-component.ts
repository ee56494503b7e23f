/**
 * The admission webhook (src/admission/server.ts) as a component of the manager (src/runtime/manager.ts): it starts
 * with the manager, before the informers (it serves while they sync), on every replica whether it leads or not (each
 * replica's webhook answers the API server; only the controllers wait for the lease), and stops after the
 * controllers and the informers.
 *
 * Its start reads the aggregation layer's request-header configuration, listens, and registers the webhook
 * configurations and the APIService of `shoots/adminkubeconfig`. When the manager's stop begins it unregisters them,
 * beside the controllers' stop; it closes once they stopped too: a registered webhook that no longer answers blocks
 * every write (failurePolicy Fail), and the controllers write until they stop.
 */
import { deployLocalAPIService, destroyLocalAPIService } from '../admission/apiservice.js';
import { readRequestHeaderConfig, type RequestHeaderConfig } from '../admission/front-proxy.js';
import { startAdmissionServer, type AdmissionServer, type AdmissionServerOptions } from '../admission/server.js';
import {
  desiredWebhookConfigurations,
  deployWebhookConfigurations,
  destroyWebhookConfigurations,
  webhookBaseURL,
} from '../admission/webhook-configurations.js';
import type { ResourceClient } from '../runtime/client.js';
import type { Logger } from '../runtime/log.js';
import type { ManagerComponent } from '../runtime/manager.js';

export interface WebhookRegistration {
  /** The CA the API server checks the webhook's certificate with. */
  readonly caBundle: string;
  /** The address the API server reaches the webhook at. */
  readonly advertiseHost: string;
  /** Also register the APIService of `shoots/adminkubeconfig` (not at a loopback address: see apiservice.ts). */
  readonly apiService: boolean;
}

export interface WebhookComponentOptions {
  /** The server's options, given the request-header configuration (undefined: `shoots/adminkubeconfig` answers 401). */
  readonly server: (requestHeader: RequestHeaderConfig | undefined) => AdmissionServerOptions;
  /** Reads the request-header configuration, registers and unregisters: the manager's. */
  readonly client: ResourceClient;
  readonly logger: Logger;
  /** Register with the API server; none: a Helm deployment registers through its Service. */
  readonly registration?: WebhookRegistration;
  /**
   * How long unregistering, and closing after it, may take from now: the runtime's shutdown timeout, or less when its
   * stop has a deadline.
   */
  readonly stopBudgetMs: () => number;
}

export class WebhookComponent implements ManagerComponent {
  readonly name = 'admission webhook';
  /** The server, once it listens. */
  server: AdmissionServer | undefined;
  private starting: Promise<void> | undefined;
  /** Set once registering began: what the stop unregisters. */
  private unregistering: Promise<void> | undefined;
  private registering = false;
  private started = false;

  constructor(private readonly opts: WebhookComponentOptions) {}

  start(stopping: AbortSignal): Promise<void> {
    stopping.addEventListener('abort', () => void this.unregister(), { once: true });
    this.starting = this.listenAndRegister(stopping);
    return this.starting;
  }

  async stop({ timeoutMs }: { timeoutMs: number }): Promise<void> {
    await this.unregister();
    // A start that did not finish has no request in flight to wait for.
    const graceMs = this.started ? Math.min(timeoutMs, this.budgetMs()) : 0;
    await this.server?.close({ graceMs });
  }

  private async listenAndRegister(stopping: AbortSignal): Promise<void> {
    const { logger, registration, client } = this.opts;
    // Cut short by the stop: an API server that does not answer would otherwise hold the start, and the stop with it.
    const requestHeader = await readRequestHeaderConfig(client, { signal: stopping }).catch((e: unknown) => {
      logger.warn({ err: e }, 'reading the request-header configuration failed: shoots/adminkubeconfig answers 401');
      return undefined;
    });
    if (requestHeader === undefined) {
      logger.warn('the API server has no aggregation layer (requestheader flags): shoots/adminkubeconfig answers 401');
    }
    stopping.throwIfAborted();
    this.server = await startAdmissionServer(this.opts.server(requestHeader));
    if (registration !== undefined) {
      this.registering = true;
      await register(client, registration, this.server.port, logger, stopping);
    }
    this.started = true;
  }

  /** Unregisters once what registering began has settled (so that no write of it lands after the delete); bounded. */
  private unregister(): Promise<void> {
    return (this.unregistering ??= (async () => {
      await this.starting?.catch(() => {});
      const { registration, logger } = this.opts;
      if (!this.registering || registration === undefined) return;
      // Bounded: against an API server that stopped answering (its etcd died), a request would wait for the
      // server's own 34 s timeout.
      const bound = { signal: AbortSignal.timeout(this.budgetMs()) };
      // The manager's client: the manager closes it after its components stopped.
      const { client } = this.opts;
      await Promise.all([
        destroyWebhookConfigurations(client, undefined, bound).catch((err: unknown) =>
          logger.warn({ err }, 'unregistering the webhooks failed'),
        ),
        registration.apiService
          ? destroyLocalAPIService(client, bound).catch((err: unknown) =>
              logger.warn({ err }, 'unregistering shoots/adminkubeconfig failed'),
            )
          : undefined,
      ]);
    })());
  }

  private budgetMs(): number {
    return Math.max(0, this.opts.stopBudgetMs());
  }
}

async function register(
  client: ResourceClient,
  { caBundle, advertiseHost, apiService }: WebhookRegistration,
  port: number,
  logger: Logger,
  signal: AbortSignal,
): Promise<void> {
  const url = webhookBaseURL(advertiseHost, port);
  await deployWebhookConfigurations(client, desiredWebhookConfigurations({ caBundle, url }), { signal });
  logger.info({ url }, 'registered the admission webhooks');
  if (!apiService) {
    logger.info(
      { advertiseHost },
      'shoots/adminkubeconfig not registered: the API server reaches no aggregated API at a loopback address',
    );
    return;
  }
  await deployLocalAPIService(client, {
    caBundle,
    address: advertiseHost.replace(/^\[(.*)\]$/, '$1'),
    port,
    signal,
  });
  logger.info({ apiService: 'v1alpha1.core.gardener.cloud' }, 'registered shoots/adminkubeconfig');
}
