/**
 * Whole numbers with thousands separators, as `n.toLocaleString('en-US')` writes them ("1,234,567"),
 * without Intl: the first call of toLocaleString loads ICU's number formatting, which costs a run
 * about 15-50 ms before its first line. Anything but a safe integer is left to toLocaleString.
 */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  const digits = n < 0 ? String(-n) : String(n);
  let out = '';
  let i = digits.length % 3 || 3;
  out = digits.slice(0, i);
  for (; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${out}` : out;
}
