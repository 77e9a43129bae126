// Tracing's settings, read from the standard OpenTelemetry variables (docs/operations.md#traces).

export interface TracingSettings {
  /** The OTLP/HTTP traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  endpoint: string;
  /** OTEL_TRACES_SAMPLER (default `parentbased_always_on`). */
  sampler?: (typeof SAMPLERS)[number];
  /** OTEL_TRACES_SAMPLER_ARG: the ratio of the ratio samplers. */
  samplerArg?: number;
  /** OTEL_SERVICE_NAME, else `service.name` of the resource attributes, else `voxroute`. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES: `key=value` pairs, comma-separated, percent-encoded. */
  resourceAttributes: Record<string, string>;
  /** How long finished spans wait to be sent in a batch (OTEL_BSP_SCHEDULE_DELAY, default 5000). */
  exportDelayMs?: number;
}

/** The samplers of the specification's OTEL_TRACES_SAMPLER that need no more than a ratio. */
export const SAMPLERS = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"] as const;

/** The settings, or undefined (tracing off) when no OTLP endpoint is set or OTEL_SDK_DISABLED is true. A bad value stops the start. */
export function tracingSettings(env: Record<string, string | undefined>): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === "true") return undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, "");
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (base ? `${base}/v1/traces` : undefined);
  if (!endpoint) return undefined;
  if (!/^https?:$/.test(URL.parse(endpoint)?.protocol ?? "")) throw new Error(`config: the OTLP traces endpoint must be an http(s) URL (not "${endpoint}")`);
  const sampler = (env.OTEL_TRACES_SAMPLER?.toLowerCase() || undefined) as TracingSettings["sampler"];
  if (sampler && !SAMPLERS.includes(sampler)) throw new Error(`config: OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}`);
  const arg = env.OTEL_TRACES_SAMPLER_ARG ? Number(env.OTEL_TRACES_SAMPLER_ARG) : undefined;
  if (arg !== undefined && !(arg >= 0 && arg <= 1)) throw new Error("config: OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1");
  const delay = env.OTEL_BSP_SCHEDULE_DELAY ? Number(env.OTEL_BSP_SCHEDULE_DELAY) : undefined;
  if (delay !== undefined && !(Number.isInteger(delay) && delay >= 0)) throw new Error("config: OTEL_BSP_SCHEDULE_DELAY must be a whole number of milliseconds");
  const attributes = resourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES);
  const serviceName = env.OTEL_SERVICE_NAME || attributes["service.name"] || "voxroute";
  return { endpoint, serviceName, resourceAttributes: attributes, sampler, samplerArg: arg, exportDelayMs: delay };
}

function resourceAttributes(text: string | undefined): Record<string, string> {
  const pairs = (text ?? "").split(",").filter((pair) => pair.trim());
  const entries = pairs.map((pair) => {
    const at = pair.indexOf("=");
    const refused = new Error(`config: OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas, percent-encoded (not "${pair}")`);
    if (at < 1) throw refused;
    try {
      return [decodeURIComponent(pair.slice(0, at).trim()), decodeURIComponent(pair.slice(at + 1).trim())];
    } catch {
      throw refused;
    }
  });
  return Object.fromEntries(entries);
}
