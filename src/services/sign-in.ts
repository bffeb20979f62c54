/**
 * Who may sign in, and how: ONE rule for every way in (HTTP Basic, the password grant, the authorize page, and
 * every request made with a token or a session), so they cannot answer differently for the same account.
 * Order, as Pleroma 2.5: an account that may not use the API at all (disabled, awaiting approval, unconfirmed)
 * is refused with that reason first; then a password reset an admin forced; then the second factor: a password
 * sign-in of an MFA user goes on to it (grant and page), and HTTP Basic, which has no second step, is refused.
 */
import { forbidden } from "../lib/errors";
import type { AccountRow, UserRow } from "./accounts";

/** Refuses disabled, unapproved and unconfirmed users with Pleroma's identifiers. */
export function assertActive(account: AccountRow, user: UserRow): void {
  if (account.deactivated) {
    throw forbidden("Your account is currently disabled", { identifier: "account_is_disabled" });
  }
  if (user.approvalPending) {
    throw forbidden("Your account is awaiting approval.", { identifier: "awaiting_approval" });
  }
  if (!user.confirmed) {
    throw forbidden("Your login is missing a confirmed e-mail address", { identifier: "missing_confirmed_email" });
  }
}

const resetRequired = () => forbidden("Password reset is required", { identifier: "password_reset_required" });

/** How a password sign-in goes on, or throws why it may not. */
export type PasswordSignIn = "signed-in" | "second-factor";

/** The rule for a user whose password matched (`checkLogin`), signing in `via` one of the three ways. */
export function passwordSignIn(
  found: { account: AccountRow; user: UserRow; mfa: boolean; resetPending: boolean },
  via: "basic" | "grant" | "page",
): PasswordSignIn {
  assertActive(found.account, found.user);
  if (found.resetPending) throw resetRequired();
  if (!found.mfa) return "signed-in";
  // Pleroma refuses Basic for MFA users: a password alone is not enough.
  if (via === "basic") throw forbidden("Invalid credentials.");
  return "second-factor";
}
