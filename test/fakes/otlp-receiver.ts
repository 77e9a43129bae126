// An OpenTelemetry collector's OTLP/HTTP traces receiver, from the OTLP specification
// (opentelemetry.io/docs/specs/otlp/#otlphttp): `POST /v1/traces` with an
// ExportTraceServiceRequest in its JSON encoding (`application/json`: trace and span ids as hex
// strings, enums as numbers, 64-bit integers as decimal strings), answered 200 with an
// ExportTraceServiceResponse. Other content types are answered 415, as a JSON-only receiver would.

type AnyValue = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number; arrayValue?: { values: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

interface WireSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: KeyValue[];
  events?: { name: string; timeUnixNano: string; attributes?: KeyValue[] }[];
  status?: { code?: number; message?: string };
}

interface ExportTraceServiceRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { scope?: { name: string }; spans?: WireSpan[] }[] }[];
}

/** A received span, its attributes and events' attributes read into plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  start: bigint;
  end: bigint;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  /** 0 unset, 1 ok, 2 error (Status.StatusCode). */
  status: number;
  statusMessage?: string;
  resource: Record<string, unknown>;
}

export interface FakeOtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Every request body as it arrived, for scanning for what must never be sent. */
  bodies: string[];
  /** How many spans arrived (also when they are not kept). */
  received(): number;
  /** Resolves with the spans of `traceId` once one named `name` arrived in it. */
  waitFor(traceId: string | undefined, name: string): Promise<ReceivedSpan[]>;
  stop(): void;
}

function readValue(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return v.arrayValue.values.map(readValue);
  return undefined;
}

const plain = (attributes: KeyValue[] = []) => Object.fromEntries(attributes.map((a) => [a.key, readValue(a.value)]));

/** `keep: false` (a benchmark's): spans are decoded and counted, not kept. */
export function startFakeOtlpReceiver({ keep = true } = {}): FakeOtlpReceiver {
  let count = 0;
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const waiting: (() => void)[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/v1/traces") return new Response("not found", { status: 404 });
      if (!req.headers.get("content-type")?.startsWith("application/json")) return new Response("unsupported media type", { status: 415 });
      const text = await req.text();
      if (keep) bodies.push(text);
      const body = JSON.parse(text) as ExportTraceServiceRequest;
      for (const rs of body.resourceSpans ?? []) {
        const resource = plain(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? []) {
            count++;
            if (keep)
              spans.push({
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                start: BigInt(s.startTimeUnixNano),
                end: BigInt(s.endTimeUnixNano),
                attributes: plain(s.attributes),
                events: (s.events ?? []).map((e) => ({ name: e.name, attributes: plain(e.attributes) })),
                status: s.status?.code ?? 0,
                statusMessage: s.status?.message,
                resource,
              });
          }
      }
      for (const wake of waiting.splice(0)) wake();
      return Response.json({});
    },
  });
  const inTrace = (traceId: string | undefined) => spans.filter((s) => traceId === undefined || s.traceId === traceId);
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    bodies,
    received: () => count,
    async waitFor(traceId, name) {
      while (!inTrace(traceId).some((s) => s.name === name)) await new Promise<void>((resolve) => waiting.push(resolve));
      return inTrace(traceId);
    },
    stop: () => server.stop(true),
  };
}
