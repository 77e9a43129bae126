// Exact money: prices are decimal strings turned into rationals of bigints, so a rate like
// "0.4 per hour" stays exact per second, and rounding happens only where a number is shown.

export interface Rational {
  num: bigint;
  den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  while (b) [a, b] = [b, a % b];
  return a;
}

export function rational(num: bigint, den: bigint = 1n): Rational {
  if (den === 0n) throw new Error("rational: zero denominator");
  if (den < 0n) [num, den] = [-num, -den];
  const g = gcd(num, den) || 1n;
  return { num: num / g, den: den / g };
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

export function parseDecimal(text: string): Rational {
  const m = DECIMAL.exec(text);
  if (!m) throw new Error(`not a non-negative decimal string: "${text}"`);
  const frac = m[2] ?? "";
  return rational(BigInt(m[1] + frac), 10n ** BigInt(frac.length));
}

export function add(a: Rational, b: Rational): Rational {
  return rational(a.num * b.den + b.num * a.den, a.den * b.den);
}

export function mul(a: Rational, b: Rational): Rational {
  return rational(a.num * b.num, a.den * b.den);
}

export function div(a: Rational, b: Rational): Rational {
  return rational(a.num * b.den, a.den * b.num);
}

/** Decimal string of `r` rounded half-up to at most `digits` significant digits, no trailing zeros. */
export function toSignificant(r: Rational, digits = 6): string {
  if (r.num < 0n) throw new Error("toSignificant: negative values are not prices");
  if (r.num === 0n) return "0";
  // exponent e with 10^e <= r < 10^(e+1)
  let e = r.num.toString().length - r.den.toString().length;
  if (compare(r, pow10(e)) < 0) e -= 1;
  const scale = digits - 1 - e; // keep `digits` digits: value * 10^scale is in [10^(digits-1), 10^digits)
  const scaled = scale >= 0 ? rational(r.num * 10n ** BigInt(scale), r.den) : rational(r.num, r.den * 10n ** BigInt(-scale));
  const rounded = (2n * scaled.num + scaled.den) / (2n * scaled.den); // floor(x + 1/2): half-up
  return formatScaled(rounded, scale);
}

function pow10(e: number): Rational {
  return e >= 0 ? rational(10n ** BigInt(e)) : rational(1n, 10n ** BigInt(-e));
}

function compare(a: Rational, b: Rational): number {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/** `digits * 10^-scale` as a plain decimal string. */
function formatScaled(digits: bigint, scale: number): string {
  if (scale <= 0) return (digits * 10n ** BigInt(-scale)).toString();
  const s = digits.toString().padStart(scale + 1, "0");
  const int = s.slice(0, s.length - scale);
  const frac = s.slice(s.length - scale).replace(/0+$/, "");
  return frac ? `${int}.${frac}` : int;
}
