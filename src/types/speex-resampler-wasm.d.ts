// The package ships Emscripten glue without types: a factory that resolves to the module.
declare module "@echogarden/speex-resampler-wasm" {
  const factory: (module?: { locateFile?: (file: string) => string }) => Promise<unknown>;
  export default factory;
}
