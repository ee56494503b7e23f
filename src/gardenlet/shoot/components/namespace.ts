import type { V1Namespace } from '@kubernetes/client-node';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { Annotations, Labels, projectName, seedNamespaceName } from '../../../apis/core/v1beta1/names.js';

import type { ResourceClient } from '../../../runtime/client.js';
import { isAlreadyExists } from '../../../runtime/errors.js';
import { applyAll, waitGone } from '../../apply.js';
import { NotReadyError, type ComponentContext, type DeployWaiter } from '../../component.js';
import { inProjectNamespace, notInProjectNamespaceMessage } from '../../../apis/core/v1beta1/names.js';
import { Refs } from '../../../apis/refs.js';
import { describeOwner, SeedNamespaceOwnedError, seedNamespaceOwnership } from '../ownership.js';
/**
 * The seed namespace `shoot--<project>--<shoot>` that holds the shoot's control plane objects. It records its
 * owner's UID as Gardener does (annotation `shoot.gardener.cloud/uid`), and as a label like every other object.
 */
export function desiredSeedNamespace(shoot: Shoot): V1Namespace {
  const uid = shoot.metadata.uid;
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: seedNamespaceName(shoot),
      labels: {
        [Labels.role]: 'shoot',
        [Labels.project]: projectName(shoot),
        [Labels.shoot]: shoot.metadata.name ?? '',
        ...(uid ? { [Labels.shootUID]: uid } : {}),
      },
      ...(uid ? { annotations: { [Annotations.shootUID]: uid } } : {}),
    },
  };
}

/**
 * The seed namespace, the shoot's own only: one another shoot owns is neither adopted nor deleted (see
 * ownership.ts). One that is being deleted is waited for (and created again once it is gone).
 */
export class SeedNamespace implements DeployWaiter {
  constructor(
    private readonly client: ResourceClient,
    /** Where the shoot that owns a namespace is looked up. */
    private readonly garden: ResourceClient,
    private readonly shoot: Shoot,
    /**
     * What must let go of the namespace while it is deleted under the shoot (the DNS records need their secret until
     * they are gone). @default nothing
     */
    private readonly whileDeleted: (namespace: string, ctx: ComponentContext) => Promise<void> = async () => {},
  ) {}
  async deploy(ctx: ComponentContext) {
    const name = seedNamespaceName(this.shoot);
    if (!inProjectNamespace(this.shoot)) throw new Error(notInProjectNamespaceMessage(this.shoot));
    const ownership = await seedNamespaceOwnership(this.client, this.garden, this.shoot, ctx);
    switch (ownership.kind) {
      case 'absent':
        try {
          await this.client.create(Refs.namespace, desiredSeedNamespace(this.shoot), { signal: ctx.signal });
        } catch (e) {
          // Created meanwhile (by whom decides the next look).
          if (isAlreadyExists(e)) throw new NotReadyError(`the seed namespace ${name} was created meanwhile`);
          throw e;
        }
        return;
      case 'foreign':
        if (ownership.terminating) {
          throw new NotReadyError(`the seed namespace ${name} of ${describeOwner(ownership.owner)} is being deleted`);
        }
        throw new SeedNamespaceOwnedError(name, ownership.owner);
      default:
        if (ownership.terminating) {
          await this.whileDeleted(name, ctx);
          throw new NotReadyError(`the seed namespace ${name} is being deleted; it is created again once it is gone`);
        }
        await applyAll(this.client, Refs.namespace, [desiredSeedNamespace(this.shoot)], ctx);
    }
  }
  /** Deletes the namespace when it is the shoot's (exactly the one checked: a UID precondition). */
  async destroy(ctx: ComponentContext) {
    const ownership = await seedNamespaceOwnership(this.client, this.garden, this.shoot, ctx);
    if (ownership.kind !== 'own' && ownership.kind !== 'orphaned') return;
    if (ownership.terminating) return;
    await this.client.delete(Refs.namespace, seedNamespaceName(this.shoot), undefined, {
      signal: ctx.signal,
      ...(ownership.uid ? { preconditions: { uid: ownership.uid } } : {}),
    });
  }
  waitCleanup(ctx: ComponentContext) {
    return waitGone(this.client, Refs.namespace, [seedNamespaceName(this.shoot)], undefined, ctx);
  }
}
