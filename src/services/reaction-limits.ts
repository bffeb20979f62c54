/**
 * How many reactors a reaction list names, read by the list itself (reactions.ts) and by hydration (hydrate.ts):
 * a leaf, so that hydration imports no service that imports it back.
 */

/** Accounts listed per emoji in a reaction list (the count stays exact). */
export const REACTION_ACCOUNTS_MAX = 80;
