// Files imported `with { type: "file" }`: the import is the file's path, inside the compiled
// executable when there is one (see `bun run build`).
declare module "*.onnx" {
  const path: string;
  export default path;
}
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.data" {
  const path: string;
  export default path;
}
declare module "*.so.1" {
  const path: string;
  export default path;
}
