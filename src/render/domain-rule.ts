/** Mastodon's `Admin::DomainBlock` and `Admin::DomainAllow` entities (the id is the domain). */
import type { StoredBlock } from "../services/domain-rules";

export function renderDomainBlock(b: StoredBlock & { digest: string }) {
  return {
    id: b.domain,
    domain: b.domain,
    digest: b.digest,
    created_at: new Date(b.createdAt).toISOString(),
    severity: b.severity,
    reject_media: b.rejectMedia,
    reject_reports: b.rejectReports,
    private_comment: b.privateComment || null,
    public_comment: b.publicComment || null,
    obfuscate: b.obfuscate,
  };
}

export const renderDomainAllow = (a: { domain: string; createdAt: number }) => ({
  id: a.domain,
  domain: a.domain,
  created_at: new Date(a.createdAt).toISOString(),
});
