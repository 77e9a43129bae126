import { describe, expect, test } from "bun:test";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import { servedCatalogue } from "../src/providers/served-catalogue.ts";
import { loadConfig } from "../src/config.ts";
import type { ApiError } from "../src/errors.ts";
import { plannedTtsSession, planTtsSession } from "../src/surfaces/native/tts-query.ts";

const catalogue = new Catalogue(servedCatalogue(loadConfig({})));
const plan = (query: string) => planTtsSession(catalogue, new URLSearchParams(query));

describe("/v1/tts query", () => {
  test("defaults: pcm, auto_flush on, no voice, no options", () => {
    const p = plan("model=flite");
    expect(p).toMatchObject({ format: "pcm", autoFlush: true, voice: undefined, options: {} });
    expect(p.candidates.map((b) => b.provider.id)).toEqual(["flite"]);
  });

  test("auto_flush: only the literal false disables it", () => {
    expect(plan("model=flite&auto_flush=false").autoFlush).toBe(false);
    for (const v of ["true", "0", "no", "False", ""]) expect(plan(`model=flite&auto_flush=${v}`).autoFlush).toBe(true);
  });

  test("unreserved keys are provider options; provider_options[name] wins over the bare form", () => {
    const p = plan("model=flite&voice=slt&speed=fast&pitch=low&provider_options[speed]=slow&provider_options[style]=Calm&provider_order=flite");
    expect(p.options).toEqual({ speed: "slow", pitch: "low", style: "Calm" });
  });

  test("a speed that is a number is the plan's speed (a number), out of the provider options", () => {
    expect(plan("model=flite&speed=1.2&pitch=low")).toMatchObject({ speed: 1.2, options: { pitch: "low" } });
    expect(plan("model=flite&provider_options[speed]=0.5")).toMatchObject({ speed: 0.5, options: {} });
  });

  test("an empty voice is absent, not substituted", () => {
    expect(plan("model=flite&voice=").voice).toBeUndefined();
  });

  test("format must be pcm or mp3", () => {
    expect(plan("model=flite&format=mp3").format).toBe("mp3");
    try {
      plan("model=flite&format=ogg");
      throw new Error("accepted");
    } catch (err) {
      expect((err as ApiError).code).toBe("invalid_request");
    }
  });
});

describe("/v1/tts plans kept per query", () => {
  const planned = (c: Catalogue, query: string) => plannedTtsSession(c, `?${query}`, new URLSearchParams(query));

  test("the same query string gets the same plan, frozen, equal to planning it afresh; another query its own", () => {
    const query = "model=flite&voice=slt&pitch=low";
    const first = planned(catalogue, query);
    expect(planned(catalogue, query)).toBe(first);
    expect(first).toEqual(plan(query));
    for (const part of [first, first.candidates, first.options, first.pronunciation]) expect(Object.isFrozen(part)).toBe(true);
    expect(() => {
      (first.options as Record<string, string>).pitch = "high";
    }).toThrow();
    const other = planned(catalogue, "model=flite&voice=kal");
    expect(other).not.toBe(first);
    expect(other.voice).toBe("kal");
  });

  test("a refused query is refused each time, not kept; another catalogue plans for itself", () => {
    for (let i = 0; i < 2; i++) expect(() => planned(catalogue, "model=flite&format=wav")).toThrow("format must be pcm or mp3");
    const other = new Catalogue(servedCatalogue(loadConfig({})));
    expect(planned(other, "model=flite")).not.toBe(planned(catalogue, "model=flite"));
    expect(planned(other, "model=flite")).toEqual(planned(catalogue, "model=flite"));
  });
});
