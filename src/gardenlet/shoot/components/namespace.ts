import type { V1Namespace } from '@kubernetes/client-node';
import type { Shoot } from '../../../apis/core/v1beta1/shoot.js';
import { Labels, projectName, seedNamespaceName } from '../../names.js';

/** The seed namespace `shoot--<project>--<shoot>` that holds the shoot's control plane objects. */
export function desiredSeedNamespace(shoot: Shoot): V1Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: seedNamespaceName(shoot),
      labels: {
        [Labels.role]: 'shoot',
        [Labels.project]: projectName(shoot),
        [Labels.shoot]: shoot.metadata.name ?? '',
      },
    },
  };
}
