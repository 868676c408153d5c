import type { DiscoveredModel, ProviderModel } from "@agentnet/contracts";
import { ScrollableTable } from "../../components/ui";

/** A model row as typed: numbers stay text until submit so a half-typed price is not lost. */
export interface ModelRow {
  /** Stable React key: the id changes while it is typed. */
  key: number;
  id: string;
  input: string;
  output: string;
  cached: string;
  /** false when discovery found the model but knows no price for it. */
  priced: boolean;
}

let keys = 0;
const nextKey = () => {
  keys += 1;
  return keys;
};

export const emptyRow = (): ModelRow => ({
  key: nextKey(),
  id: "",
  input: "0",
  output: "0",
  cached: "",
  priced: true,
});

export const rowFromModel = (m: ProviderModel): ModelRow => ({
  key: nextKey(),
  id: m.id,
  input: String(m.input_per_1k),
  output: String(m.output_per_1k),
  cached: m.cached_input_per_1k === undefined ? "" : String(m.cached_input_per_1k),
  priced: true,
});

export const rowFromDiscovered = (m: DiscoveredModel): ModelRow => ({
  key: nextKey(),
  id: m.id,
  input: String(m.input_per_1k),
  output: String(m.output_per_1k),
  cached: String(m.cached_input_per_1k),
  priced: m.pricing_known,
});

/** Rows to the API's model list, with the per-field problems found before sending. */
export function rowsToModels(rows: readonly ModelRow[]): {
  models: ProviderModel[];
  errors: Record<string, string>;
} {
  const errors: Record<string, string> = {};
  const models: ProviderModel[] = [];
  rows.forEach((row, i) => {
    const rate = (text: string, field: string): number | undefined => {
      const n = Number(text);
      if (text.trim() === "" || !Number.isFinite(n) || n < 0) {
        errors[`models.${i}.${field}`] = "enter a price of 0 or more (USD per 1k tokens)";
        return undefined;
      }
      return n;
    };
    if (row.id.trim() === "") errors[`models.${i}.id`] = "enter the model id";
    const input = rate(row.input, "input_per_1k");
    const output = rate(row.output, "output_per_1k");
    const cached = row.cached.trim() === "" ? undefined : rate(row.cached, "cached_input_per_1k");
    models.push({
      id: row.id.trim(),
      input_per_1k: input ?? 0,
      output_per_1k: output ?? 0,
      ...(cached !== undefined ? { cached_input_per_1k: cached } : {}),
    });
  });
  return { models, errors };
}

/**
 * The model rows as a table. `onChange` is a row's value typed; `onReplace` is a row added or
 * removed. `error(path)` gives the message for a path such as "models.2.input_per_1k". Inputs are
 * named by their path.
 */
export function ModelRows(props: {
  rows: ModelRow[];
  onChange: (rows: ModelRow[]) => void;
  onReplace: (rows: ModelRow[]) => void;
  error: (path: string) => string | undefined;
  disabled: boolean;
}) {
  const set = (i: number, patch: Partial<ModelRow>) =>
    props.onChange(props.rows.map((r, j) => (j === i ? { ...r, ...patch, priced: true } : r)));
  const cell = (i: number, field: "id" | "input" | "output" | "cached", apiField: string, label: string) => {
    const path = `models.${i}.${apiField}`;
    const message = props.error(path);
    return (
      <td>
        <input
          name={path}
          aria-label={`${label} of model ${i + 1}`}
          aria-invalid={message ? true : undefined}
          value={props.rows[i]?.[field] ?? ""}
          disabled={props.disabled}
          inputMode={field === "id" ? undefined : "decimal"}
          onChange={(e) => set(i, { [field]: e.target.value })}
        />
        {message ? <span className="field-error">{message}</span> : null}
      </td>
    );
  };
  return (
    <ScrollableTable
      label="Models and prices"
      className="models"
      caption="Models and prices (USD per 1k tokens). Leave empty to allow every catalog model at catalog prices."
      columns={["Model id", "Input", "Output", "Cached input"]}
      actions
      foot={
        <tr>
          <td colSpan={5}>
            <button
              type="button"
              className="ghost"
              disabled={props.disabled}
              onClick={() => props.onReplace([...props.rows, emptyRow()])}
            >
              Add model row
            </button>
          </td>
        </tr>
      }
    >
      {props.rows.map((row, i) => (
        <tr key={row.key} className={row.priced ? undefined : "unpriced"}>
          {cell(i, "id", "id", "Id")}
          {cell(i, "input", "input_per_1k", "Input price")}
          {cell(i, "output", "output_per_1k", "Output price")}
          {cell(i, "cached", "cached_input_per_1k", "Cached input price")}
          <td>
            {row.priced ? null : <span className="hint">price unknown: set it </span>}
            <button
              type="button"
              className="ghost"
              disabled={props.disabled}
              onClick={() => props.onReplace(props.rows.filter((_, j) => j !== i))}
              aria-label={`Remove model ${row.id || i + 1}`}
            >
              Remove
            </button>
          </td>
        </tr>
      ))}
    </ScrollableTable>
  );
}
