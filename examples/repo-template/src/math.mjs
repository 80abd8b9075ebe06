/** Sum of two finite numbers. */
export function add(a, b) {
  return a + b;
}

/** The integers from `start` up to, but not including, `end`. */
export function range(start, end) {
  const out = [];
  for (let i = start; i < end; i++) out.push(i);
  return out;
}
