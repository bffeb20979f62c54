/** Bounding work by the clock, whatever its fetches do with their abort signals. */

/** `work`, or null once `ms` have passed (the work is abandoned, not awaited). */
export function within<T>(work: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const deadline = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  return Promise.race([work.catch(() => null), deadline]).finally(() => clearTimeout(timer!));
}
