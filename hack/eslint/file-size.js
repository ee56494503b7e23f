/**
 * `file-size/max-lines`: a source file stays within `max` lines (400) unless its header comment says why it is one
 * concept, in a sentence starting with "Kept as one file" (e.g. "Kept as one file (over 400 lines): the one component
 * of the shoot's machines, …"). ESLint's own `max-lines` can only be switched off per file; this one asks for the
 * reason where a reader looks first.
 */
const KEPT = /Kept as one file\b[^.:]*:\s*\S/;

/** The first comment of the file, when it comes before any code: its header. */
function headerOf(sourceCode) {
  const first = sourceCode.ast.comments[0];
  if (first === undefined) return undefined;
  const firstToken = sourceCode.ast.tokens[0];
  return firstToken === undefined || first.range[1] <= firstToken.range[0] ? first.value : undefined;
}

const maxLines = {
  meta: {
    type: 'suggestion',
    docs: { description: 'a file over the line limit says in its header why it is one concept' },
    schema: [{ type: 'object', properties: { max: { type: 'integer', minimum: 1 } }, additionalProperties: false }],
    messages: {
      tooLong:
        '{{lines}} lines, over {{max}}: split the file, or say in its header why it is one concept ' +
        '("Kept as one file (over {{max}} lines): …")',
    },
  },
  create(context) {
    const max = context.options[0]?.max ?? 400;
    return {
      Program(node) {
        const sourceCode = context.sourceCode;
        const lines = sourceCode.lines.length - (sourceCode.lines.at(-1) === '' ? 1 : 0);
        if (lines <= max) return;
        if (KEPT.test(headerOf(sourceCode) ?? '')) return;
        context.report({ node, loc: { line: 1, column: 0 }, messageId: 'tooLong', data: { lines, max } });
      },
    };
  },
};

export default { rules: { 'max-lines': maxLines } };
