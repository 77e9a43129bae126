import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

// The rooms of src/ and what each may import (docs/architecture.md draws the same table). A room
// is a folder of src/ (`providers`, `sessions`, …) or a file at its top (`config`, `server`, …);
// in workers/, the thread entry points are `workers` and the message protocols, read on both sides
// of a thread, are `worker-protocols`. Imports are read from the source: `import`/`export … from`,
// `import(…)` (also in type positions), and `new URL(…, import.meta.url)`; `projectFile("workers/…")`
// starts a thread, which is no import (the thread loads its own modules) and is checked apart.

const ROOT = new URL("..", import.meta.url).pathname;

/** Importable from every room: the error table, the request's context, logs, metrics, traces, small utilities, project paths. */
const SHARED = ["errors", "request-context", "log", "metrics", "util", "project-file", "tracing"];

/** Room → the rooms (besides SHARED) it may import. Top to bottom: a room imports only rooms below it. */
const MAY_IMPORT: Record<string, string[]> = {
  // Start-up and composition.
  binary: ["cli", "main"],
  main: ["touched-memory", "config", "server"],
  "touched-memory": [],
  cli: ["config", "accounts", "ledger", "db", "limits"],
  server: [
    "app",
    "listener",
    "config",
    "context",
    "metrics-sources",
    "accounts",
    "limits",
    "catalogue",
    "db",
    "ledger",
    "pools",
    "providers",
    "realtime",
    "routing",
    "sessions",
    "voices",
    "pronunciation",
  ],
  app: ["context", "openapi", "surfaces", "request-log"],
  listener: ["config"],
  openapi: ["context", "surfaces", "realtime", "planning", "voices", "ledger", "limits", "pronunciation"],
  "metrics-sources": ["ledger", "providers", "limits"],
  "request-log": [],
  // The wires, and what they are given.
  surfaces: ["context", "config", "planning", "sessions", "realtime", "routing", "voices", "accounts", "limits", "ledger", "catalogue", "providers", "audio", "pronunciation"],
  context: ["config", "sessions", "realtime", "routing", "voices", "accounts", "limits", "ledger", "db", "catalogue", "providers", "pools", "pronunciation"],
  config: ["providers", "catalogue"],
  // The typed requests and their planners.
  planning: ["sessions", "routing", "voices", "ledger", "catalogue", "providers", "audio"],
  // Sessions and the realtime domain.
  sessions: ["routing", "accounts", "limits", "ledger", "catalogue", "providers", "pools", "worker-protocols", "audio", "pronunciation"],
  realtime: ["planning", "sessions", "routing", "accounts", "limits", "ledger", "db", "catalogue", "providers", "audio", "pronunciation"],
  // Planning, voices, providers.
  pronunciation: ["db", "providers"],
  routing: ["catalogue", "providers"],
  voices: ["ledger", "db", "catalogue", "providers"],
  providers: ["catalogue", "pools", "worker-protocols", "audio"],
  pools: ["worker-protocols", "audio"],
  // Beside: money, tenants and keys, storage.
  accounts: ["limits", "ledger", "db"],
  limits: ["ledger", "db"],
  ledger: ["db", "catalogue"],
  db: ["worker-protocols"],
  catalogue: [],
  audio: [],
  // Thread entry points, and the messages both sides read.
  workers: ["worker-protocols", "providers", "audio", "ledger", "db"],
  "worker-protocols": ["audio"],
  ...Object.fromEntries(SHARED.map((room) => [room, []])),
};

/** The rooms whose code starts worker threads (the pools, and the SQLite connection's writer and checkpointer). */
const STARTS_THREADS = ["pools", "db"];

type Edges = Map<string, Set<string>>;

function roomOf(file: string): string {
  const [top, second, third] = file.split("/");
  if (top === "workers") return second!.endsWith("-protocol.ts") ? "worker-protocols" : "workers";
  return third === undefined ? second!.replace(/\.ts$/, "") : second!;
}

const IMPORTS = [
  /\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g,
  /\bimport\s+["'](\.{1,2}\/[^"']+)["']/g,
  /\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g,
  /new URL\(\s*["'](\.{1,2}\/[^"']+)["']\s*,\s*import\.meta\.url/g,
];
const THREADS = /projectFile\(\s*["']([^"']+\.ts)["']\s*\)/g;

function readSources(): { imports: Edges; threads: Edges } {
  const files = [...new Bun.Glob("{src,workers}/**/*.ts").scanSync(ROOT)].filter((f) => !f.endsWith(".d.ts")).sort();
  const imports: Edges = new Map();
  const threads: Edges = new Map();
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const targets = IMPORTS.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => normalize(join(dirname(file), m[1]!))));
    // Only code counts: a JSON, HTML or WebAssembly asset imported by path is no room.
    imports.set(file, new Set(targets.filter((t) => t.endsWith(".ts") && /^(src|workers)\//.test(t))));
    threads.set(file, new Set([...text.matchAll(THREADS)].map((m) => m[1]!)));
  }
  return { imports, threads };
}

/** The strongly connected parts of more than one node (Tarjan): each is an import cycle. */
function cycles(edges: Edges): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of edges.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const part = stack.splice(stack.indexOf(node));
    if (part.length > 1 || edges.get(node)?.has(node)) found.push(part.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

function roomEdges(files: Edges): Edges {
  const rooms: Edges = new Map();
  for (const [file, targets] of files) {
    const from = roomOf(file);
    if (!rooms.has(from)) rooms.set(from, new Set());
    for (const to of targets) if (roomOf(to) !== from) rooms.get(from)!.add(roomOf(to));
  }
  return rooms;
}

/** Each import of a room the table does not let its room import, as `file → target`. */
function forbidden(files: Edges): string[] {
  const allowed = (from: string, to: string) => from === to || SHARED.includes(to) || (MAY_IMPORT[from] ?? []).includes(to);
  return [...files].flatMap(([file, targets]) => [...targets].filter((t) => !allowed(roomOf(file), roomOf(t))).map((t) => `${file} → ${t}`)).sort();
}

const { imports, threads } = readSources();

describe("the rooms keep their layers", () => {
  test("the sources' imports were read (every room has files that import)", () => {
    expect(imports.size).toBeGreaterThan(300);
    expect([...imports.values()].filter((t) => t.size > 0).length).toBeGreaterThan(250);
    expect(imports.get("src/sessions/tts-session.ts")).toContain("src/errors.ts");
    expect(imports.get("src/providers/stt-types.ts")).toContain("src/audio/vad.ts"); // `import("…")` in a type
    expect(threads.get("src/pools/engine-pool.ts")).toEqual(new Set(["workers/engine-worker.ts"]));
  });

  test("no file-level import cycle", () => {
    expect(cycles(imports)).toEqual([]);
  });

  test("no import cycle between rooms", () => {
    expect(cycles(roomEdges(imports))).toEqual([]);
  });

  test("every room is in the table, and the table itself is layered (no room may import one that may import it)", () => {
    const rooms = [...new Set([...imports.keys()].map(roomOf))].sort();
    expect(rooms.filter((room) => !(room in MAY_IMPORT))).toEqual([]);
    const table: Edges = new Map(Object.entries(MAY_IMPORT).map(([room, below]) => [room, new Set(below)]));
    expect(cycles(table)).toEqual([]);
  });

  test("each room imports only what the table lets it", () => {
    expect(forbidden(imports)).toEqual([]);
  });

  test("workers/ holds only thread entry points, each started by a pool or the database and compiled into the executable, and the protocols both sides read", () => {
    const build: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.build;
    const started = [...threads].flatMap(([file, entries]) => [...entries].map((entry) => ({ by: roomOf(file), entry })));
    expect(started.length).toBeGreaterThan(4);
    for (const { by, entry } of started) {
      expect({ entry, by: STARTS_THREADS.includes(by) }).toEqual({ entry, by: true });
      expect({ entry, room: roomOf(entry), exists: imports.has(entry), built: build.split(" ").includes(entry) }).toEqual({ entry, room: "workers", exists: true, built: true });
    }
    const entries = new Set(started.map((s) => s.entry));
    const inWorkers = [...imports.keys()].filter((f) => f.startsWith("workers/"));
    expect(inWorkers.filter((f) => roomOf(f) === "workers" && !entries.has(f))).toEqual([]);
    for (const protocol of inWorkers.filter((f) => roomOf(f) === "worker-protocols")) {
      const readers = [...imports].filter(([, targets]) => targets.has(protocol)).map(([file]) => roomOf(file));
      expect({ protocol, thread: readers.includes("workers"), main: readers.some((r) => r !== "workers") }).toEqual({ protocol, thread: true, main: true });
    }
  });

  test("the checks catch what they are for: a cycle, a room cycle, an import against the table", () => {
    const forged: Edges = new Map(imports);
    forged.set("src/audio/wav.ts", new Set([...(imports.get("src/audio/wav.ts") ?? []), "src/providers/types.ts"]));
    expect(forbidden(forged)).toEqual([...forbidden(imports), "src/audio/wav.ts → src/providers/types.ts"].sort());
    expect(cycles(roomEdges(forged))).toEqual([expect.arrayContaining(["audio", "providers"])]);
    forged.set("src/db/write-turns.ts", new Set(["src/db/sql.ts"]));
    expect(cycles(forged)).toContainEqual(["src/db/sql.ts", "src/db/write-turns.ts"]);
  });
});
