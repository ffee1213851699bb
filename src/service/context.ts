/**
 * The per-request context handed to the service: who acts, the request id shared by every change of the
 * request, how to build absolute URLs, and per-request caches.
 */

import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { TargetPolicy } from "../net/targets.ts";
import type { Model, Registry } from "../registry/index.ts";
import type { Db, Store } from "../store/db.ts";
import type { Grants } from "./permissions.ts";

/** The authenticated user acting in a request. */
export interface Actor {
  id: string;
  username: string;
  isSuperuser: boolean;
}

/** Settings the service needs (from config). */
export interface ServiceSettings {
  /** Nautobot ENFORCE_GLOBAL_UNIQUE (default false). */
  enforceGlobalUnique: boolean;
  /** Change logging on/off (always on for the API). */
  changelog: boolean;
  /** Attempts per webhook delivery before it is marked failed (default 5). */
  webhookMaxAttempts?: number;
  /** Which webhook targets non-superusers may save (net/targets.ts); default: public addresses only. */
  webhookTargets?: TargetPolicy;
  /**
   * Request headers (names, any case) hidden in the delivery log from users who may not change the webhook,
   * beyond `Authorization`, `Proxy-Authorization` and `Cookie` (INVENTORY_WEBHOOK_REDACT_HEADERS; issue 23).
   */
  webhookRedactHeaders?: readonly string[];
}

/** Everything a service call needs. `db` is the transaction when inside one. */
export interface Ctx {
  store: Store;
  db: Db;
  reg: Registry;
  settings: ServiceSettings;
  /** `http://host` prefix for absolute URLs (no trailing slash); "" gives relative paths. */
  baseUrl: string;
  actor: Actor | undefined;
  requestId: string;
  /** Per-request memo of nested representations: model key → id → object. */
  nestedCache: Map<string, Map<string, Record<string, unknown>>>;
  /** Per-request memo of data lookups (shared by read requests while the data token is unchanged). */
  memo: Map<string, unknown>;
  /**
   * Memo of definitions (statuses, custom fields, relationships, computed fields, config contexts,
   * webhooks; `definitionsMemo`), shared by every request while the definitions token is unchanged, reads
   * and writes alike. A write of a definition detaches it (`definitionsChanged`).
   */
  defs: Definitions;
  /** Token keys created in this request, shown once in clear (token id → key). */
  freshTokenKeys: Map<string, string>;
  /** The acting user's object permissions; undefined = unrestricted (superuser, importer, CLI). */
  grants?: Grants | undefined;
  /** Do not instantiate device components from templates (the NetBox importer loads the real ones). */
  skipTemplates?: boolean;
  /**
   * Who the change log names for writes without an acting user (`actor` undefined: the NetBox importer,
   * the CLI): `user_id` (null when no such user) and `user_name`. Unset: "system" (issue 25; Nautobot
   * would show "Undefined").
   */
  changedBy?: { id: string | null; username: string };
  /** A REST API request: its writes apply the serializers' rules (`FieldBase.defaultOnWrite`). */
  restApi?: boolean;
  /**
   * Check each item of a bulk create before writing the next (service/write.ts `createMany`): set when the
   * transaction runs again after the bulk's deferred checks found a clash.
   */
  checkEachItem?: boolean;
  /**
   * Allocate IP addresses with their claim first, never ahead (service/allocation.ts `allocateIps`): set when
   * the transaction runs again after a claim ahead did not hold (`ClaimAheadFailed`).
   */
  claimFirst?: boolean;
  /**
   * The definitions token this write assumes instead of reading it when the request arrived (a round trip on
   * PostgreSQL): the token of the shared definitions memo. Its transaction uses that memo and checks the
   * token in its first statement (`Dialect.assertToken`); when the token has moved on it runs again with
   * fresh definitions (service/write.ts `inTransaction`). Until then `defs` is the request's own memo.
   */
  assumedDefinitions?: string | undefined;
}

/** A request's handle on the definitions memo; `map` is replaced by a private one when definitions change. */
export interface Definitions {
  map: Map<string, unknown>;
}

/**
 * Models whose rows are definitions: a write of one rewrites the definitions token (service/write.ts) and
 * detaches the writing request from the shared definitions memo.
 */
export const DEFINITION_MODELS: ReadonlySet<string> = new Set([
  "extras.status",
  "extras.customfield",
  "extras.customfieldchoice",
  "extras.relationship",
  "extras.computedfield",
  "extras.configcontext",
  "extras.configcontextschema",
  "extras.webhook",
]);

/**
 * Models a delete of which, or an update of these columns, may free address space: such a transaction
 * rewrites the address-space token (store/db.ts ADDRESS_SPACE_KEY), which invalidates the allocator's hints
 * (service/allocation.ts).
 */
export const SPACE_MODELS: ReadonlyMap<string, readonly string[]> = new Map([
  ["ipam.ipaddress", ["address_family", "address_host", "vrf_id"]],
]);

/**
 * `model` as the request's API version shapes it (`ctx.reg`, registry/index.ts `registryAt`), whichever
 * registry the caller took it from: representations and writes use the fields of the request's version.
 */
export function modelAt(ctx: Ctx, model: Model): Model {
  const m = ctx.reg.models.get(model.key);
  return m ?? model;
}

/** The memo for definition lookups of `ctx` (see `Ctx.defs`). */
export function definitionsMemo(ctx: Ctx): Map<string, unknown> {
  return ctx.defs.map;
}

/** This request wrote a definition: from now on it reads definitions afresh, never into the shared memo. */
export function definitionsChanged(ctx: Ctx): void {
  ctx.defs.map = new Map();
}

const sharedDefinitions = new WeakMap<Store, { token: string; map: Map<string, unknown> }>();

/** The shared definitions memo of a store for `token` (a new one when the token moved on). */
export function definitionsFor(store: Store, token: string | undefined): Definitions {
  if (token === undefined) return { map: new Map() };
  let c = sharedDefinitions.get(store);
  if (!c || c.token !== token) {
    c = { token, map: new Map() };
    sharedDefinitions.set(store, c);
  }
  return { map: c.map };
}

/**
 * The definitions token of the store's shared memo: the last one a request of this process read (or
 * checked), undefined before any. A write may assume it (`Ctx.assumedDefinitions`).
 */
export function knownDefinitionsToken(store: Store): string | undefined {
  return sharedDefinitions.get(store)?.token;
}

/** Caches shared by read requests while the store's data token is unchanged. */
interface SharedCache {
  token: string;
  nested: Map<string, Map<string, Map<string, Record<string, unknown>>>>;
  memo: Map<string, unknown>;
}
const shared = new WeakMap<Store, SharedCache>();

/**
 * The cross-request read cache of a store, valid for the current data token; undefined when the
 * engine gives no token (every request then starts empty).
 */
function sharedFor(store: Store, fresh?: string): SharedCache | undefined {
  const token = fresh ?? store.dataToken();
  if (token === undefined) return undefined;
  let c = shared.get(store);
  if (!c || c.token !== token) {
    c = { token, nested: new Map(), memo: new Map() };
    shared.set(store, c);
  }
  return c;
}

/** Make a context. */
export function makeCtx(args: {
  store: Store;
  reg: Registry;
  settings: ServiceSettings;
  baseUrl?: string;
  actor?: Actor | undefined;
  /** Use the cross-request read cache (read-only requests). */
  cached?: boolean;
  /**
   * The data token read when the request arrived (`store.freshTokens().data`); required for caching on
   * PostgreSQL, whose `dataToken()` is always undefined.
   */
  token?: string | undefined;
  /** The definitions token read when the request arrived (`store.freshTokens().definitions`). */
  definitionsToken?: string | undefined;
  /** A write's assumed definitions token instead (`Ctx.assumedDefinitions`). */
  assumedDefinitions?: string | undefined;
  /** Read from this database instead of the store's (a streaming replica); reads only. */
  db?: Kysely<any> | undefined;
  grants?: Grants | undefined;
  /** `Ctx.restApi`. */
  restApi?: boolean;
}): Ctx {
  const cache = args.cached ? sharedFor(args.store, args.token) : undefined;
  let nested = new Map<string, Map<string, Record<string, unknown>>>();
  if (cache) {
    const key = args.baseUrl ?? "";
    nested = cache.nested.get(key) ?? nested;
    cache.nested.set(key, nested);
  }
  return {
    store: args.store,
    db: args.db ?? args.store.db,
    reg: args.reg,
    settings: args.settings,
    baseUrl: args.baseUrl ?? "",
    actor: args.actor,
    requestId: randomUUID(),
    nestedCache: nested,
    memo: cache ? cache.memo : new Map(),
    defs: definitionsFor(args.store, args.definitionsToken),
    freshTokenKeys: new Map(),
    grants: args.grants,
    ...(args.restApi ? { restApi: true } : {}),
    assumedDefinitions: args.assumedDefinitions,
  };
}
