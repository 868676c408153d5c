import { openChdbWarehouse } from "./chdb.js";
import { openServerWarehouse } from "./server.js";
import { type Warehouse, WarehouseOptions } from "./warehouse.js";

export {
  listMigrations,
  MIGRATIONS_DIR,
  type Migration,
  runMigrations,
  splitStatements,
} from "./migrations.js";
export { INSERT_SETTINGS, SHARED_SETTINGS } from "./settings.js";
export { type Warehouse, WarehouseOptions } from "./warehouse.js";

/**
 * Opens the ClickHouse server at `url` when given (production: CLICKHOUSE_URL),
 * otherwise chDB with its data under `dataDir`; creates `database` if missing.
 * chDB: one process owns a data dir; calls with the same dir and database share a session.
 */
export async function openWarehouse(options: WarehouseOptions): Promise<Warehouse> {
  const parsed = WarehouseOptions.parse(options);
  if (parsed.url !== undefined) {
    return openServerWarehouse({
      url: parsed.url,
      database: parsed.database,
      username: parsed.username,
      password: parsed.password,
    });
  }
  if (parsed.dataDir === undefined) throw new Error("either url or dataDir is required");
  return openChdbWarehouse(parsed.dataDir, parsed.database);
}
