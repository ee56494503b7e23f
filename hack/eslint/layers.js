/**
 * Two ESLint rules on the imports of the source tree, as Gardener's `.import-restrictions` and `import/no-cycle`:
 *
 * - `layers/layers`: every folder of the tree belongs to a layer, and a file imports only its own folder and the
 *   layers below its own. Folders of one layer are independent of each other.
 * - `layers/no-cycle`: no import may lead back to the importing file, type-only imports included (a type cycle is
 *   still two concepts that each need the other).
 *
 * Imports are relative paths ending in `.js` that name `.ts` files, as NodeNext resolution wants them. The import
 * graph of the other files is read from disk with the TypeScript compiler's import scanner and kept, per file and
 * modification time, for the whole lint run.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const IMPORTING_NODES = ['ImportDeclaration', 'ExportNamedDeclaration', 'ExportAllDeclaration', 'ImportExpression'];

/** The `.ts` file a relative import names, or undefined for a package or a file that isn't there. */
function resolveImport(fromFile, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.resolve(path.dirname(fromFile), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, path.join(target, 'index.ts')]) {
    if (candidate.endsWith('.ts') && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** The source string of an importing node, or undefined (`export const x`, `import(variable)`). */
function sourceOf(node) {
  const source = node.source;
  return source && source.type === 'Literal' && typeof source.value === 'string' ? source.value : undefined;
}

function within(dir, file) {
  const rel = path.relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/** The source root: `root` of the options, relative to ESLint's working directory. */
function rootOf(context) {
  return path.resolve(context.cwd ?? process.cwd(), context.options[0]?.root ?? 'src');
}

function display(context, file) {
  return path
    .relative(context.cwd ?? process.cwd(), file)
    .split(path.sep)
    .join('/');
}

const layers = {
  meta: {
    type: 'problem',
    docs: { description: 'a file imports only its own folder and the layers below its own' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          layers: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
          // Imports allowed although they go the wrong way: [importing file, imported file], relative to root.
          allow: { type: 'array', items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 } },
        },
        required: ['layers'],
        additionalProperties: false,
      },
    ],
    messages: {
      upward:
        '{{from}} (layer {{fromLayer}}) must not import {{to}} (layer {{toLayer}}): a layer imports only the ' +
        'layers below it (eslint.config.js)',
      sibling:
        '{{from}} ({{fromZone}}) must not import {{to}} ({{toZone}}): the folders of one layer are independent of ' +
        'each other (eslint.config.js)',
      unplaced: '{{file}} is in no layer: add its folder to the layers in eslint.config.js',
    },
  },
  create(context) {
    const root = rootOf(context);
    const file = context.filename;
    if (!within(root, file)) return {};
    // zone: a folder under root; rank: its layer's index, lowest first.
    const zones = context.options[0].layers.flatMap((zones, rank) =>
      zones.map((zone) => ({ zone, rank, dir: path.join(root, zone) })),
    );
    const zoneOf = (f) => zones.filter((z) => within(z.dir, f)).sort((a, b) => b.dir.length - a.dir.length)[0];
    const own = zoneOf(file);
    const allowed = new Set(
      (context.options[0].allow ?? []).map(([from, to]) => `${path.join(root, from)}\0${path.join(root, to)}`),
    );
    return {
      Program(node) {
        if (!own) context.report({ node, messageId: 'unplaced', data: { file: display(context, file) } });
      },
      ...Object.fromEntries(
        IMPORTING_NODES.map((type) => [
          type,
          (node) => {
            const specifier = sourceOf(node);
            const target = specifier && resolveImport(file, specifier);
            if (!own || !target || !within(root, target)) return;
            const other = zoneOf(target);
            if (!other || other.zone === own.zone || other.rank < own.rank) return;
            if (allowed.has(`${file}\0${target}`)) return;
            const data = { from: display(context, file), to: display(context, target) };
            if (other.rank === own.rank) {
              context.report({
                node,
                messageId: 'sibling',
                data: { ...data, fromZone: own.zone, toZone: other.zone },
              });
            } else {
              context.report({
                node,
                messageId: 'upward',
                data: { ...data, fromLayer: own.zone, toLayer: other.zone },
              });
            }
          },
        ]),
      ),
    };
  },
};

/** file → { mtimeMs, imports }: the lint run reads each file's imports once. */
const importCache = new Map();

function importsOf(file) {
  let mtimeMs;
  try {
    mtimeMs = fs.statSync(file).mtimeMs;
  } catch {
    return [];
  }
  const cached = importCache.get(file);
  if (cached && cached.mtimeMs === mtimeMs) return cached.imports;
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  const imports = info.importedFiles.map((i) => resolveImport(file, i.fileName)).filter((t) => t !== undefined);
  importCache.set(file, { mtimeMs, imports });
  return imports;
}

/** The shortest import path from `start` to `goal` within root, both included, or undefined. */
function pathBetween(start, goal, root) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    if (file === goal) {
      const steps = [];
      for (let f = goal; f !== undefined; f = previous.get(f)) steps.unshift(f);
      return steps;
    }
    for (const next of importsOf(file)) {
      if (!previous.has(next) && within(root, next)) {
        previous.set(next, file);
        queue.push(next);
      }
    }
  }
  return undefined;
}

const noCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'no import leads back to the importing file' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: { cycle: 'import cycle: {{cycle}}' },
  },
  create(context) {
    const root = rootOf(context);
    const file = context.filename;
    if (!within(root, file)) return {};
    return Object.fromEntries(
      IMPORTING_NODES.map((type) => [
        type,
        (node) => {
          const specifier = sourceOf(node);
          const target = specifier && resolveImport(file, specifier);
          if (!target || !within(root, target)) return;
          const back = target === file ? [file] : pathBetween(target, file, root);
          if (!back) return;
          const cycle = [file, ...back].map((f) => display(context, f)).join(' → ');
          context.report({ node, messageId: 'cycle', data: { cycle } });
        },
      ]),
    );
  },
};

export default { meta: { name: 'layers' }, rules: { layers, 'no-cycle': noCycle } };
