/** Mastodon's admin entities for domain rules (docs.joinmastodon.org: Admin::DomainBlock, Admin::DomainAllow). */
import { z } from "@hono/zod-openapi";

export const DomainBlockSchema = z
  .object({
    id: z.string(),
    domain: z.string(),
    digest: z.string().regex(/^[0-9a-f]{64}$/),
    created_at: z.string().datetime(),
    severity: z.enum(["noop", "silence", "suspend"]),
    reject_media: z.boolean(),
    reject_reports: z.boolean(),
    private_comment: z.string().nullable(),
    public_comment: z.string().nullable(),
    obfuscate: z.boolean(),
  })
  .openapi("AdminDomainBlock");

export const DomainAllowSchema = z
  .object({ id: z.string(), domain: z.string(), created_at: z.string().datetime() })
  .openapi("AdminDomainAllow");

/** What an import does (or would do, previewed). */
export const ImportPlanSchema = z.object({
  applied: z.boolean(),
  added: z.array(DomainBlockSchema),
  changed: z.array(z.object({ before: DomainBlockSchema, after: DomainBlockSchema })),
  unchanged: z.number().int(),
  kept_by_hand: z.array(z.string()),
  removed: z.array(DomainBlockSchema),
  severs: z.number().int(),
});
