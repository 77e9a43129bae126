import pino from "pino";
import { currentRequestId, requestBinding } from "./request-context.ts";
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export type Logger = pino.Logger;

/**
 * Structured JSON logs on stdout. Secrets never enter log fields: keys are redacted by path. A line
 * written while serving a request carries its `request_id` (the `x-request-id` of the answer), and
 * so do a WebSocket session's lines (its logger is bound to the upgrade's id when it opens).
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "voxroute" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // A logger already bound to a request (requestBinding) keeps its own id.
      mixin: (_merge, _level, logger) => (currentRequestId() && !("request_id" in logger.bindings()) ? requestBinding() : {}),
      redact: {
        paths: ["apiKey", "*.apiKey", "authorization", "*.authorization", "headers.authorization", 'headers["xi-api-key"]'],
        censor: "[redacted]",
      },
    },
    destination,
  );
}
