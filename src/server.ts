/**
 * The whole web server: the REST API (`http/`) and the web interface (`ui/`), siblings over the service
 * layer, composed here so that neither imports the other.
 */
import type { FastifyInstance } from "fastify";
import { type AppDeps, buildApp, VERSION } from "./http/app.ts";
import { uiPlugin } from "./ui/plugin.ts";
import { workerSettingsFromEnv } from "./webhooks/worker.ts";

/** Build the API and the UI on one Fastify instance. Call `listen` on it to serve. */
export async function buildServer(deps: AppDeps): Promise<FastifyInstance> {
  const app = await buildApp(deps);
  const settings = {
    enforceGlobalUnique: deps.config.enforceGlobalUnique,
    webhookTargets: deps.config.webhookTargets,
    changelog: true,
    webhookMaxAttempts: deps.config.webhookMaxAttempts,
  };
  const webhookSettings = workerSettingsFromEnv(process.env, VERSION);
  await app.register(uiPlugin, { store: deps.store, reg: deps.reg, settings, webhookSettings });
  return app;
}
