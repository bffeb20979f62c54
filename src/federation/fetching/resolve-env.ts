/** Where a fetch runs from: the bindings, the instance's base URL and its host (local handles are not fetched). */
import type { Env } from "../../env";

export interface ResolveEnv {
  env: Env;
  base: string;
  localHost: string;
}

export const resolveEnv = (env: Env, base: string, localHost: string): ResolveEnv => ({ env, base, localHost });
