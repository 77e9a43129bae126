import { dlopen } from "bun:ffi";

let telemetryDisabled = false;

/**
 * onnxruntime 1.30 on Linux starts Microsoft's telemetry (the 1DS SDK) with its environment: it
 * leaves `mat-debug-<pid>.log` and `.ses` in the temporary directory, keeps a device id and an event
 * queue under `$XDG_CACHE_HOME/Microsoft`, and uploads to Microsoft. `ORT_DISABLE_TELEMETRY=1` stops
 * all of it, but the library reads it with getenv(3), which Bun's environment object does not reach: it is
 * set in the C environment, before the library is loaded. That environment is the process's, and
 * setenv(3) is not safe while other threads read it: the main thread sets it once, before it starts
 * the threads that load the library.
 */
export function disableOnnxTelemetry(): void {
  if (telemetryDisabled) return;
  telemetryDisabled = true;
  const libc = dlopen("libc.so.6", { setenv: { args: ["ptr", "ptr", "i32"], returns: "i32" } });
  const cString = (text: string) => Buffer.from(`${text}\0`);
  libc.symbols.setenv(cString("ORT_DISABLE_TELEMETRY"), cString("1"), 1);
  libc.close();
}
