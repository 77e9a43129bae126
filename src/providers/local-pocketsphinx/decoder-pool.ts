import { SphinxDecoder } from "./decoder.ts";

/**
 * An audio worker's decoders: at most `size`, built when first needed, kept and reused session
 * after session, each handed out reset. The main thread places at most `size` recognition
 * sessions on a worker, so a wait here only covers a session whose end is still on its way.
 */
export class DecoderPool {
  private readonly idle: SphinxDecoder[] = [];
  private readonly waiting: ((decoder: SphinxDecoder) => void)[] = [];
  private built = 0;

  constructor(
    private readonly size: number,
    /** POCKETSPHINX_MODEL_DIR; unset: Debian's place. */
    private readonly modelDir: string | undefined,
  ) {}

  async acquire(): Promise<SphinxDecoder> {
    let decoder = this.idle.pop();
    if (!decoder && this.built < this.size) {
      decoder = new SphinxDecoder(this.modelDir);
      this.built++;
    }
    decoder ??= await new Promise<SphinxDecoder>((resolve) => this.waiting.push(resolve));
    decoder.reset();
    return decoder;
  }

  release(decoder: SphinxDecoder): void {
    const next = this.waiting.shift();
    if (next) next(decoder);
    else this.idle.push(decoder);
  }
}
