import type { ApiError } from "../../errors.ts";

/** A keyless socket's place among its address's: held until its init frame comes, it closes, or the deadline. */
export interface KeylessSlot {
  /** Why the handshake did not authenticate (`missing_api_key`, `invalid_api_key`, `tenant_disabled`). */
  readonly reason: ApiError;
  /** The init frame came, or the socket closed: the slot is free, the deadline off. */
  release(): void;
}

interface Slot extends KeylessSlot {
  /** Closes the socket at the deadline; unset until the socket is open. */
  expire?: (slot: KeylessSlot) => void;
  expired: boolean;
}

/**
 * `stream-input` sockets whose handshake carried no valid key: they wait for the init frame, which
 * may carry one. Each takes a slot of its client address before the upgrade (refused beyond
 * `perAddress`) and must send its init frame within `timeoutMs` of it, else it is closed. Slots
 * are taken per request, since the checks before an upgrade may run twice for one; a slot whose
 * upgrade never happened frees itself at the deadline.
 */
export class KeylessSockets {
  private readonly perAddressCount = new Map<string, number>();
  private readonly byRequest = new WeakMap<Request, Slot>();

  constructor(
    private readonly timeoutMs: number,
    private readonly perAddress: number,
  ) {}

  /** Before the upgrade: false when the address has no slot left. */
  reserve(request: Request, address: string, reason: ApiError): boolean {
    if (this.byRequest.has(request)) return true;
    const taken = this.perAddressCount.get(address) ?? 0;
    if (taken >= this.perAddress) return false;
    this.perAddressCount.set(address, taken + 1);
    let released = false;
    const slot: Slot = {
      reason,
      expired: false,
      release: () => {
        if (released) return;
        released = true;
        clearTimeout(deadline);
        const left = (this.perAddressCount.get(address) ?? 1) - 1;
        if (left) this.perAddressCount.set(address, left);
        else this.perAddressCount.delete(address);
      },
    };
    const deadline = setTimeout(() => {
      slot.release();
      slot.expired = true;
      slot.expire?.(slot);
    }, this.timeoutMs);
    this.byRequest.set(request, slot);
    return true;
  }

  /** When the socket opens: its slot, whose deadline then calls `expire`; undefined when the handshake authenticated. */
  claim(request: Request, expire: (slot: KeylessSlot) => void): KeylessSlot | undefined {
    const slot = this.byRequest.get(request);
    if (!slot) return undefined;
    slot.expire = expire;
    if (slot.expired) queueMicrotask(() => expire(slot)); // opened after its deadline
    return slot;
  }

  /** Seconds until a slot is sure to be free again, for `Retry-After`. */
  get retryAfterSeconds(): number {
    return Math.ceil(this.timeoutMs / 1000);
  }
}
