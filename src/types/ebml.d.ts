// The package ships no types; the part used here: a Node Transform stream emitting [kind, element].
declare module "ebml" {
  import { Transform } from "node:stream";
  export class Decoder extends Transform {}
}
