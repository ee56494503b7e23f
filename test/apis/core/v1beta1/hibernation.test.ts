/**
 * Hibernation schedules: cron expressions as Gardener's parser reads them (what it accepts and its errors), their
 * times in a location's wall clock across daylight saving changes, and the validation of `spec.hibernation`.
 */
import { describe, expect, it } from 'vitest';
import { admit } from '../../../../src/apis/admission.js';
import {
  cronError,
  nextTime,
  parseCron,
  previousTime,
  validTimeZone,
} from '../../../../src/apis/core/v1beta1/hibernation.js';
import type { Shoot } from '../../../../src/apis/core/v1beta1/shoot.js';
import { causesOf, gateSets, ipv4ShootObject } from '../../../fixtures/objects.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

describe('cron expressions', () => {
  it.each([
    '0 20 * * *',
    '00 20 * * 1,2,3,4,5',
    '30 6 * * MON-FRI',
    '*/15 * * * *',
    '5/10 8-18 1,15 JAN-jun ?',
    '0 0 1 1 *',
    '@daily',
    '@hourly',
    '@weekly',
    '@monthly',
    '@yearly',
    '@annually',
    '@midnight',
    'TZ=Europe/Berlin 0 20 * * *',
    'CRON_TZ=America/New_York 0 7 * * 1-5',
  ])('accepts %s', (spec) => {
    expect(cronError(spec)).toBeUndefined();
  });

  it.each([
    ['', 'empty spec string'],
    ['0 20 * *', 'expected exactly 5 fields, found 4: [0 20 * *]'],
    ['0 0 20 * * *', 'expected exactly 5 fields, found 6: [0 0 20 * * *]'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['0 24 * * *', 'end of range (24) above maximum (23): 24'],
    ['0 0 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['0 0 * 13 *', 'end of range (13) above maximum (12): 13'],
    ['0 0 * * 7', 'end of range (7) above maximum (6): 7'],
    ['0 5-2 * * *', 'beginning of range (5) beyond end of range (2): 5-2'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['1/2/3 * * * *', 'too many slashes: 1/2/3'],
    ['x * * * *', 'failed to parse int from x: invalid syntax'],
    ['0 0 * * L', 'failed to parse int from L: invalid syntax'],
    ['@every 1h', 'unrecognized descriptor: @every 1h'],
    ['@often', 'unrecognized descriptor: @often'],
    ['TZ=Mars/Olympus 0 0 * * *', 'provided bad location Mars/Olympus: unknown time zone Mars/Olympus'],
  ])('refuses %j: %s', (spec, message) => {
    expect(cronError(spec)).toBe(message);
  });

  it('knows IANA zones and UTC, not made-up ones', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/Los_Angeles', 'Asia/Kolkata', 'Australia/Lord_Howe']) {
      expect(validTimeZone(zone), zone).toBe(true);
    }
    for (const zone of ['Europe/Nowhere', 'CEST+1', 'utc/x']) expect(validTimeZone(zone), zone).toBe(false);
  });
});

describe('schedule times', () => {
  it('finds the next and the previous time in UTC', () => {
    const s = parseCron('0 20 * * 1-5');
    // 2026-11-26 is a Thursday.
    expect(iso(nextTime(s, 'UTC', at('2026-11-26T12:00:00Z')))).toBe('2026-11-26T20:00:00.000Z');
    expect(iso(nextTime(s, 'UTC', at('2026-11-26T20:00:00Z')))).toBe('2026-11-27T20:00:00.000Z');
    // Friday evening → Monday.
    expect(iso(nextTime(s, 'UTC', at('2026-11-27T20:00:00Z')))).toBe('2026-11-30T20:00:00.000Z');
    // The previous time includes `at` itself.
    expect(iso(previousTime(s, 'UTC', at('2026-11-26T20:00:00Z')))).toBe('2026-11-26T20:00:00.000Z');
    expect(iso(previousTime(s, 'UTC', at('2026-11-30T08:00:00Z')))).toBe('2026-11-27T20:00:00.000Z');
  });

  it("runs on the location's wall clock, across daylight saving changes", () => {
    const s = parseCron('0 20 * * *');
    // Berlin: CET (+1) in winter, CEST (+2) in summer; 2026's changes are on March 29 and October 25.
    expect(iso(nextTime(s, 'Europe/Berlin', at('2026-03-28T00:00:00Z')))).toBe('2026-03-28T19:00:00.000Z');
    expect(iso(nextTime(s, 'Europe/Berlin', at('2026-03-29T00:00:00Z')))).toBe('2026-03-29T18:00:00.000Z');
    expect(iso(nextTime(s, 'Europe/Berlin', at('2026-10-25T00:00:00Z')))).toBe('2026-10-25T19:00:00.000Z');
    // A TZ= prefix wins over the location.
    const ny = parseCron('TZ=America/New_York 0 7 * * *');
    expect(iso(nextTime(ny, 'Europe/Berlin', at('2026-11-26T00:00:00Z')))).toBe('2026-11-26T12:00:00.000Z');
    // Half-hour offsets too.
    expect(iso(nextTime(s, 'Asia/Kolkata', at('2026-11-26T00:00:00Z')))).toBe('2026-11-26T14:30:00.000Z');
  });

  it('takes a time skipped by a daylight saving change just after it, and a repeated one once', () => {
    const skipped = parseCron('30 2 * * *');
    // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist that night.
    expect(iso(nextTime(skipped, 'Europe/Berlin', at('2026-03-28T23:00:00Z')))).toBe('2026-03-29T01:30:00.000Z');
    // 2026-10-25: 03:00 CEST goes back to 02:00 CET; 02:30 is shown twice, the first counts.
    const first = nextTime(skipped, 'Europe/Berlin', at('2026-10-24T23:00:00Z'));
    expect(iso(first)).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(nextTime(skipped, 'Europe/Berlin', first!))).toBe('2026-10-26T01:30:00.000Z');
  });

  it("matches either day field when both are restricted, both when one is '*' (cron's rule)", () => {
    // The 1st of the month or a Monday.
    const either = parseCron('0 0 1 * 1');
    expect(iso(nextTime(either, 'UTC', at('2026-11-26T00:00:00Z')))).toBe('2026-11-30T00:00:00.000Z');
    expect(iso(nextTime(either, 'UTC', at('2026-11-30T00:00:00Z')))).toBe('2026-12-01T00:00:00.000Z');
    // Mondays only ('*' day of month).
    const mondays = parseCron('0 0 * * 1');
    expect(iso(nextTime(mondays, 'UTC', at('2026-11-30T00:00:00Z')))).toBe('2026-12-07T00:00:00.000Z');
    // February 30th never comes.
    expect(nextTime(parseCron('0 0 30 2 *'), 'UTC', at('2026-01-01T00:00:00Z'))).toBeUndefined();
  });
});

describe('spec.hibernation validation', () => {
  const withSchedules = (schedules: unknown[]): Shoot => {
    const shoot = ipv4ShootObject();
    shoot.spec.hibernation = { enabled: false, schedules: schedules as never };
    return shoot;
  };
  const causes = (shoot: Shoot) => causesOf(admit({ object: shoot, gates: gateSets.none }).errors);

  it("accepts Gardener's example schedules", () => {
    expect(
      causes(
        withSchedules([
          { start: '0 20 * * *', end: '0 6 * * *', location: 'Europe/Berlin' },
          { start: '00 22 * * 1,2,3,4,5' },
          { end: '@daily', location: 'UTC' },
        ]),
      ),
    ).toEqual([]);
  });

  it('names the field of a bad expression, a missing start and end, a repeated expression and a bad location', () => {
    expect(
      causes(
        withSchedules([
          { start: '0 25 * * *', end: '0 6 * * *' },
          { location: 'UTC' },
          { start: '0 6 * * *' },
          { start: '0 20 * * *', location: 'Europe/Nowhere' },
        ]),
      ),
    ).toEqual([
      {
        field: 'spec.hibernation.schedules[0].start',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "0 25 * * *": not a valid cron spec: end of range (25) above maximum (23): 25',
      },
      {
        field: 'spec.hibernation.schedules[1].start/end',
        reason: 'FieldValueRequired',
        message: 'Required value: either start or end has to be provided',
      },
      {
        field: 'spec.hibernation.schedules[2].start',
        reason: 'FieldValueDuplicate',
        message: 'Duplicate value: "0 6 * * *"',
      },
      {
        field: 'spec.hibernation.schedules[3].location',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "Europe/Nowhere": not a valid location: unknown time zone Europe/Nowhere',
      },
    ]);
  });
});

describe('hibernating against the HibernationPossible constraint', () => {
  const shootWith = (enabled: boolean, constraint?: { status: string; message: string }): Shoot => {
    const shoot = ipv4ShootObject();
    shoot.spec.hibernation = { enabled };
    if (constraint) {
      shoot.status = {
        constraints: [
          {
            type: 'HibernationPossible',
            status: constraint.status,
            reason: 'ProblematicWebhooks',
            message: constraint.message,
            lastTransitionTime: '2026-11-28T00:00:00Z',
            lastUpdateTime: '2026-11-28T00:00:00Z',
          },
        ],
      } as Shoot['status'];
    }
    return shoot;
  };
  const hibernate = (constraint?: { status: string; message: string }) =>
    causesOf(
      admit({ object: shootWith(true, constraint), oldObject: shootWith(false, constraint), gates: gateSets.none })
        .errors,
    );

  it('refuses to hibernate while the constraint is False or Unknown, with its message', () => {
    const message = 'Shoot cannot be hibernated because of ValidatingWebhookConfiguration "w": webhook "x"';
    for (const status of ['False', 'Unknown']) {
      expect(hibernate({ status, message })).toEqual([
        {
          field: 'spec.hibernation.enabled',
          reason: 'FieldValueForbidden',
          message: `Forbidden: 'HibernationPossible' constraint is '${status}': ${message}`,
        },
      ]);
    }
  });

  it('allows it when True or not reported yet, and never refuses waking up', () => {
    expect(hibernate({ status: 'True', message: 'Shoot can be hibernated.' })).toEqual([]);
    expect(hibernate()).toEqual([]);
    const wake = admit({
      object: shootWith(false, { status: 'False', message: 'x' }),
      oldObject: shootWith(true, { status: 'False', message: 'x' }),
      gates: gateSets.none,
    });
    expect(causesOf(wake.errors)).toEqual([]);
  });
});
