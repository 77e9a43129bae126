import { describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config.ts";
import { tracingSettings } from "../src/tracing/settings.ts";

// The standard OpenTelemetry variables as the router reads them: the endpoint that turns tracing
// on, the resource, the sampler; a bad value stops the start with a sentence that names it.

describe("tracing settings", () => {
  test("off without an endpoint, or with OTEL_SDK_DISABLED", () => {
    expect(tracingSettings({})).toBeUndefined();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" })).toBeUndefined();
    expect(loadConfig({}).tracing).toBeUndefined();
  });

  test("the base endpoint gets /v1/traces; the traces endpoint is used as it is and wins", () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })?.endpoint).toBe("http://collector:4318/v1/traces");
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://b/otlp/traces" })?.endpoint).toBe("https://b/otlp/traces");
  });

  test("the resource: OTEL_SERVICE_NAME, else service.name of the attributes, else voxroute; attributes percent-decoded", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" };
    expect(tracingSettings(endpoint)).toMatchObject({ serviceName: "voxroute", resourceAttributes: {} });
    expect(tracingSettings({ ...endpoint, OTEL_RESOURCE_ATTRIBUTES: "service.name=edge, region=eu%2Cwest ,k=a%3Db" })).toMatchObject({
      serviceName: "edge",
      resourceAttributes: { region: "eu,west", k: "a=b" },
    });
    expect(tracingSettings({ ...endpoint, OTEL_SERVICE_NAME: "router", OTEL_RESOURCE_ATTRIBUTES: "service.name=edge" })?.serviceName).toBe("router");
  });

  test("the sampler and its ratio, case-insensitive", () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_SAMPLER: "ParentBased_TraceIdRatio", OTEL_TRACES_SAMPLER_ARG: "0.25" })).toMatchObject({
      sampler: "parentbased_traceidratio",
      samplerArg: 0.25,
    });
  });

  test.each([
    [{ OTEL_TRACES_SAMPLER: "sometimes" }, "config: OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio"],
    [{ OTEL_TRACES_SAMPLER_ARG: "1.5" }, "config: OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1"],
    [{ OTEL_TRACES_SAMPLER_ARG: "half" }, "config: OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1"],
    [{ OTEL_BSP_SCHEDULE_DELAY: "soon" }, "config: OTEL_BSP_SCHEDULE_DELAY must be a whole number of milliseconds"],
    [{ OTEL_RESOURCE_ATTRIBUTES: "region" }, 'config: OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas, percent-encoded (not "region")'],
    [{ OTEL_RESOURCE_ATTRIBUTES: "k=%E0%A4%A" }, 'config: OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas, percent-encoded (not "k=%E0%A4%A")'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318" }, 'config: the OTLP traces endpoint must be an http(s) URL (not "collector:4318")'],
  ])("refused: %o", (bad, message) => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", ...bad })).toThrow(message);
  });
});
