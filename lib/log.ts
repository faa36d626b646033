/**
 * Logging on `@logtape/logtape`: human text (`--log-format=text`) or JSON lines (`json`) on stderr,
 * with registered secrets scrubbed from every line before it is written.
 *
 * @module
 */
import {
  configureSync,
  getLogger,
  jsonLinesFormatter,
  type Logger,
  type LogLevel,
  type LogRecord,
} from "@logtape/logtape";

/** Levels accepted by `--log-level`. */
export const LOG_LEVELS = ["debug", "info", "warning", "error"] as const;
/** Formats accepted by `--log-format`. */
export const LOG_FORMATS = ["text", "json"] as const;

const secrets = new Set<string>();
const encoder = new TextEncoder();

/**
 * Registers a value (an API token, say) that must never appear in output; every log line, event
 * message and error text passed through {@link redact} has it replaced by `[REDACTED]`.
 */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 8) secrets.add(value);
}

/** Replaces every registered secret in `text`. */
export function redact(text: string): string {
  for (const secret of secrets) if (text.includes(secret)) text = text.replaceAll(secret, "[REDACTED]");
  return text;
}

/** A child logger of the `deno-ccm` category. */
export function logger(...category: string[]): Logger {
  return getLogger(["deno-ccm", ...category]);
}

/** Configures logging once at startup (tests may call it again to change the level). */
export function setupLogging(options: {
  level: (typeof LOG_LEVELS)[number];
  format: (typeof LOG_FORMATS)[number];
  write?: (line: string) => void;
}): void {
  const write = options.write ?? ((line: string) => Deno.stderr.writeSync(encoder.encode(line)));
  const color = options.format === "text" && Deno.stderr.isTerminal();
  const format = options.format === "json" ? jsonLinesFormatter : (r: LogRecord) => textLine(r, color);
  configureSync({
    reset: true,
    sinks: { stderr: (record: LogRecord) => write(redact(format(record))) },
    loggers: [
      { category: ["deno-ccm"], lowestLevel: options.level as LogLevel, sinks: ["stderr"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: ["stderr"] },
    ],
  });
}

const LEVEL_TEXT: Record<string, [string, string]> = {
  trace: ["TRACE", "90"],
  debug: ["DEBUG", "90"],
  info: ["INFO ", "32"],
  warning: ["WARN ", "33"],
  error: ["ERROR", "31"],
  fatal: ["FATAL", "35"],
};

function textLine(record: LogRecord, color: boolean): string {
  const [label, code] = LEVEL_TEXT[record.level] ?? [record.level, "0"];
  const level = color ? `\x1b[${code}m${label}\x1b[0m` : label;
  const message = record.message.map((part) => typeof part === "string" ? part : show(part)).join("");
  const used = new Set<string>();
  for (const m of String(record.rawMessage).matchAll(/\{(\w+)\}/g)) used.add(m[1]);
  const extra = Object.entries(record.properties)
    .filter(([k]) => !used.has(k))
    .map(([k, v]) => ` ${k}=${show(v)}`)
    .join("");
  const time = new Date(record.timestamp).toISOString();
  return `${time} ${level} ${record.category.slice(1).join(".") || "main"}: ${message}${extra}\n`;
}

function show(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "string") return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value) ?? String(value);
}
