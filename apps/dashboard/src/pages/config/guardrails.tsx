import type { Guardrail } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import type { ApiError } from "../../api/client";
import { policiesUsing } from "../../components/confirm";
import { CrudPage } from "../../components/crud";
import { useFieldErrors } from "../../components/field-errors";
import { Check, Field, FormActions, FormError } from "../../components/ui";
import { parsePatterns, patternsText } from "../../domain/mcp-grants";
import { modelChoices, type ProviderModelChoices } from "../../domain/model-choices";
import { useLoad, useSubmit } from "../../hooks";
import { useSession } from "../../session";
import { ModelPicker } from "./guardrail-models";

export function GuardrailsPage() {
  const { api } = useSession();
  const loaded = useLoad(() => api.guardrails.list(), []);
  const policies = useLoad(() => api.policies.list(), []);
  const models = useLoad(async () => {
    const [providers, catalog] = await Promise.all([api.providers.list(), api.catalog()]);
    return modelChoices(providers, catalog);
  }, []);
  return (
    <CrudPage
      title="Guardrails"
      lede="Checks a policy applies: a model allowlist and prompt capture."
      noun="guardrail"
      empty="Add one to restrict which models a policy's members may call, to capture their prompts, or to block MCP tools."
      loaded={loaded}
      remove={(id) => api.guardrails.remove(id)}
      usedBy={(guardrail) =>
        policiesUsing(policies.data ?? [], (policy) => policy.guardrail_ids.includes(guardrail.id))
      }
      columns={[
        { label: "Name", cell: (g) => g.name },
        {
          label: "Model allowlist",
          cell: (g) =>
            g.checks.model_allowlist.enabled
              ? g.checks.model_allowlist.models.join(", ") || "no model"
              : "off",
        },
        {
          label: "Prompt capture",
          cell: (g) =>
            g.checks.prompt_capture.enabled
              ? `on${g.checks.prompt_capture.redact_pii ? ", PII redacted" : ""}`
              : "off",
        },
        {
          label: "Blocked MCP tools",
          cell: (g) =>
            g.checks.tool_blocklist?.enabled
              ? patternsText(g.checks.tool_blocklist.patterns) || "none"
              : "off",
        },
      ]}
      form={(existing, done, cancel) => (
        <GuardrailForm
          existing={existing}
          choices={models.data}
          choicesError={models.error}
          onDone={done}
          onCancel={cancel}
        />
      )}
    />
  );
}

function GuardrailForm(props: {
  existing: Guardrail | undefined;
  /** Undefined while the providers and the catalog load. */
  choices: ProviderModelChoices[] | undefined;
  choicesError: ApiError | undefined;
  onDone: () => void;
  onCancel: () => void;
}) {
  const { api } = useSession();
  const e = props.existing;
  const [name, setName] = useState(e?.name ?? "");
  const [description, setDescription] = useState(e?.description ?? "");
  const [allowOn, setAllowOn] = useState(e?.checks.model_allowlist.enabled ?? false);
  const [models, setModels] = useState(e?.checks.model_allowlist.models ?? []);
  const [captureOn, setCaptureOn] = useState(e?.checks.prompt_capture.enabled ?? false);
  const [redact, setRedact] = useState(e?.checks.prompt_capture.redact_pii ?? false);
  const [blockOn, setBlockOn] = useState(e?.checks.tool_blocklist?.enabled ?? false);
  const [blocked, setBlocked] = useState(patternsText(e?.checks.tool_blocklist?.patterns ?? []));
  const submit = useSubmit();
  const errors = useFieldErrors(submit.error);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const patterns = parsePatterns(blocked);
    const found: Record<string, string> = {};
    if (patterns.error !== undefined) found["checks.tool_blocklist.patterns"] = patterns.error;
    if (!errors.submitted(found)) return;
    const body = {
      name,
      description,
      checks: {
        model_allowlist: { enabled: allowOn, models },
        prompt_capture: { enabled: captureOn, redact_pii: redact },
        tool_blocklist: { enabled: blockOn, patterns: patterns.patterns ?? [] },
      },
    };
    void submit.run(async () => {
      if (e) await api.guardrails.update(e.id, body);
      else await api.guardrails.create(body);
      props.onDone();
    });
  };
  return (
    <form
      className="card form"
      onSubmit={onSubmit}
      onChange={errors.onChange}
      aria-label={e ? `Edit guardrail ${e.name}` : "New guardrail"}
    >
      <h2>{e ? `Edit ${e.name}` : "New guardrail"}</h2>
      <FormError error={errors.apiError} />
      <Field label="Name" {...errors.field("name")}>
        {(c) => <input {...c} value={name} onChange={(ev) => setName(ev.target.value)} required />}
      </Field>
      <Field label="Description" {...errors.field("description")}>
        {(c) => <input {...c} value={description} onChange={(ev) => setDescription(ev.target.value)} />}
      </Field>
      <fieldset>
        <legend>Model allowlist</legend>
        <Check
          label="Only allow the listed models"
          name="checks.model_allowlist.enabled"
          checked={allowOn}
          onChange={setAllowOn}
        />
        <ModelPicker
          choices={props.choices}
          choicesError={props.choicesError}
          selected={models}
          onChange={(ids) => {
            setModels(ids);
            errors.edit("checks.model_allowlist.models");
          }}
          error={errors.error("checks.model_allowlist")}
        />
      </fieldset>
      <fieldset>
        <legend>Prompt capture</legend>
        <Check
          label="Capture prompts and completions"
          name="checks.prompt_capture.enabled"
          checked={captureOn}
          onChange={setCaptureOn}
        />
        <Check
          label="Redact PII in what is captured"
          name="checks.prompt_capture.redact_pii"
          checked={redact}
          onChange={setRedact}
        />
      </fieldset>
      <fieldset>
        <legend>MCP tools</legend>
        <Check
          label="Block the MCP tools matching these patterns"
          name="checks.tool_blocklist.enabled"
          checked={blockOn}
          onChange={setBlockOn}
        />
        <Field
          label="Blocked tools ({server}__{tool}, * for any characters; commas or lines between)"
          {...errors.field("checks.tool_blocklist.patterns")}
        >
          {(c) => (
            <textarea
              {...c}
              rows={2}
              value={blocked}
              placeholder="*delete*, github__create_*"
              onChange={(ev) => setBlocked(ev.target.value)}
            />
          )}
        </Field>
      </fieldset>
      <FormActions busy={submit.busy} noun="guardrail" editing={e !== undefined} onCancel={props.onCancel} />
    </form>
  );
}
