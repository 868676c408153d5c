import { type ReactNode, useState } from "react";
import { plural } from "../domain/format";
import type { Loaded } from "../hooks";
import { useSubmit } from "../hooks";
import { useSession } from "../session";
import { ConfirmDelete } from "./confirm";
import { EmptyState, FormError, LoadState, RowActions, ScrollableTable } from "./ui";

/**
 * A configuration list with its editor: the table, an empty state that says what to do, and a
 * form for a new or an existing item. Writers only see the buttons.
 */
export function CrudPage<T extends { id: string; name: string }>(props: {
  title: string;
  lede: string;
  noun: string;
  empty: string;
  loaded: Loaded<T[]>;
  columns: { label: string; cell: (item: T) => ReactNode }[];
  remove: (id: string) => Promise<unknown>;
  /** What refers to an item (e.g. `policy "everyone"`): the API refuses to delete it while anything does. */
  usedBy?: (item: T) => string[];
  form: (existing: T | undefined, done: () => void, cancel: () => void) => ReactNode;
}) {
  const { canWrite } = useSession();
  const [editing, setEditing] = useState<{ item: T | undefined } | undefined>();
  const [deleting, setDeleting] = useState<T | undefined>();
  const removal = useSubmit();
  const items = props.loaded.data;
  const done = () => {
    setEditing(undefined);
    props.loaded.reload();
  };
  const slug = props.title.toLowerCase().replaceAll(" ", "-");
  return (
    <section aria-labelledby={`${slug}-title`}>
      <h1 id={`${slug}-title`}>{props.title}</h1>
      <p className="lede">{props.lede}</p>
      <LoadState
        loading={props.loaded.loading && !items}
        error={props.loaded.error}
        what={props.title.toLowerCase()}
      />
      {editing ? props.form(editing.item, done, () => setEditing(undefined)) : null}
      {items && !editing ? (
        <>
          {canWrite ? (
            <button type="button" className="page-action" onClick={() => setEditing({ item: undefined })}>
              New {props.noun}
            </button>
          ) : null}
          <FormError error={removal.error} />
          {items.length === 0 ? (
            <EmptyState title={`No ${plural(props.noun)} yet`}>
              {canWrite ? props.empty : `An owner or admin adds ${plural(props.noun)}.`}
            </EmptyState>
          ) : (
            <ScrollableTable label={props.title} columns={props.columns.map((c) => c.label)} actions>
              {items.map((item) => (
                <tr key={item.id}>
                  {props.columns.map((c) => (
                    <td key={c.label}>{c.cell(item)}</td>
                  ))}
                  <RowActions
                    name={item.name}
                    onEdit={canWrite ? () => setEditing({ item }) : undefined}
                    onDelete={canWrite ? () => setDeleting(item) : undefined}
                  />
                </tr>
              ))}
            </ScrollableTable>
          )}
        </>
      ) : null}
      {deleting ? (
        <ConfirmDelete
          noun={props.noun}
          name={deleting.name}
          usedBy={props.usedBy?.(deleting) ?? []}
          busy={removal.busy}
          onCancel={() => setDeleting(undefined)}
          onConfirm={() =>
            void removal
              .run(async () => {
                await props.remove(deleting.id);
                props.loaded.reload();
              })
              .finally(() => setDeleting(undefined))
          }
        />
      ) : null}
    </section>
  );
}
