import type { Warehouse } from "@agentnet/clickhouse";
import { z } from "zod";
import { queryTimer } from "../metrics";

/**
 * A named ClickHouse query: its params and rows are zod schemas, its SQL text is built only from
 * fixed fragments chosen by validated params (a sort column, a bucket function), and every value
 * travels as a `{name:Type}` placeholder. The name shows up in errors and benchmarks.
 */
export interface NamedQuery<P extends z.ZodType, R extends z.ZodType> {
  readonly name: string;
  run(warehouse: Warehouse, params: z.input<P>): Promise<z.output<R>[]>;
}

export function defineQuery<P extends z.ZodType, R extends z.ZodType>(spec: {
  name: string;
  params: P;
  row: R;
  sql: (params: z.output<P>) => string;
  bind: (params: z.output<P>) => Record<string, unknown>;
}): NamedQuery<P, R> {
  const rows = z.array(spec.row);
  return {
    name: spec.name,
    async run(warehouse, input) {
      const params = spec.params.parse(input);
      const timed = queryTimer(warehouse, spec.name);
      try {
        const found = rows.parse(await warehouse.query(spec.sql(params), spec.bind(params)));
        timed?.("ok");
        return found;
      } catch (error) {
        timed?.("error");
        throw new Error(`query ${spec.name} failed`, { cause: error });
      }
    },
  };
}

/** ClickHouse `YYYY-MM-DD hh:mm:ss[.fff]` (UTC, pinned by the warehouse) as RFC 3339. */
export const ChTimestamp = z.string().transform((value) => `${value.replace(" ", "T")}Z`);
/** 64-bit integers and decimals arrive as strings (exactness); the API answers numbers. */
export const ChNumber = z.coerce.number();
