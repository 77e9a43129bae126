import type { TracingSettings } from "./settings.ts";
import { installTracer } from "./spans.ts";

/** Loads the SDK and installs its tracer; returns how to flush and stop it. */
export async function startTracing(settings: TracingSettings): Promise<() => Promise<void>> {
  const { otelTracer } = await import("./otel.ts"); // loaded only with tracing on;
  const tracer = otelTracer(settings);
  installTracer(tracer);
  return async () => {
    installTracer(undefined);
    await tracer.shutdown();
  };
}
