// Writes the CRDs generated from the zod schemas into the chart (npm run generate).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCRDFiles } from '../src/apis/crd-files.js';

const dir = join(import.meta.dirname, '..', 'charts', 'gardener-ipv6', 'crds');
mkdirSync(dir, { recursive: true });
const files = renderCRDFiles();
for (const stale of readdirSync(dir).filter((f) => f.endsWith('.yaml') && !files.has(f))) rmSync(join(dir, stale));
for (const [name, text] of files) writeFileSync(join(dir, name), text);
console.log(`wrote ${files.size} CRDs to ${dir}`);
