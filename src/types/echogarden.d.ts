// The @echogarden engine packages ship without type definitions: Emscripten module factories,
// whose modules are typed where they are used.
declare module "@echogarden/espeak-ng-emscripten" {
  // biome-ignore lint/suspicious/noExplicitAny: an untyped Emscripten module
  const init: (module?: { getPreloadedPackage?: () => ArrayBuffer }) => Promise<any>;
  export default init;
}
declare module "@echogarden/svoxpico-wasm" {
  // biome-ignore lint/suspicious/noExplicitAny: an untyped Emscripten module
  const init: (module?: { locateFile?: (file: string) => string }) => Promise<any>;
  export default init;
}
