/** The hono environment of every request: the Worker's bindings and what the request carries along. */
import type { Env } from "../env";
import type { Auth } from "./auth";
import type { Effects } from "../services/effects";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    auth?: Auth | null;
    /** What must follow the action after the answer (`after()` in http/route.ts; run by route()). */
    effects?: Effects;
    /** The door ran them: later calls of `after()` (work that went on after the answer) go to it at once. */
    effectsRan?: boolean;
    /** The parameters the route declares (route()): the only ones a `Link` header carries on. */
    paramNames?: ReadonlySet<string>;
  };
};
