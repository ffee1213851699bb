/**
 * GraphiQL in the web interface (issue 25; Nautobot 1.6 serves it at `/graphql/`): the `graphiql` npm
 * package's prebuilt bundle with React 18's UMD builds, served from node_modules by this route (no CDN, no
 * build step; the CSP keeps allowing only this origin's scripts, and our `static/graphiql-init.js` starts
 * it). Queries are posted to `POST /graphql/` with the session cookie and the page's CSRF token in the
 * `X-CSRF-Token` header (the UI's CSRF hook checks it) and answered by the GraphQL layer as the logged-in
 * user, with their object permissions and the API's GraphQL limits (`GraphqlRunner`, given by server.ts so
 * that the ui layer never imports graphql/).
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../service/context.ts";
import { AppError } from "../../service/errors.ts";
import type { UiKit } from "../plugin.ts";

/** Runs one GraphQL request as `ctx`'s user: the HTTP status and JSON body of the API's `/api/graphql/`. */
export type GraphqlRunner = (
  ctx: Ctx,
  request: { query: unknown; variables: unknown; operationName: unknown },
) => Promise<{ status: number; body: unknown }>;

/** URL name → package file and content type of GraphiQL's browser files. */
const FILES: Record<string, { pkg: string; file: string; type: string }> = {
  "react.js": { pkg: "react", file: "umd/react.production.min.js", type: "text/javascript; charset=utf-8" },
  "react-dom.js": {
    pkg: "react-dom",
    file: "umd/react-dom.production.min.js",
    type: "text/javascript; charset=utf-8",
  },
  "graphiql.js": { pkg: "graphiql", file: "graphiql.min.js", type: "text/javascript; charset=utf-8" },
  "graphiql.css": { pkg: "graphiql", file: "graphiql.min.css", type: "text/css; charset=utf-8" },
};

/** A file of package `pkg` (resolved through its exported package.json, since the bundles are not exported). */
const packageFile = (pkg: string, file: string) =>
  fileURLToPath(new URL(file, import.meta.resolve(`${pkg}/package.json`)));

/** The first query shown to a new visitor. */
const DEFAULT_QUERY = `# Run with ▶ or Ctrl-Enter.
query {
  sites(limit: 10) {
    name
    status { name }
    devices { name }
  }
}
`;

export async function graphiqlRoutes(
  app: FastifyInstance,
  { kit, graphql }: { kit: UiKit; graphql?: GraphqlRunner | undefined },
): Promise<void> {
  const files = new Map<string, Buffer>();
  for (const [name, f] of Object.entries(FILES)) files.set(name, await readFile(packageFile(f.pkg, f.file)));

  app.get("/ui/graphiql/:name", async (req, reply) => {
    const name = (req.params as { name: string }).name;
    const body = files.get(name);
    if (!body) throw new AppError(404, "No such page.");
    return reply
      .header("Content-Type", FILES[name]!.type)
      .header("Cache-Control", "private, max-age=3600")
      .send(body);
  });

  app.get("/graphql/", async (req, reply) =>
    kit.page(req, reply, "graphiql", { title: "GraphiQL", defaultQuery: DEFAULT_QUERY }),
  );

  app.post("/graphql/", async (req, reply) => {
    if (!graphql) throw new AppError(404, "No such page.");
    const body = (req.body ?? {}) as Record<string, unknown>;
    const answer = await graphql(await kit.ctxFor(req), {
      query: body.query,
      variables: body.variables,
      operationName: body.operationName,
    });
    return reply
      .code(answer.status)
      .header("Content-Type", "application/json; charset=utf-8")
      .header("Cache-Control", "no-store")
      .send(JSON.stringify(answer.body));
  });
}
