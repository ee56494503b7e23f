/** Where a command writes; tests capture it, the binary passes process.stdout/stderr. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** Standard input, for `-f -` (tests); without it, the process's standard input is read, within the input limit. */
  readStdin?(): string;
}

export const processIO: CliIO = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** C0 controls but tab and newline, DEL and C1 controls: bytes that would steer a terminal, not print. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Control characters as visible escapes (`\r`, `\u001b`): input echoed in a message (a YAML error frame, a name)
 * must not clear the screen or rewrite the line above.
 */
export function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (c) =>
    c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The same output, with control characters escaped: what every command writes goes through this. */
export function escapingIO(io: CliIO): CliIO {
  return {
    ...io,
    out: (text) => io.out(escapeControlCharacters(text)),
    err: (text) => io.err(escapeControlCharacters(text)),
  };
}

/** The input can't be used at all (unreadable, not YAML, unknown kind): exit code 2. */
export class InputError extends Error {}

export const EXIT_OK = 0;
export const EXIT_INVALID = 1;
export const EXIT_UNUSABLE = 2;
