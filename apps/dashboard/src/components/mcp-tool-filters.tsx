import type { GrantDraft } from "../domain/mcp-grants";
import { Field } from "./ui";

/**
 * The tool filters of each MCP server a policy grants (docs/API.md, "MCP servers"), in the order
 * the servers were picked. Controls are named by their path in the API's body
 * (`mcp_servers.0.exclude_tools`), so its errors land next to them.
 */
export function McpToolFilters(props: {
  grants: GrantDraft[];
  /** Names of the account's servers, by id. */
  serverName: (id: string) => string;
  onChange: (grants: GrantDraft[]) => void;
  error: (path: string) => string | undefined;
}) {
  const set = (index: number, patch: Partial<GrantDraft>) =>
    props.onChange(props.grants.map((grant, i) => (i === index ? { ...grant, ...patch } : grant)));
  return (
    <>
      {props.grants.map((grant, index) => {
        const path = `mcp_servers.${index}`;
        return (
          <fieldset key={grant.server_id}>
            <legend>Tools of {props.serverName(grant.server_id)}</legend>
            <div className="grid-2">
              <Field
                label="Include tools"
                name={`${path}.include_tools`}
                hint="Comma- or line-separated tool names, * for any run of characters. Empty grants every tool."
                error={props.error(`${path}.include_tools`)}
              >
                {(c) => (
                  <textarea
                    {...c}
                    rows={2}
                    value={grant.include}
                    placeholder="every tool"
                    onChange={(e) => set(index, { include: e.target.value })}
                  />
                )}
              </Field>
              <Field
                label="Exclude tools"
                name={`${path}.exclude_tools`}
                hint="Never granted by this policy, even when included. E.g. delete_*"
                error={props.error(`${path}.exclude_tools`)}
              >
                {(c) => (
                  <textarea
                    {...c}
                    rows={2}
                    value={grant.exclude}
                    onChange={(e) => set(index, { exclude: e.target.value })}
                  />
                )}
              </Field>
            </div>
          </fieldset>
        );
      })}
    </>
  );
}
