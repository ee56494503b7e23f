import pino from 'pino';

/** Structured JSON logger (pino). Children carry context: `logger.child({ controller, namespace, name })`. */
export type Logger = pino.Logger;

export interface LoggerOptions {
  /** pino level name. @default process.env.LOG_LEVEL ?? 'info' */
  level?: string;
  /** Added to every line as `name`. */
  name?: string;
  /** Where lines go. @default stdout */
  destination?: NodeJS.WritableStream;
}

/**
 * A JSON-lines logger with ISO timestamps and errors serialized under `err` (message, type, stack, plus the
 * Kubernetes `code` of an ApiError).
 */
export function newLogger(opts: LoggerOptions = {}): Logger {
  const options: pino.LoggerOptions = {
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    base: opts.name ? { name: opts.name } : {},
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    formatters: { level: (label) => ({ level: label }) },
  };
  return opts.destination ? pino(options, opts.destination as pino.DestinationStream) : pino(options);
}

/** A logger that drops everything; for tests and tools that have nothing to say. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
