/**
 * Test helper: a Kysely plugin counting the SQL statements run through it (as the GraphQL endpoint's
 * X-SQL-Queries), for tests that check related rows are loaded set-wise (`store.db.withPlugin(counter)`).
 */
import type { KyselyPlugin } from "kysely";

/** Counts statements in `n` as their results arrive; changes nothing. */
export class SqlCounter implements KyselyPlugin {
  n = 0;
  transformQuery(args: Parameters<KyselyPlugin["transformQuery"]>[0]) {
    return args.node;
  }
  async transformResult(args: Parameters<KyselyPlugin["transformResult"]>[0]) {
    this.n++;
    return args.result;
  }
}
