/**
 * A Shoot's hibernation: whether it is asked for, and its schedules. A schedule's `start` and `end` are cron
 * expressions as Gardener parses them (robfig/cron's standard parser): five fields (minute, hour, day of month,
 * month, day of week) with lists, ranges, steps, `*` and `?`, month and weekday names, the descriptors `@yearly`,
 * `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight` and `@hourly`, and an optional `TZ=<zone>` (or
 * `CRON_TZ=<zone>`) prefix. They run in the schedule's `location` (an IANA time zone, UTC when unset), as the
 * wall clock there shows them.
 */
import type { Shoot } from './shoot.js';

/** `spec.hibernation.enabled`, as Gardener's helper reads it (unset: not hibernated). */
/**
 * The constraint (`status.constraints`) that says whether the shoot may be hibernated: the care controller writes
 * it, the admission refuses to hibernate unless it is True or absent.
 */
export const CONSTRAINT_HIBERNATION_POSSIBLE = 'HibernationPossible';

export function hibernationEnabled(shoot: Pick<Shoot, 'spec'>): boolean {
  return shoot.spec.hibernation?.enabled === true;
}

/** `status.hibernated`: the last operation left the shoot hibernated. */
export function isHibernated(shoot: Pick<Shoot, 'status'>): boolean {
  return shoot.status?.hibernated === true;
}

/** Whether `zone` is a time zone this runtime knows (an IANA name, or `UTC`); Go's `time.LoadLocation` in Gardener. */
export function validTimeZone(zone: string): boolean {
  if (zone === '') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

interface Bounds {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const FIELDS: readonly Bounds[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 6, names: WEEKDAYS },
];
const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
/** As robfig/cron: a schedule with no time in five years has none. */
const SEARCH_DAYS = 5 * 366;
const DAY_MS = 24 * 3600_000;

/** A parsed cron expression; its times are computed in `zone`. */
export interface CronSchedule {
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly daysOfWeek: ReadonlySet<number>;
  /** `*` or `?` in the day-of-month or day-of-week field: then both must match, otherwise either (cron's rule). */
  readonly anyDay: boolean;
  /** The zone of a `TZ=` prefix, which wins over the schedule's location. */
  readonly zone?: string;
}

export class CronSyntaxError extends Error {}

function parseValue(text: string, bounds: Bounds): number {
  const named = bounds.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + bounds.min;
  if (!/^\d+$/.test(text)) throw new CronSyntaxError(`failed to parse int from ${text}: invalid syntax`);
  return Number(text);
}

/** One comma-separated part of a field: `*`, `?`, `a`, `a-b`, each with an optional `/step`. */
function parseRange(expr: string, bounds: Bounds): { values: number[]; star: boolean } {
  const rangeAndStep = expr.split('/');
  if (rangeAndStep.length > 2) throw new CronSyntaxError(`too many slashes: ${expr}`);
  const lowAndHigh = rangeAndStep[0]!.split('-');
  if (lowAndHigh.length > 2) throw new CronSyntaxError(`too many hyphens: ${expr}`);
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    if (lowAndHigh.length > 1) throw new CronSyntaxError(`too many hyphens: ${expr}`);
    start = bounds.min;
    end = bounds.max;
    star = true;
  } else {
    start = parseValue(lowAndHigh[0]!, bounds);
    end = lowAndHigh.length === 2 ? parseValue(lowAndHigh[1]!, bounds) : start;
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = Number(rangeAndStep[1]);
    if (!/^\d+$/.test(rangeAndStep[1]!)) {
      throw new CronSyntaxError(`failed to parse int from ${rangeAndStep[1]}: invalid syntax`);
    }
    // `a/step` is `a-max/step`.
    if (lowAndHigh.length === 1 && !star) end = bounds.max;
    if (step > 1) star = false;
  }
  if (start < bounds.min)
    throw new CronSyntaxError(`beginning of range (${start}) below minimum (${bounds.min}): ${expr}`);
  if (end > bounds.max) throw new CronSyntaxError(`end of range (${end}) above maximum (${bounds.max}): ${expr}`);
  if (start > end) throw new CronSyntaxError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronSyntaxError(`step of range should be a positive number: ${expr}`);
  const values: number[] = [];
  for (let v = start; v <= end; v += step) values.push(v);
  return { values, star };
}

function parseField(text: string, bounds: Bounds): { values: number[]; star: boolean } {
  const values = new Set<number>();
  let star = false;
  for (const part of text.split(',')) {
    const r = parseRange(part, bounds);
    r.values.forEach((v) => values.add(v));
    star ||= r.star;
  }
  return { values: [...values].sort((a, b) => a - b), star };
}

/** Parses a cron expression; throws CronSyntaxError with robfig/cron's wording. */
export function parseCron(spec: string): CronSchedule {
  let text = spec.trim();
  if (text === '') throw new CronSyntaxError('empty spec string');
  let zone: string | undefined;
  const tz = /^(?:CRON_)?TZ=(\S+)\s+/.exec(text);
  if (tz) {
    zone = tz[1]!;
    if (!validTimeZone(zone)) throw new CronSyntaxError(`provided bad location ${zone}: unknown time zone ${zone}`);
    text = text.slice(tz[0].length).trim();
  }
  if (text.startsWith('@')) {
    const expanded = DESCRIPTORS[text.toLowerCase()];
    if (expanded === undefined) throw new CronSyntaxError(`unrecognized descriptor: ${text}`);
    text = expanded;
  }
  const fields = text.split(/\s+/);
  if (fields.length !== 5) {
    throw new CronSyntaxError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  }
  const [minute, hour, dom, month, dow] = fields.map((f, i) => parseField(f, FIELDS[i]!)) as [
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
    ReturnType<typeof parseField>,
  ];
  return {
    minutes: minute.values,
    hours: hour.values,
    daysOfMonth: new Set(dom.values),
    months: new Set(month.values),
    daysOfWeek: new Set(dow.values),
    anyDay: dom.star || dow.star,
    ...(zone !== undefined ? { zone } : {}),
  };
}

/** The error of a cron expression, or undefined when it parses. */
export function cronError(spec: string): string | undefined {
  try {
    parseCron(spec);
    return undefined;
  } catch (e) {
    if (e instanceof CronSyntaxError) return e.message;
    throw e;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** The wall clock in `zone` at `instant`, as if it were UTC (milliseconds). */
function wallClock(zone: string, instant: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

/**
 * The instant the wall clock in `zone` shows `wall` (milliseconds as if UTC). A time skipped by a daylight saving
 * change is taken with the offset before it (so it lands just after the change); a repeated one is its first.
 */
function instantOf(zone: string, wall: number): number {
  const offsetAt = (t: number) => wallClock(zone, t) - Math.floor(t / 1000) * 1000;
  // Offsets never change twice within a day: the ones half a day before and after are all there are.
  const before = offsetAt(wall - DAY_MS / 2);
  const after = offsetAt(wall + DAY_MS / 2);
  const shown = [wall - before, wall - after].filter((t) => wallClock(zone, t) === wall);
  return shown.length > 0 ? Math.min(...shown) : wall - before;
}

function dayMatches(s: CronSchedule, day: Date): boolean {
  if (!s.months.has(day.getUTCMonth() + 1)) return false;
  const dom = s.daysOfMonth.has(day.getUTCDate());
  const dow = s.daysOfWeek.has(day.getUTCDay());
  return s.anyDay ? dom && dow : dom || dow;
}

/**
 * The schedule's first time strictly after `after` (forward) or last time at or before `after` (backward), in
 * `location` unless a `TZ=` prefix names another; undefined when none within five years.
 */
function search(s: CronSchedule, location: string, after: number, forward: boolean): number | undefined {
  const zone = s.zone ?? (location || 'UTC');
  const wall = wallClock(zone, after);
  const start = Math.floor(wall / DAY_MS) * DAY_MS;
  const hours = forward ? s.hours : [...s.hours].reverse();
  const minutes = forward ? s.minutes : [...s.minutes].reverse();
  for (let i = 0; i <= SEARCH_DAYS; i++) {
    const day = start + (forward ? i : -i) * DAY_MS;
    if (!dayMatches(s, new Date(day))) continue;
    for (const h of hours) {
      for (const m of minutes) {
        const t = instantOf(zone, day + h * 3600_000 + m * 60_000);
        if (forward ? t > after : t <= after) return t;
      }
    }
  }
  return undefined;
}

/** The schedule's first time strictly after `after` (milliseconds since the epoch). */
export function nextTime(s: CronSchedule, location: string, after: number): number | undefined {
  return search(s, location, after, true);
}

/** The schedule's last time at or before `at` (milliseconds since the epoch). */
export function previousTime(s: CronSchedule, location: string, at: number): number | undefined {
  return search(s, location, at, false);
}
