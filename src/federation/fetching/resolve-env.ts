/**
 * Where a fetch runs from: the bindings, the instance's base URL and its host (local handles are not fetched); and
 * where what storing a fetched status causes goes (`after`: the caller's effects door), so no caller can leave it out.
 */
import type { Env } from "../../env";
import type { Effects } from "../../services/effects";

export interface ResolveEnv {
  env: Env;
  base: string;
  localHost: string;
  after: (e: Effects) => void;
}

export const resolveEnv = (env: Env, base: string, localHost: string, after: ResolveEnv["after"]): ResolveEnv => ({
  env,
  base,
  localHost,
  after,
});
