import pino from "pino";
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export type Logger = pino.Logger;

/** Structured JSON logs on stdout. Secrets never enter log fields: keys are redacted by path. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: "voxroute" },
    redact: {
      paths: ["apiKey", "*.apiKey", "authorization", "*.authorization", "headers.authorization", 'headers["xi-api-key"]'],
      censor: "[redacted]",
    },
  });
}
