/**
 * GraphQL over HTTP (issue 11; Nautobot 1.6 `GraphQLDRFAPIView`): `POST /api/graphql/` with
 * `{query, variables, operationName}` and `GET /api/graphql/?query=`, behind the API's token
 * authentication (the http layer's request hook has set the user and grants), and the saved queries'
 * `POST /api/extras/graphql-queries/<id>/run/` with `{variables}`. Parse and validation errors answer 400
 * `{"errors": [...]}`; errors while resolving answer 200 with `data` and `errors`, as Nautobot does.
 * The response header `X-SQL-Queries` counts the SQL statements the request ran.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type DocumentNode, execute, GraphQLError, type GraphQLSchema, parse, validate } from "graphql";
import type { Kysely, KyselyPlugin } from "kysely";
import { normalizeUuid } from "../query/filters.ts";
import type { Registry } from "../registry/index.ts";
import { type Ctx, definitionsMemo } from "../service/context.ts";
import { AppError, NotFoundError } from "../service/errors.ts";
import { AS_OF_HEADER, resolvePoint } from "../service/history.ts";
import { ctxAt } from "../service/history-read.ts";
import { getRow, listRows } from "../service/read.ts";
import { m2mPairs } from "../service/rows.ts";
import { parseJsonColumn } from "../store/values.ts";
import { rootPoint } from "./as-of.ts";
import { ObjectBudget } from "./budget.ts";
import { limitRule, type QueryLimits } from "./limits.ts";
import { Loaders } from "./loaders.ts";
import { nautobotMessage, nautobotRules } from "./messages.ts";
import { buildSchema, type GraphContext } from "./schema.ts";

/** What the plugin needs from the server: the registry and a service context for a request. */
export interface GraphqlOptions {
  reg: Registry;
  limits: QueryLimits;
  /** The request's service context (user, grants, base URL), as the REST routes get it. */
  ctxFor(req: FastifyRequest): Ctx;
}

/** A Kysely plugin counting the statements run through it. */
class Counter implements KyselyPlugin {
  n = 0;
  transformQuery(args: Parameters<KyselyPlugin["transformQuery"]>[0]) {
    return args.node;
  }
  async transformResult(args: Parameters<KyselyPlugin["transformResult"]>[0]) {
    this.n++;
    return args.result;
  }
}

let cachedSchema: { key: string; schema: GraphQLSchema } | undefined;

/**
 * The schema for the current custom fields (model key → `cf_` names), rebuilt when they change. Two small
 * queries per request, memoised with the read cache.
 */
async function schemaFor(ctx: Ctx, reg: Registry): Promise<GraphQLSchema> {
  let key = definitionsMemo(ctx).get("graphql:cf") as string | undefined;
  if (key === undefined) {
    const system: Ctx = { ...ctx, grants: undefined };
    const cfModel = reg.get("extras.customfield");
    const { rows } = await listRows(system, cfModel, { params: new Map(), limit: undefined, offset: 0 });
    const names = new Map(rows.map((r) => [String(r.id), String(r.name)]));
    const byModel = new Map<string, string[]>();
    for (const [id, ct] of await m2mPairs(system, cfModel, "content_types", [...names.keys()]))
      byModel.set(ct, [...(byModel.get(ct) ?? []), names.get(id)!].sort());
    key = JSON.stringify([...byModel].sort());
    definitionsMemo(ctx).set("graphql:cf", key);
  }
  if (cachedSchema?.key !== key)
    cachedSchema = { key, schema: buildSchema(reg, new Map(JSON.parse(key) as Array<[string, string[]]>)) };
  return cachedSchema.schema;
}

/**
 * Build the schema for the current custom fields now (at start-up: `server.ts` calls it before the server
 * listens), so that no request pays for it: building it holds the event loop for a few hundred ms (issue 23).
 * A later change of custom fields rebuilds it once, on the next query.
 */
export async function warmSchema(ctx: Ctx, reg: Registry): Promise<void> {
  await schemaFor(ctx, reg);
}

/** The answer to one GraphQL request: HTTP status, JSON body and the SQL statements it ran. */
export interface GraphqlAnswer {
  status: number;
  body: { data?: unknown; errors?: Array<Record<string, unknown>> };
  sqlQueries: number;
  /** Whether the document was executed (not refused before: no query, a parse or validation error). */
  executed: boolean;
  /** The point of history its root fields asked for (issue 27). */
  point?: number | undefined;
}

/**
 * Answer one GraphQL request as user `base` (its actor, grants and read cache) with the schema of `reg` and
 * the limits: 400 `{errors}` for a missing query, a parse or validation error (limits included) or an
 * answer past the object budget; 200 `{data}` or `{errors, data}` otherwise (Nautobot 1.6). Used by
 * `POST /api/graphql/` and the web interface's GraphiQL (server.ts hands it to the ui layer).
 */
export async function answerGraphql(
  base: Ctx,
  opts: { reg: Registry; limits: QueryLimits },
  query: unknown,
  variables: unknown,
  operationName: unknown,
): Promise<GraphqlAnswer> {
  const counter = new Counter();
  let executed = false;
  let point: number | undefined;
  const done = (status: number, body: GraphqlAnswer["body"]) => ({
    status,
    body,
    sqlQueries: counter.n,
    executed,
    point,
  });
  if (typeof query !== "string" || !query.trim())
    return done(400, { errors: [{ message: "Must provide query string." }] });
  let ctx: Ctx = { ...base, db: (base.db as Kysely<any>).withPlugin(counter) };
  const schema = await schemaFor(ctx, opts.reg);
  let doc: DocumentNode;
  try {
    doc = parse(query);
  } catch (e) {
    return done(400, { errors: [errorJson(e)] });
  }
  const vars = typeof variables === "string" ? parseJsonColumn(variables) : variables;
  const problems = validate(schema, doc, [...nautobotRules, limitRule(opts.limits, vars)]);
  if (problems.length) return done(400, { errors: problems.map(errorJson) });
  // A point of history asked by the root fields (issue 27): the whole query reads there.
  try {
    const wanted = rootPoint(
      doc,
      vars && typeof vars === "object" ? (vars as Record<string, unknown>) : {},
      typeof operationName === "string" ? operationName : undefined,
    );
    if (wanted) {
      point = await resolvePoint(ctx, wanted.asOf, wanted.asOfSeq);
      const at = ctxAt(base, point);
      ctx = { ...at, db: (at.db as Kysely<any>).withPlugin(counter) };
    }
  } catch (e) {
    if (e instanceof GraphQLError || e instanceof AppError) return done(400, { errors: [errorJson(e)] });
    throw e;
  }
  const context: GraphContext = {
    ctx,
    loaders: new Loaders(ctx, opts.limits.maxRows),
    budget: new ObjectBudget(opts.limits.maxObjects),
  };
  executed = true;
  const result = await execute({
    schema,
    document: doc,
    contextValue: context,
    variableValues: vars && typeof vars === "object" ? (vars as Record<string, unknown>) : undefined,
    operationName: typeof operationName === "string" ? operationName : undefined,
  });
  // Past the object cap the partial answer is dropped: the error alone, as for the limits checked before.
  if (context.budget.exceeded) return done(400, { errors: [errorJson(context.budget.exceeded)] });
  if (result.errors?.length && result.data === undefined)
    return done(400, { errors: result.errors.map(errorJson) });
  return done(
    200,
    result.errors?.length
      ? { errors: result.errors.map(errorJson), data: result.data }
      : { data: result.data },
  );
}

/** Run one GraphQL request and answer it. */
async function run(
  req: FastifyRequest,
  reply: FastifyReply,
  opts: GraphqlOptions,
  query: unknown,
  variables: unknown,
  operationName: unknown,
): Promise<FastifyReply> {
  const { status, body, sqlQueries, executed, point } = await answerGraphql(
    opts.ctxFor(req),
    opts,
    query,
    variables,
    operationName,
  );
  if (executed) reply.header("X-SQL-Queries", String(sqlQueries));
  if (point !== undefined) reply.header(AS_OF_HEADER, String(point));
  return reply.code(status).header("Content-Type", "application/json").send(JSON.stringify(body));
}

/**
 * A GraphQL error as JSON (message, locations, path), the message in Nautobot's words (`messages.ts`);
 * internal errors are logged, not shown.
 */
function errorJson(e: unknown): Record<string, unknown> {
  const err = e as { message?: string; locations?: unknown; path?: unknown; originalError?: unknown };
  const out: Record<string, unknown> = {
    message: e instanceof GraphQLError ? nautobotMessage(e) : String(err.message ?? e),
  };
  if (err.locations) out.locations = err.locations;
  if (err.path) out.path = err.path;
  return out;
}

/** Register the GraphQL routes. */
export async function graphqlPlugin(app: FastifyInstance, opts: GraphqlOptions): Promise<void> {
  // GraphQL reaches every model (notes, saved queries, …): a login even with anonymous reads, as Nautobot's
  // view needs IsAuthenticated (issue 23). The http layer's request hook reads this route option.
  const config = { loginRequired: true, asOf: true };
  app.post("/api/graphql/", { config }, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    return run(req, reply, opts, body.query, body.variables, body.operationName);
  });
  app.get("/api/graphql/", { config }, async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    return run(req, reply, opts, q.query, q.variables, q.operationName);
  });
  app.post("/api/extras/graphql-queries/:id/run/", { config }, async (req, reply) => {
    const raw = (req.params as { id: string }).id;
    const id = normalizeUuid(raw);
    if (!id) throw new NotFoundError();
    const ctx = opts.ctxFor(req);
    const row = await getRow(ctx, opts.reg.get("extras.graphqlquery"), id);
    const body = (req.body ?? {}) as Record<string, unknown>;
    return run(req, reply, opts, row.query, body.variables ?? {}, undefined);
  });
}
