import { type LogFilters, toggleSort } from "../domain/filters";

/** A column header that sorts the list by its field; aria-sort tells screen readers the order. */
export function SortHeader(props: {
  label: string;
  field: string;
  filters: LogFilters;
  onApply: (next: LogFilters) => void;
  numeric?: boolean;
}) {
  const active = props.filters.sort_by === props.field;
  const order = active ? props.filters.sort_order : "none";
  return (
    <th scope="col" aria-sort={order} className={props.numeric ? "num" : undefined}>
      <button
        type="button"
        className="sort"
        onClick={() => props.onApply(toggleSort(props.filters, props.field))}
      >
        {props.label}
        <span aria-hidden="true">
          {active ? (props.filters.sort_order === "ascending" ? " ▲" : " ▼") : ""}
        </span>
      </button>
    </th>
  );
}
