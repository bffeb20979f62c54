/** Items grouped by a key, in their order (values mapped by `value`, the items themselves by default). */
export function group<T, K, V = T>(
  items: T[],
  key: (t: T) => K,
  value: (t: T) => V = (t) => t as unknown as V,
): Map<K, V[]> {
  const m = new Map<K, V[]>();
  for (const t of items) {
    const k = key(t);
    const list = m.get(k);
    if (list) list.push(value(t));
    else m.set(k, [value(t)]);
  }
  return m;
}
