/**
 * The Health table of docs/shoot-control-planes.md against the code: every reason it names is one the care checks
 * give, and every reason they give is in it, in the column of its outcome. A reason added or renamed in code without
 * the doc fails here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
/** Where the care checks' reasons are given: the care reconciler and the checks of the components it asks. */
const SOURCES = [
  'src/gardenlet/shoot/care/reconciler.ts',
  'src/gardenlet/shoot/care/control-plane.ts',
  'src/gardenlet/shoot/care/machines.ts',
];

/** The text without what is in parentheses (a reason's explanation names other things in backticks). */
function withoutParentheses(text: string): string {
  let depth = 0;
  let out = '';
  for (const c of text) {
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0) out += c;
  }
  return out;
}

function documented(): { ok: Set<string>; notOk: Set<string> } {
  const doc = readFileSync(join(ROOT, 'docs', 'shoot-control-planes.md'), 'utf8');
  const table =
    /### Health\n\n\| condition \| True when \| reasons when False \|\n\|---\|---\|---\|\n((?:\|.*\n)+)\n([^#]*)/.exec(
      doc,
    );
  expect(table, 'the Health table of docs/shoot-control-planes.md').not.toBeNull();
  const ok = new Set<string>();
  const notOk = new Set<string>();
  for (const row of table![1]!.trim().split('\n')) {
    const [, , whenTrue, whenFalse] = row.split('|').map((c) => c.trim());
    for (const m of whenTrue!.matchAll(/\(reason `(\w+)`\)/g)) ok.add(m[1]!);
    for (const m of withoutParentheses(whenFalse!).matchAll(/`(\w+)`/g)) notOk.add(m[1]!);
  }
  // After the table: when no condition is checked.
  for (const m of table![2]!.matchAll(/True with reason\s+`(\w+)`/g)) ok.add(m[1]!);
  return { ok, notOk };
}

function given(): { ok: Set<string>; notOk: Set<string> } {
  const ok = new Set<string>();
  const notOk = new Set<string>();
  for (const file of SOURCES) {
    const code = readFileSync(join(ROOT, file), 'utf8');
    // `{ ok: true, reason: 'X' }` as the checks write them; `reason: 'X'` alone where `ok` comes from a variable.
    for (const m of code.matchAll(/ok: (true|false),\s*reason: '(\w+)'/g)) (m[1] === 'true' ? ok : notOk).add(m[2]!);
    for (const m of code.matchAll(/(?<!ok: (?:true|false),\s*)reason: '(\w+)'/g)) notOk.add(m[1]!);
    // The care reconciler's own: `this.condition(TYPE, false, 'Reason', ...)`.
    for (const m of code.matchAll(/this\.condition\(\w+, (true|false), '(\w+)'/g)) {
      (m[1] === 'true' ? ok : notOk).add(m[2]!);
    }
  }
  return { ok, notOk };
}

describe("the shoot's Health table", () => {
  it('names exactly the reasons the care checks give, each in the column of its outcome', () => {
    const doc = documented();
    const code = given();
    expect(code.ok.size).toBeGreaterThan(0);
    expect(code.notOk.size).toBeGreaterThan(0);
    expect([...doc.ok].sort()).toEqual([...code.ok].sort());
    expect([...doc.notOk].sort()).toEqual([...code.notOk].sort());
  });
});
