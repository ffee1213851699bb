/**
 * `inventory serve --demo`: a fresh SQLite database loaded with the public NetBox demo data
 * (data/netbox-demo/netbox-demo-v3.6.json in this repository, MIT), a superuser admin/admin and a token.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { registry } from "../registry/index.ts";
import { createToken, ensureSuperuser } from "../service/accounts.ts";
import { openStore } from "../store/db.ts";
import { migrate } from "../store/migrate.ts";
import { importNetbox } from "./netbox/run.ts";

/**
 * The NetBox demo dump vendored in the repository (data/netbox-demo/, MIT licence beside it), so the demo,
 * the importer tests and the bench work from any clone; INVENTORY_NETBOX_DEMO overrides it.
 */
export const DEMO_FILE =
  process.env.INVENTORY_NETBOX_DEMO ??
  fileURLToPath(new URL("../../data/netbox-demo/netbox-demo-v3.6.json", import.meta.url));

/**
 * Prepare the demo database: migrate, import the NetBox demo dump (idempotent: an existing database given
 * as `databaseUrl` keeps its objects), ensure superuser admin/admin and create a write token.
 * @param databaseUrl default: a new SQLite file with a unique name in the OS temp directory
 * @returns the database URL and the token key (40 hex digits)
 * @throws Error when the demo file is missing (set INVENTORY_NETBOX_DEMO to its path)
 */
export async function prepareDemo(databaseUrl?: string): Promise<{ databaseUrl: string; token: string }> {
  if (!existsSync(DEMO_FILE))
    throw new Error(
      `demo data not found at ${DEMO_FILE} (expected data/netbox-demo/ in the repository; set INVENTORY_NETBOX_DEMO to its path)`,
    );
  const unique = `${process.pid}-${Date.now()}-${randomBytes(3).toString("hex")}`;
  const url = databaseUrl ?? `sqlite:${join(tmpdir(), `inventory-demo-${unique}.sqlite3`)}`;
  const store = await openStore(url);
  try {
    const reg = registry();
    await migrate(store, reg);
    process.stdout.write(`loading the NetBox demo data into ${url}\n`);
    const sink = { write: () => true } as unknown as NodeJS.WritableStream;
    // The superuser first, so the change log names admin for the demo's changes (issue 25).
    const { id } = await ensureSuperuser(store, "admin", "admin");
    const ok = await importNetbox({ store, reg, file: DEMO_FILE, strict: false, out: sink });
    if (!ok)
      process.stdout.write(
        `some demo records failed to import; see: npx inventory import netbox ${DEMO_FILE} --database ${url}\n`,
      );
    const token = await createToken(store, id, { description: "demo" });
    return { databaseUrl: url, token };
  } finally {
    await store.close();
  }
}
