import type { Guardrail } from "@agentnet/contracts";
import { type FormEvent, useState } from "react";
import { policiesUsing } from "../../components/confirm";
import { CrudPage } from "../../components/crud";
import { Check, Field, FormActions, FormError } from "../../components/ui";
import { splitList } from "../../domain/filters";
import { fieldError } from "../../domain/form-errors";
import { useLoad, useSubmit } from "../../hooks";
import { useSession } from "../../session";

export function GuardrailsPage() {
  const { api } = useSession();
  const loaded = useLoad(() => api.guardrails.list(), []);
  const policies = useLoad(() => api.policies.list(), []);
  return (
    <CrudPage
      title="Guardrails"
      lede="Checks a policy applies: a model allowlist and prompt capture."
      noun="guardrail"
      empty="Add one to restrict which models a policy's members may call, or to capture their prompts."
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
      ]}
      form={(existing, done, cancel) => <GuardrailForm existing={existing} onDone={done} onCancel={cancel} />}
    />
  );
}

function GuardrailForm(props: { existing: Guardrail | undefined; onDone: () => void; onCancel: () => void }) {
  const { api } = useSession();
  const e = props.existing;
  const [name, setName] = useState(e?.name ?? "");
  const [description, setDescription] = useState(e?.description ?? "");
  const [allowOn, setAllowOn] = useState(e?.checks.model_allowlist.enabled ?? false);
  const [models, setModels] = useState((e?.checks.model_allowlist.models ?? []).join(", "));
  const [captureOn, setCaptureOn] = useState(e?.checks.prompt_capture.enabled ?? false);
  const [redact, setRedact] = useState(e?.checks.prompt_capture.redact_pii ?? false);
  const submit = useSubmit();
  const err = (path: string) => fieldError({}, submit.error, path);
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const body = {
      name,
      description,
      checks: {
        model_allowlist: { enabled: allowOn, models: splitList(models) },
        prompt_capture: { enabled: captureOn, redact_pii: redact },
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
      aria-label={e ? `Edit guardrail ${e.name}` : "New guardrail"}
    >
      <h2>{e ? `Edit ${e.name}` : "New guardrail"}</h2>
      <FormError error={submit.error} />
      <Field label="Name" error={err("name")}>
        {(c) => <input {...c} value={name} onChange={(ev) => setName(ev.target.value)} required />}
      </Field>
      <Field label="Description" error={err("description")}>
        {(c) => <input {...c} value={description} onChange={(ev) => setDescription(ev.target.value)} />}
      </Field>
      <fieldset>
        <legend>Model allowlist</legend>
        <Check label="Only allow the listed models" checked={allowOn} onChange={setAllowOn} />
        <Field
          label="Allowed models"
          hint="Comma-separated catalog model ids; enabled and empty denies every model"
          error={err("checks.model_allowlist")}
        >
          {(c) => <input {...c} value={models} onChange={(ev) => setModels(ev.target.value)} />}
        </Field>
      </fieldset>
      <fieldset>
        <legend>Prompt capture</legend>
        <Check label="Capture prompts and completions" checked={captureOn} onChange={setCaptureOn} />
        <Check label="Redact PII in what is captured" checked={redact} onChange={setRedact} />
      </fieldset>
      <FormActions busy={submit.busy} noun="guardrail" editing={e !== undefined} onCancel={props.onCancel} />
    </form>
  );
}
