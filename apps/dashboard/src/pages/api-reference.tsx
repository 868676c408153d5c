import { useMemo, useState } from "react";
import { OPENAPI_DOCUMENT } from "../api/endpoints";
import { EmptyState, LoadState } from "../components/ui";
import {
  documentInfo,
  groupByTag,
  type OperationView,
  type ParameterView,
  readOperations,
  type SchemaView,
  searchOperations,
} from "../domain/openapi";
import { useLoad } from "../hooks";
import { useSession } from "../session";

/** The API's OpenAPI document, read in the dashboard: operations by tag, searchable, each one collapsible. */
export function ApiReferencePage() {
  const { api } = useSession();
  const document = useLoad(() => api.openApiDocument(), []);
  const [search, setSearch] = useState("");
  const operations = useMemo(() => readOperations(document.data), [document.data]);
  const groups = groupByTag(searchOperations(operations, search));
  const info = documentInfo(document.data);

  return (
    <section aria-labelledby="api-reference-title">
      <h1 id="api-reference-title">API reference</h1>
      <p className="lede">
        Every operation of the API, generated from the contracts it validates with
        {info.version ? ` (${info.title || "API"} ${info.version}, OpenAPI ${info.openapi})` : ""}. Send your
        token as <code>Authorization: Token &lt;api token&gt;</code>.{" "}
        <a href={OPENAPI_DOCUMENT} download="agentnet-openapi.json">
          Download the OpenAPI document (JSON)
        </a>
      </p>
      <LoadState
        loading={document.loading && !document.data}
        error={document.error}
        what="the API reference"
      />
      {document.data ? (
        <>
          <div className="toolbar">
            <div className="field">
              <label htmlFor="api-search">Search operations</label>
              <input
                id="api-search"
                type="search"
                value={search}
                placeholder="path, method, name or parameter"
                onChange={(e) => setSearch(e.target.value)}
              />
            </div>
            <p className="hint" role="status">
              {`${groups.reduce((n, g) => n + g.operations.length, 0)} of ${operations.length} operations`}
            </p>
          </div>
          {groups.length === 0 ? (
            <EmptyState title="No operation matches">
              Search for part of a path (<code>access-logs</code>), a method (<code>post</code>) or a
              parameter name (<code>page_size</code>), or clear the search.
            </EmptyState>
          ) : null}
          {groups.map((group) => (
            <section key={group.tag} className="api-tag" aria-label={group.tag}>
              <h2>{group.tag}</h2>
              {group.operations.map((operation) => (
                <Operation key={operation.key} operation={operation} />
              ))}
            </section>
          ))}
        </>
      ) : null}
    </section>
  );
}

function Operation(props: { operation: OperationView }) {
  const { operation } = props;
  return (
    <details className="api-operation" data-operation={operation.key}>
      <summary>
        <span className={`method method-${operation.method}`}>{operation.method.toUpperCase()}</span>{" "}
        <code className="api-path">{operation.path}</code>{" "}
        <span className="api-summary">{operation.summary || operation.operationId}</span>
      </summary>
      <div className="api-operation-body">
        {operation.description ? <p>{operation.description}</p> : null}
        <p className="hint">
          Operation <code>{operation.operationId}</code>
          {operation.access ? (
            <>
              {" "}
              · callers: <strong>{operation.access}</strong>
            </>
          ) : null}
        </p>
        {operation.parameters.length > 0 ? <Parameters operation={operation} /> : null}
        {operation.requestBody ? (
          <>
            <h3>Request body (JSON)</h3>
            <Schema view={operation.requestBody} />
          </>
        ) : null}
        <h3>Responses</h3>
        <dl className="api-responses">
          {operation.responses.map((response) => (
            <div key={response.status}>
              <dt>
                <code>{response.status}</code> {response.description}
              </dt>
              <dd>
                {response.schema ? <Schema view={response.schema} /> : <span className="hint">No body.</span>}
              </dd>
            </div>
          ))}
        </dl>
      </div>
    </details>
  );
}

function Parameters(props: { operation: OperationView }) {
  const { operation } = props;
  return (
    <table className="table api-parameters">
      <caption>{`Parameters of ${operation.method.toUpperCase()} ${operation.path}`}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">In</th>
          <th scope="col">Type</th>
          <th scope="col">Notes</th>
        </tr>
      </thead>
      <tbody>
        {operation.parameters.map((parameter: ParameterView) => (
          <tr key={`${parameter.in} ${parameter.name}`}>
            <th scope="row">
              <code>{parameter.name}</code>
              {parameter.required ? <span className="badge badge-info">required</span> : null}
            </th>
            <td>{parameter.in}</td>
            <td>
              <TypeText view={parameter.schema} />
            </td>
            <td>{[parameter.description, ...parameter.schema.notes].filter(Boolean).join("; ")}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A type with its allowed values, e.g. `string: "ascending" | "descending"`. */
function TypeText(props: { view: SchemaView }) {
  const { view } = props;
  return (
    <>
      <code>{view.ref && !view.type.includes(view.ref) ? `${view.ref} (${view.type})` : view.type}</code>
      {view.values ? <span className="api-values">: {view.values.join(" | ")}</span> : null}
    </>
  );
}

/** A schema as a tree: the type and its notes, then its properties, element or alternatives. */
function Schema(props: { view: SchemaView }) {
  const { view } = props;
  return (
    <div className="schema">
      <p className="schema-type">
        <TypeText view={view} />
        {view.notes.length > 0 ? <span className="hint"> {view.notes.join("; ")}</span> : null}
        {view.description ? <span className="schema-description"> — {view.description}</span> : null}
      </p>
      {view.properties.length > 0 ? (
        <ul className="schema-properties">
          {view.properties.map((property) => (
            <li key={property.name}>
              <code className="schema-name">{property.name}</code>
              {property.required ? <span className="badge badge-info">required</span> : null}{" "}
              <Schema view={property.schema} />
            </li>
          ))}
        </ul>
      ) : null}
      {view.element ? (
        <div className="schema-nested">
          <span className="hint">each item:</span>
          <Schema view={view.element} />
        </div>
      ) : null}
      {view.variants.length > 0 ? (
        <ol className="schema-properties">
          {view.variants.map((variant, index) => (
            // Alternatives have no name of their own; their position is their identity.
            // biome-ignore lint/suspicious/noArrayIndexKey: see above.
            <li key={index}>
              <Schema view={variant} />
            </li>
          ))}
        </ol>
      ) : null}
    </div>
  );
}
