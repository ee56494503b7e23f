/**
 * Kubernetes Events about an object (`core/v1`), as client-go's EventRecorder writes them: what `kubectl describe`
 * shows under Events. Recording never fails the caller: an event that can't be written is logged and dropped.
 */
import { randomBytes } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResourceClient } from './client.js';
import type { ResourceRef } from '../apis/refs.js';
import { realClock, type Clock } from './clock.js';
import type { Logger } from './log.js';
import { metav1Time } from '../apis/meta/time.js';

export const EventRef: ResourceRef = { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true };

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  event(object: KubernetesObject, type: EventType, reason: string, message: string): Promise<void>;
}

/** The Event object client-go would write for `object` (pure; the name is unique per call). */
export function eventFor(
  object: KubernetesObject,
  type: EventType,
  reason: string,
  message: string,
  component: string,
  now: Date,
): KubernetesObject & Record<string, unknown> {
  const meta = object.metadata ?? {};
  const time = metav1Time(now.getTime());
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name: `${meta.name ?? 'object'}.${now.getTime().toString(16)}${randomBytes(4).toString('hex')}`,
      namespace: meta.namespace ?? 'default',
    },
    involvedObject: {
      apiVersion: object.apiVersion,
      kind: object.kind,
      name: meta.name,
      ...(meta.namespace ? { namespace: meta.namespace } : {}),
      ...(meta.uid ? { uid: meta.uid } : {}),
      ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
    },
    type,
    reason,
    // client-go truncates messages at 1024 characters.
    message: message.length > 1024 ? `${message.slice(0, 1021)}...` : message,
    source: { component },
    reportingComponent: component,
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
  };
}

export function eventRecorder(opts: {
  client: ResourceClient;
  component: string;
  logger: Logger;
  clock?: Clock;
}): EventRecorder {
  const clock = opts.clock ?? realClock;
  return {
    async event(object, type, reason, message) {
      const event = eventFor(object, type, reason, message, opts.component, new Date(clock.now()));
      try {
        await opts.client.create(EventRef, event);
      } catch (e) {
        opts.logger.warn({ err: e, reason }, 'recording an event failed');
      }
    },
  };
}
