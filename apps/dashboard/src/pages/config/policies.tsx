import type { Group, Guardrail, McpServer, Policy, Provider } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import { CrudPage } from "../../components/crud";
import { useFieldErrors } from "../../components/field-errors";
import { LimitsEditor, limitsSummary } from "../../components/limits-editor";
import { McpToolFilters } from "../../components/mcp-tool-filters";
import { RoutingEditor } from "../../components/routing-editor";
import { Badge, Check, Field, FormActions, FormError, MultiCheck } from "../../components/ui";
import { emptyLimits, validateLimits } from "../../domain/limits";
import { grantDraft, grantSummary, grantsBody, pickServers } from "../../domain/mcp-grants";
import { routingBody, routingDraft, routingSummary, validateRouting } from "../../domain/routing";
import { useLoad, useSubmit } from "../../hooks";
import { useSession } from "../../session";

interface Choices {
  groups: Group[];
  providers: Provider[];
  guardrails: Guardrail[];
  mcpServers: McpServer[];
}

export function PoliciesPage() {
  const { api } = useSession();
  const loaded = useLoad(() => api.policies.list(), []);
  const choices = useLoad(async (): Promise<Choices> => {
    const [groups, providers, guardrails, mcpServers] = await Promise.all([
      api.groups(),
      api.providers.list(),
      api.guardrails.list(),
      api.mcpServers.list(),
    ]);
    return { groups, providers, guardrails, mcpServers };
  }, []);
  const c = choices.data ?? { groups: [], providers: [], guardrails: [], mcpServers: [] };
  const nameOf = (id: string, items: { id: string; name: string }[]) =>
    items.find((i) => i.id === id)?.name ?? id;
  const names = (ids: string[], items: { id: string; name: string }[]) =>
    ids.map((id) => nameOf(id, items)).join(", ");
  return (
    <CrudPage
      title="Policies"
      lede="Which groups may use which providers and MCP servers, with optional guardrails and caps."
      noun="policy"
      empty="Add one so members can reach a provider or an MCP server: pick their groups and what they may use."
      loaded={loaded}
      remove={(id) => api.policies.remove(id)}
      columns={[
        { label: "Name", cell: (p) => p.name },
        { label: "Groups", cell: (p) => names(p.source_groups, c.groups) },
        {
          label: "Providers",
          cell: (p) => {
            const routing = routingSummary(p.routing, p.destination_provider_ids);
            return (
              <>
                {names(p.destination_provider_ids, c.providers) || "—"}{" "}
                {routing ? <Badge tone="info">{routing}</Badge> : null}
              </>
            );
          },
        },
        {
          label: "MCP servers",
          cell: (p) =>
            p.mcp_servers
              .map((grant) => grantSummary(grant, nameOf(grant.server_id, c.mcpServers)))
              .join(", ") || "—",
        },
        { label: "Guardrails", cell: (p) => names(p.guardrail_ids, c.guardrails) || "—" },
        { label: "Limits", cell: (p) => limitsSummary(p.limits) },
        {
          label: "State",
          cell: (p) => (p.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="muted">disabled</Badge>),
        },
      ]}
      form={(existing, done, cancel) => (
        <PolicyForm existing={existing} choices={c} onDone={done} onCancel={cancel} />
      )}
    />
  );
}

function PolicyForm(props: {
  existing: Policy | undefined;
  choices: Choices;
  onDone: () => void;
  onCancel: () => void;
}) {
  const { api } = useSession();
  const e = props.existing;
  const [name, setName] = useState(e?.name ?? "");
  const [description, setDescription] = useState(e?.description ?? "");
  const [enabled, setEnabled] = useState(e?.enabled ?? true);
  const [groups, setGroups] = useState(e?.source_groups ?? []);
  const [providers, setProviders] = useState(e?.destination_provider_ids ?? []);
  const [guardrails, setGuardrails] = useState(e?.guardrail_ids ?? []);
  const [grants, setGrants] = useState(() => (e?.mcp_servers ?? []).map(grantDraft));
  const [capped, setCapped] = useState(e?.limits !== undefined);
  const [limits, setLimits] = useState(e?.limits ?? emptyLimits());
  const [routing, setRouting] = useState(() => routingDraft(e?.routing));
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const mcp = grantsBody(grants);
    const found = {
      ...(capped ? validateLimits(limits, "limits.") : {}),
      ...validateRouting(routing, providers),
      ...mcp.errors,
    };
    if (name.trim() === "") found.name = "enter a name";
    if (groups.length === 0) found.source_groups = "pick at least one source group";
    // A policy grants at least one destination: a provider, or an MCP server.
    if (providers.length === 0 && grants.length === 0) {
      found.destination_provider_ids = "pick at least one provider or MCP server";
    }
    if (!errors.submitted(found)) return;
    const routingToSend = routingBody(routing, providers);
    const body = {
      name,
      description,
      enabled,
      source_groups: groups,
      destination_provider_ids: providers,
      guardrail_ids: guardrails,
      mcp_servers: mcp.grants,
      ...(capped ? { limits } : {}),
      ...(routingToSend ? { routing: routingToSend } : {}),
    };
    void submit.run(async () => {
      if (e) await api.policies.update(e.id, body);
      else await api.policies.create(body);
      props.onDone();
    });
  };
  const opts = (items: { id: string; name: string }[]) => items.map((i) => ({ id: i.id, label: i.name }));
  const serverName = (id: string) => props.choices.mcpServers.find((s) => s.id === id)?.name ?? id;
  // The picker's error, unless it is one of a grant's filters (shown at the filter).
  const grantsError = grants.some(
    (_, i) =>
      errors.error(`mcp_servers.${i}.include_tools`) || errors.error(`mcp_servers.${i}.exclude_tools`),
  )
    ? undefined
    : errors.error("mcp_servers");
  const grantedProviders = providers.map((id) => ({
    id,
    label: props.choices.providers.find((p) => p.id === id)?.name ?? id,
  }));
  return (
    <form
      className="card form"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label={e ? `Edit policy ${e.name}` : "New policy"}
      noValidate
    >
      <h2>{e ? `Edit ${e.name}` : "New policy"}</h2>
      <FormError error={errors.apiError} invalid={errors.invalid} />
      <Field label="Name" {...errors.field("name")}>
        {(c) => <input {...c} value={name} onChange={(ev) => setName(ev.target.value)} />}
      </Field>
      <Field label="Description" {...errors.field("description")}>
        {(c) => <input {...c} value={description} onChange={(ev) => setDescription(ev.target.value)} />}
      </Field>
      <Check label="Enabled" name="enabled" checked={enabled} onChange={setEnabled} />
      <div className="grid-3">
        <MultiCheck
          legend="Source groups"
          options={opts(props.choices.groups)}
          selected={groups}
          onChange={setGroups}
          empty="No groups yet: create one under Team."
          {...errors.field("source_groups")}
        />
        <MultiCheck
          legend="Providers"
          options={opts(props.choices.providers)}
          selected={providers}
          onChange={setProviders}
          empty="No providers yet: add one under Providers."
          {...errors.field("destination_provider_ids")}
        />
        <MultiCheck
          legend="MCP servers"
          name="mcp_servers"
          options={props.choices.mcpServers.map((s) => ({
            id: s.id,
            label: s.enabled ? s.name : `${s.name} (disabled)`,
          }))}
          selected={grants.map((g) => g.server_id)}
          onChange={(ids) => {
            setGrants(pickServers(grants, ids));
            // A server picked is a destination too: it answers "pick at least one provider".
            errors.edit("destination_provider_ids");
          }}
          empty="No MCP servers (optional): add one under MCP servers."
          error={grantsError}
        />
        <MultiCheck
          legend="Guardrails"
          options={opts(props.choices.guardrails)}
          selected={guardrails}
          onChange={setGuardrails}
          empty="No guardrails (optional)."
          {...errors.field("guardrail_ids")}
        />
      </div>
      <McpToolFilters grants={grants} serverName={serverName} onChange={setGrants} error={errors.error} />
      <Check label="Set caps on this policy" name="limits" checked={capped} onChange={setCapped} />
      {capped ? <LimitsEditor value={limits} onChange={setLimits} error={errors.error} /> : null}
      <RoutingEditor
        value={routing}
        onChange={setRouting}
        providers={grantedProviders}
        error={errors.error}
      />
      <FormActions busy={submit.busy} noun="policy" editing={e !== undefined} onCancel={props.onCancel} />
    </form>
  );
}
