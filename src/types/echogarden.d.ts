// The @echogarden engine packages ship without type definitions: Emscripten module factories.
declare module "@echogarden/espeak-ng-emscripten" {
  const init: () => Promise<any>;
  export default init;
}
declare module "@echogarden/svoxpico-wasm" {
  const init: () => Promise<any>;
  export default init;
}
