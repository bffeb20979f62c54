/** The hono environment of every request: the Worker's bindings and what the request carries along. */
import type { Env } from "../env";
import type { AccountRow, AppRow, UserRow } from "../services/accounts";
import type { Effects } from "../services/effects";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    auth?: Auth | null;
    /** What must follow the action after the answer (`after()` in http/route.ts; run by route()). */
    effects?: Effects;
    /** The parameters the route declares (route()): the only ones a `Link` header carries on. */
    paramNames?: ReadonlySet<string>;
  };
};

/** Who is calling (http/auth.ts reads it from the request). */
export interface Auth {
  tokenId: string | null;
  /** When the sign-in that made the token passed its second factor (tokens.second_factor_at); null otherwise. */
  secondFactorAt: number | null;
  scopes: string[];
  app: AppRow | null;
  account: AccountRow | null;
  user: UserRow | null;
}
