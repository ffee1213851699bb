/**
 * The `inventory` command line: serve, worker, webhook-receiver, migrate, createsuperuser, token create,
 * import netbox.
 * Every command prints `--help`; bad flags and unreachable databases are one-line errors with exit code 2.
 */
import { Command, CommanderError } from "commander";
import {
  runBackup,
  runCreateSuperuser,
  runImportNetbox,
  runMigrate,
  runServe,
  runTokenCreate,
  runWebhookReceiver,
  runWorker,
} from "./cli/commands.ts";
import { runHistoryPrune, runHistorySize } from "./cli/history.ts";
import { VERSION } from "./http/versions.ts";

/** Error for the CLI's one-line messages (exit code 2). */
export class CliError extends Error {
  override name = "CliError";
}

const program = new Command();
program
  .name("inventory")
  .description("Network inventory service with a Nautobot 1.6 compatible REST API")
  .version(VERSION, "-V, --version", "print the version")
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

const dbOpt = "--database <url>";
const dbHelp = "database URL: sqlite:PATH or postgres://user@host:port/db (env INVENTORY_DATABASE_URL)";

program
  .command("serve")
  .description("migrate the database if needed, then serve the API")
  .option("--host <host>", "address to listen on (env INVENTORY_HOST)")
  .option("--port <port>", "TCP port (env INVENTORY_PORT)")
  .option(dbOpt, dbHelp)
  .option("--anonymous-read", "allow reads without a token (Nautobot LOGIN_REQUIRED=False)")
  .option("--trust-proxy", "build URLs from X-Forwarded-Proto / X-Forwarded-Host")
  .option(
    "--demo",
    "serve a fresh SQLite database loaded with the NetBox demo data (implies --anonymous-read off; prints a token)",
  )
  .option("--no-worker", "do not run a webhook worker in this process (run `inventory worker` instead)")
  .option("--workers <n>", "API processes sharing the port (node:cluster; default 1)")
  .option(
    "--database-replica <url>",
    "PostgreSQL streaming replica for reads; a user's reads stay on the primary until the replica has their last write (env INVENTORY_DATABASE_REPLICA_URL)",
  )
  .action(runServe);

program
  .command("worker")
  .description("run a webhook delivery worker (several may run against one PostgreSQL database)")
  .option(dbOpt, dbHelp)
  .option("--concurrency <n>", "deliveries sent in parallel (env INVENTORY_WEBHOOK_CONCURRENCY, default 32)")
  .action(runWorker);

program
  .command("webhook-receiver")
  .alias("webhook_receiver")
  .description("listen for webhook requests and print them (troubleshooting; answers 200)")
  .option("--port <port>", "TCP port", "9000")
  .option("--host <host>", "address to listen on", "localhost")
  .option("--no-headers", "do not print request headers")
  .action(runWebhookReceiver);

program
  .command("migrate")
  .description("create or upgrade the database schema and built-in rows")
  .option(dbOpt, dbHelp)
  .action(runMigrate);

program
  .command("backup")
  .description("copy a SQLite database to a new file while it serves (online backup); PostgreSQL: pg_dump")
  .requiredOption("--to <file>", "the backup file to create")
  .option(dbOpt, dbHelp)
  .action(runBackup);

program
  .command("createsuperuser")
  .description("create (or reset the password of) a superuser")
  .requiredOption("--username <username>", "user name")
  .requiredOption("--password <password>", "password")
  .option(dbOpt, dbHelp)
  .action(runCreateSuperuser);

const token = program.command("token").description("API token management");
token
  .command("create")
  .description("create an API token and print its key")
  .requiredOption("--username <username>", "owner of the token")
  .option("--key <key>", "use this 40-hex-digit key instead of a random one")
  .option("--read-only", "the token may only read")
  .option(dbOpt, dbHelp)
  .action(runTokenCreate);

const history = program
  .command("history")
  .description("history of every change (as_of reads, diffs, revert)");
history
  .command("prune")
  .description("remove versions no point at or after the cut needs; reads before it answer 400")
  .requiredOption("--before <point>", "a change sequence number or an RFC 3339 time")
  .option(dbOpt, dbHelp)
  .action(runHistoryPrune);
history
  .command("size")
  .description("rows and bytes of each history table")
  .option(dbOpt, dbHelp)
  .action(runHistorySize);

const imp = program.command("import").description("import data from other systems");
imp
  .command("netbox")
  .description("import a NetBox 3.x dumpdata JSON file through the service layer")
  .argument("<file>", "NetBox dump (JSON list of {model, pk, fields})")
  .option(dbOpt, dbHelp)
  .option("--strict", "abort on the first failing record; nothing is written")
  .option(
    "--user <username>",
    "user the change log names for the imported changes (default: the first superuser)",
  )
  .action(runImportNetbox);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    if (e.code === "commander.helpDisplayed" || e.code === "commander.help" || e.code === "commander.version")
      process.exit(0);
    process.exit(2);
  }
  process.stderr.write(`inventory: ${(e as Error).message}\n`);
  process.exit(2);
}
