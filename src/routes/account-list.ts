/** Answering a page of accounts: Link header from the relation cursors, optional relationships, one renderer. */
import { db } from "../db/client";
import { setLinkHeader } from "../http/pagination";
import type { Ctx } from "../http/route";
import { renderContext } from "../http/urls";
import { renderAccount } from "../render/account";
import type { Account } from "../schemas/account";
import type { PagedAccount } from "../services/account-pages";
import { loadRelationships } from "../services/relationships";

export async function answerAccounts(
  c: Ctx,
  rows: PagedAccount[],
  opts: {
    viewerId: string | null;
    withRelationships?: boolean;
    link?: boolean;
    extend?: (row: PagedAccount, account: Account) => object;
  },
) {
  if (opts.link !== false)
    setLinkHeader(
      c,
      rows.map((r) => r.cursor),
    );
  const rels =
    opts.withRelationships && opts.viewerId
      ? await loadRelationships(
          db(c.env),
          opts.viewerId,
          rows.map((r) => r.account.id),
        )
      : undefined;
  const ctx = renderContext(c, opts.viewerId);
  return c.json(
    rows.map((r) => {
      const account = renderAccount(ctx, r, { relationship: rels?.get(r.account.id) });
      return opts.extend ? { ...account, ...opts.extend(r, account) } : account;
    }),
  );
}
