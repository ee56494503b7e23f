/**
 * The shoot hibernation controller's decisions: which schedule time is due since the last trigger (or the shoot's
 * creation), in the schedule's location; a time missed by more than the deadline is skipped; when to look again.
 */
import { describe, expect, it } from 'vitest';
import type { Shoot } from '../../src/apis/core/v1beta1/shoot.js';
import { DEFAULT_TRIGGER_DEADLINE_MS, hibernationDecision } from '../../src/controllermanager/shoot-hibernation.js';
import { ipv4ShootObject } from '../fixtures/objects.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function scheduled(
  schedules: NonNullable<Shoot['spec']['hibernation']>['schedules'],
  opts: { created?: string; lastTrigger?: string; enabled?: boolean } = {},
): Shoot {
  const shoot = ipv4ShootObject();
  shoot.metadata.creationTimestamp = opts.created ?? '2026-11-01T00:00:00Z';
  shoot.spec.hibernation = { ...(opts.enabled !== undefined ? { enabled: opts.enabled } : {}), schedules };
  if (opts.lastTrigger) shoot.status = { ...shoot.status, lastHibernationTriggerTime: opts.lastTrigger };
  return shoot;
}

const decide = (shoot: Shoot, now: string) => {
  const d = hibernationDecision(shoot, at(now), DEFAULT_TRIGGER_DEADLINE_MS);
  return { ...d, scheduled: iso(d.scheduled), next: iso(d.next) };
};

const WORKDAYS = [{ start: '0 20 * * 1-5', end: '0 6 * * 1-5', location: 'Europe/Berlin' }];

describe('hibernation schedules', () => {
  it('hibernates at the start time, in the location (20:00 Berlin is 19:00 UTC in winter)', () => {
    const shoot = scheduled(WORKDAYS, { lastTrigger: '2026-11-26T05:00:00Z' });
    expect(decide(shoot, '2026-11-26T18:59:00Z')).toEqual({
      scheduled: undefined,
      next: '2026-11-26T19:00:00.000Z',
    });
    expect(decide(shoot, '2026-11-26T19:00:30Z')).toEqual({
      enabled: true,
      scheduled: '2026-11-26T19:00:00.000Z',
      next: '2026-11-27T05:00:00.000Z',
    });
  });

  it('wakes up at the end time; a trigger already acted on does not count again', () => {
    const shoot = scheduled(WORKDAYS, { lastTrigger: '2026-11-26T19:00:30Z', enabled: true });
    expect(decide(shoot, '2026-11-26T23:00:00Z').enabled).toBeUndefined();
    expect(decide(shoot, '2026-11-27T05:00:10Z')).toMatchObject({
      enabled: false,
      scheduled: '2026-11-27T05:00:00.000Z',
    });
  });

  it('acts on the latest time since the last trigger only, and not at all on weekends here', () => {
    // Friday 20:00 hibernated; on Saturday noon nothing is due, the next time is Monday 06:00 Berlin.
    const shoot = scheduled(WORKDAYS, { lastTrigger: '2026-11-27T19:00:05Z', enabled: true });
    expect(decide(shoot, '2026-11-28T12:00:00Z')).toEqual({
      scheduled: undefined,
      next: '2026-11-30T05:00:00.000Z',
    });
  });

  it('counts from the creation of a shoot never triggered', () => {
    const shoot = scheduled([{ start: '0 20 * * *' }], { created: '2026-11-26T19:30:00Z' });
    // Created before today's 20:00: that time is due once it passed.
    expect(decide(shoot, '2026-11-26T19:59:00Z').enabled).toBeUndefined();
    expect(decide(shoot, '2026-11-26T20:00:00Z').enabled).toBe(true);
    // A shoot created after the time waits for the next one.
    const later = scheduled([{ start: '0 20 * * *' }], { created: '2026-11-26T20:30:00Z' });
    expect(decide(later, '2026-11-26T21:00:00Z').enabled).toBeUndefined();
  });

  it('skips a time missed by more than the trigger deadline', () => {
    const shoot = scheduled([{ start: '0 20 * * *' }], { lastTrigger: '2026-11-25T20:00:00Z' });
    expect(decide(shoot, '2026-11-26T23:00:00Z')).toEqual({
      scheduled: '2026-11-26T20:00:00.000Z',
      missed: true,
      next: '2026-11-27T20:00:00.000Z',
    });
    expect(decide(shoot, '2026-11-26T21:59:00Z').enabled).toBe(true);
  });

  it('takes the later of two due times, across schedules and locations', () => {
    const shoot = scheduled(
      [
        { start: '0 20 * * *', location: 'UTC' },
        { end: '0 21 * * *', location: 'Europe/Berlin' },
      ],
      { lastTrigger: '2026-11-26T19:00:00Z' },
    );
    // 20:00 UTC (start) and 21:00 Berlin = 20:00 UTC (end) at the same minute: hibernating wins.
    expect(decide(shoot, '2026-11-26T20:01:00Z')).toMatchObject({ enabled: true });
    const wakeLater = scheduled(
      [
        { start: '0 20 * * *', location: 'UTC' },
        { end: '30 21 * * *', location: 'Europe/Berlin' },
      ],
      { lastTrigger: '2026-11-26T19:00:00Z' },
    );
    expect(decide(wakeLater, '2026-11-26T20:45:00Z')).toMatchObject({
      enabled: false,
      scheduled: '2026-11-26T20:30:00.000Z',
    });
  });

  it('leaves out expressions that do not parse', () => {
    const shoot = scheduled([{ start: 'not cron' }, { end: '0 6 * * *' }], { lastTrigger: '2026-11-26T00:00:00Z' });
    expect(decide(shoot, '2026-11-26T06:00:00Z')).toMatchObject({ enabled: false });
  });
});
