/**
 * A KvStore that holds what is set in memory until `keep` writes it through: the inbox door's store for the actor
 * and key documents a signature check fetches. A request's signature names any URL it likes, so what that URL
 * serves must not reach D1 before the signature is known to be good (a stranger varying the URL would fill the
 * database and spend its daily writes). As Mastodon stores a remote account only once its signature verifies.
 * Reads see the held entries first, so a document fetched once is read once within the request.
 */
import type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from "@fedify/fedify";

const encode = (key: KvKey) => JSON.stringify(key);

/** An entry held until the request is authenticated. */
export interface HeldEntry {
  key: KvKey;
  value: unknown;
  options?: KvStoreSetOptions;
}

/** A store that writes many entries at once (one D1 batch: door/kv.ts). */
export interface BatchKvStore extends KvStore {
  setMany(entries: HeldEntry[]): Promise<void>;
}

export class PendingKv implements KvStore {
  private readonly held = new Map<string, HeldEntry>();

  constructor(private readonly base: BatchKvStore) {}

  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const entry = this.held.get(encode(key));
    return entry ? (entry.value as T) : this.base.get<T>(key);
  }

  async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    this.held.set(encode(key), { key, value, options });
  }

  async delete(key: KvKey): Promise<void> {
    this.held.delete(encode(key));
    await this.base.delete(key);
  }

  /** Not used by the loaders and key cache this store serves: the base store's entries. */
  list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    return this.base.list(prefix);
  }

  /** Writes the held entries `worth` keeping to the base store (in one batch), and forgets them all. */
  async keep(worth: (entry: HeldEntry) => boolean): Promise<void> {
    const entries = [...this.held.values()].filter(worth);
    this.held.clear();
    if (entries.length) await this.base.setMany(entries);
  }
}
