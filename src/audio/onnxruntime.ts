import { dlopen } from "bun:ffi";
import { mkdirSync, renameSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { threadId } from "node:worker_threads";
import type * as Ort from "onnxruntime-node";
import library from "onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1" with { type: "file" };

// onnxruntime-node is a native addon linked to libonnxruntime.so.1, which it finds beside itself in
// node_modules. The compiled executable embeds both, and Bun loads the addon from inside it, but
// the system's dynamic linker cannot read a library there: the executable copies it once into its
// cache directory and loads it before the addon, whose link to it is then resolved by its name. The
// library is linux-x64's, the platform `bun run build` targets.

/**
 * onnxruntime's JavaScript API, its native library loaded (in the executable, from a copy in
 * `cacheDir`). Its telemetry is off only if `disableOnnxTelemetry()` (onnx-telemetry.ts) ran first.
 */
export async function loadOnnxRuntime(cacheDir: string | undefined): Promise<typeof Ort> {
  if (Bun.isStandaloneExecutable) {
    if (!cacheDir) throw new Error("onnxruntime's library must be copied out of the executable, and no cache directory was given");
    dlopen(await cachedLibrary(cacheDir), { OrtGetApiBase: { args: [], returns: "ptr" } });
  }
  return import("onnxruntime-node");
}

/** The library's path in the cache directory (config's `cacheDir`). Its embedded name carries a hash of its contents, so each build's library has its own file. */
async function cachedLibrary(dir: string): Promise<string> {
  const embedded = Bun.file(library);
  const path = join(dir, basename(library));
  if (statSync(path, { throwIfNoEntry: false })?.size === embedded.size) return path;
  // Written aside, then renamed: another thread or process copying it at the same time never sees half a file.
  const partial = `${path}.${process.pid}-${threadId}.partial`;
  try {
    mkdirSync(dir, { recursive: true });
    await Bun.write(partial, embedded);
  } catch (err) {
    throw new Error(`cannot copy onnxruntime's library into ${dir} (XDG_CACHE_HOME): ${(err as Error).message}`);
  }
  renameSync(partial, path);
  return path;
}
