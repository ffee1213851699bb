/**
 * `inventory serve --demo`: a fresh SQLite database loaded with the public NetBox demo data
 * (../shared/data/netbox-demo/netbox-demo-v3.6.json), a superuser admin/admin and a token.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { registry } from "../registry/index.ts";
import { hashPassword, hashTokenKey, nowIso } from "../service/write.ts";
import { openStore } from "../store/db.ts";
import { migrate } from "../store/migrate.ts";
import { importNetbox } from "./netbox/run.ts";

/** The demo dump shipped beside the project (shared/ is a sibling of the project root). */
export const DEMO_FILE =
  process.env.INVENTORY_NETBOX_DEMO ??
  fileURLToPath(new URL("../../../shared/data/netbox-demo/netbox-demo-v3.6.json", import.meta.url));

/**
 * Prepare the demo database. @returns its URL and a write token for user admin.
 * @throws Error when the demo file is missing.
 */
export async function prepareDemo(databaseUrl?: string): Promise<{ databaseUrl: string; token: string }> {
  if (!existsSync(DEMO_FILE)) throw new Error(`demo data not found at ${DEMO_FILE}`);
  const url = databaseUrl ?? `sqlite:${join(tmpdir(), `inventory-demo-${Date.now()}.sqlite3`)}`;
  const store = await openStore(url);
  try {
    const reg = registry();
    await migrate(store, reg);
    process.stdout.write(`loading the NetBox demo data into ${url}\n`);
    const sink = { write: () => true } as unknown as NodeJS.WritableStream;
    await importNetbox({ store, reg, file: DEMO_FILE, strict: false, out: sink });
    let user = await store.db
      .selectFrom("users_user")
      .select("id")
      .where("username", "=", "admin")
      .executeTakeFirst();
    if (!user) {
      user = { id: randomUUID() };
      await store.db
        .insertInto("users_user")
        .values({
          id: user.id,
          username: "admin",
          password: hashPassword("admin"),
          first_name: "",
          last_name: "",
          email: "",
          is_staff: true,
          is_active: true,
          is_superuser: true,
          date_joined: nowIso(),
        })
        .execute();
    }
    const token = randomBytes(20).toString("hex");
    await store.db
      .insertInto("users_token")
      .values({
        id: randomUUID(),
        user_id: user.id,
        created: nowIso(),
        expires: null,
        key: hashTokenKey(token),
        key_suffix: token.slice(-6),
        write_enabled: true,
        description: "demo",
      })
      .execute();
    return { databaseUrl: url, token };
  } finally {
    await store.close();
  }
}
