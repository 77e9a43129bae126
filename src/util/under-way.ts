/**
 * Work started and not yet over, of which only the end matters (`Promise<void>`s that never
 * reject): `current` is one promise for all of it, undefined once it is all over.
 */
export class UnderWay {
  current: Promise<void> | undefined;

  add(work: Promise<void>): void {
    const all = this.current ? Promise.all([this.current, work]).then(() => {}) : work;
    this.current = all;
    void all.then(() => {
      if (this.current === all) this.current = undefined;
    });
  }

  /** Resolves once everything added so far, and anything added meanwhile, is over. */
  async over(): Promise<void> {
    while (this.current) await this.current;
  }
}
