import type { ApiError } from "../../errors.ts";

/** A keyless socket's place among its address's: held until its init frame comes, it closes, or the deadline. */
export interface KeylessSlot {
  /** Why the handshake did not authenticate (`missing_api_key`, `invalid_api_key`, `tenant_disabled`). */
  readonly reason: ApiError;
  /** The init frame came, or the socket closed: the slot is free, the deadline off. */
  release(): void;
  /** When the socket opens: what its deadline does (at once if the deadline passed before it opened). */
  onExpiry(expire: () => void): void;
}

/**
 * `stream-input` sockets whose handshake carried no valid key: they wait for the init frame, which
 * may carry one. Each takes a slot of its client address before the upgrade (refused beyond
 * `perAddress`) and must send its init frame within `timeoutMs` of it, else it is closed. A slot
 * whose upgrade never happened frees itself at the deadline.
 */
export class KeylessSockets {
  private readonly perAddressCount = new Map<string, number>();

  constructor(
    private readonly timeoutMs: number,
    private readonly perAddress: number,
  ) {}

  /** Before the upgrade: the handshake's slot, or undefined when the address has none left. */
  reserve(address: string, reason: ApiError): KeylessSlot | undefined {
    const taken = this.perAddressCount.get(address) ?? 0;
    if (taken >= this.perAddress) return undefined;
    this.perAddressCount.set(address, taken + 1);
    let released = false;
    let expired = false;
    let expire: (() => void) | undefined;
    const slot: KeylessSlot = {
      reason,
      release: () => {
        if (released) return;
        released = true;
        clearTimeout(deadline);
        const left = (this.perAddressCount.get(address) ?? 1) - 1;
        if (left) this.perAddressCount.set(address, left);
        else this.perAddressCount.delete(address);
      },
      onExpiry: (then) => {
        expire = then;
        if (expired) queueMicrotask(then); // opened after its deadline
      },
    };
    const deadline = setTimeout(() => {
      slot.release();
      expired = true;
      expire?.();
    }, this.timeoutMs);
    return slot;
  }

  /** Seconds until a slot is sure to be free again, for `Retry-After`. */
  get retryAfterSeconds(): number {
    return Math.ceil(this.timeoutMs / 1000);
  }
}
