import pino from "pino";
import { currentRequestId } from "./request-context.ts";
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export type Logger = pino.Logger;

/**
 * Structured JSON logs on stdout. Secrets never enter log fields: keys are redacted by path. A line
 * written while serving a request carries its `request_id` (the `x-request-id` of the answer).
 */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "voxroute" },
      mixin: () => {
        const requestId = currentRequestId();
        return requestId ? { request_id: requestId } : {};
      },
      redact: {
        paths: ["apiKey", "*.apiKey", "authorization", "*.authorization", "headers.authorization", 'headers["xi-api-key"]'],
        censor: "[redacted]",
      },
    },
    destination,
  );
}
