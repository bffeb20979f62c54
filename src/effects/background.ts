/** The door's start of work after the answer that is no action's effect (a leaf: anything may import it). */
export type WaitUntil = { waitUntil(p: Promise<unknown>): void };

/**
 * Work after the answer that is no action's effect and that nothing depends on: a cache write, the usage meter's
 * flush, an activity stamp, presence, a look-up that outlasted its answer. Started here so that every `waitUntil`
 * starts in the door (scripts/door.test.ts keeps it so). A failure is logged under `name`.
 */
export function background(ctx: WaitUntil, name: string, work: Promise<unknown>): void {
  ctx.waitUntil(work.catch((err) => console.error(name, err)));
}
