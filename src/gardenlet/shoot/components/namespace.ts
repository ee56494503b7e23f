import type { V1Namespace } from '@kubernetes/client-node';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { Annotations, Labels, projectName, seedNamespaceName } from '../../../apis/core/v1beta1/names.js';

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
