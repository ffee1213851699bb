/**
 * The whole web server: the REST API (`http/`), GraphQL (`graphql/`) and the web interface (`ui/`), siblings
 * over the service layer, composed here so that none imports another.
 */
import type { FastifyInstance } from "fastify";
import { limitsFromEnv } from "./graphql/limits.ts";
import { answerGraphql, graphqlPlugin, warmSchema } from "./graphql/plugin.ts";
import { type AppDeps, buildApp, LoginLimiter, VERSION } from "./http/app.ts";
import { makeKit } from "./http/kit.ts";
import { uiPlugin } from "./ui/plugin.ts";
import { workerSettingsFromEnv } from "./webhooks/worker.ts";

/** Build the API and the UI on one Fastify instance. Call `listen` on it to serve. */
export async function buildServer(deps: AppDeps): Promise<FastifyInstance> {
  // One limiter for every password check: HTTP Basic (http/) and the web login (ui/) (issue 23).
  const loginLimiter = deps.loginLimiter ?? new LoginLimiter(deps.config.loginLimits);
  const app = await buildApp({ ...deps, loginLimiter });
  const settings = {
    enforceGlobalUnique: deps.config.enforceGlobalUnique,
    webhookTargets: deps.config.webhookTargets,
    webhookRedactHeaders: deps.config.webhookRedactHeaders,
    changelog: true,
    webhookMaxAttempts: deps.config.webhookMaxAttempts,
  };
  const webhookSettings = workerSettingsFromEnv(process.env, VERSION);
  const kit = makeKit(deps.store, deps.reg, deps.config, settings);
  const limits = limitsFromEnv(process.env);
  await app.register(graphqlPlugin, { reg: deps.reg, limits, ctxFor: kit.ctxFor });
  // The GraphQL schema is built before the server listens, not by the first query (issue 23).
  app.addHook("onReady", () => warmSchema(kit.systemCtx(), deps.reg));
  await app.register(uiPlugin, {
    store: deps.store,
    reg: deps.reg,
    settings,
    webhookSettings,
    loginLimiter,
    // GraphiQL's queries, answered by the GraphQL layer as the session's user (issue 25).
    graphql: (ctx, q) => answerGraphql(ctx, { reg: deps.reg, limits }, q.query, q.variables, q.operationName),
  });
  return app;
}
