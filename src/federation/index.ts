/**
 * federation/ as the rest of the Worker sees it: the Worker's door (door/handle.ts) and contexts of the
 * `Federation` (federation.ts). Importing it sets the inbox listeners (listening/) on the Federation.
 *
 * Rooms: door/ (what a request passes first: signatures, guards, authorized fetch, document loaders),
 * listening/ (one file per inbound activity family), documents/ (ActivityStreams documents both ways: what is
 * served and sent, and reading what others send), fetching/ (going out for documents: resolving, threads,
 * backfill, featured, refresh, relays) and delivery/ (the outbox sent to other servers).
 */
import { registerListeners } from "./federation";
import { registerInbox } from "./listening/inbox";

registerListeners(registerInbox);

export { handleFederated } from "./door/handle";
export { federationContext, federationRequestContext, type FederationData } from "./federation";
