import { type KeyboardEvent, useId, useState } from "react";
import type { ApiError } from "../../api/client";
import { Check, Field, FormError, Progress } from "../../components/ui";
import { splitList } from "../../domain/filters";
import { filterModelChoices, type ProviderModelChoices, unlistedModels } from "../../domain/model-choices";

const choiceLabel = (model: { id: string; label: string }) =>
  model.label === model.id ? model.id : `${model.label} (${model.id})`;

/**
 * A guardrail's allowed models: each provider's models as checkboxes under the provider's name,
 * narrowed by a filter, plus model ids typed by hand for models a provider serves but does not list.
 */
export function ModelPicker(props: {
  /** Undefined while they load. */
  choices: ProviderModelChoices[] | undefined;
  /** Why they could not be read: ids can still be typed. */
  choicesError: ApiError | undefined;
  selected: string[];
  onChange: (ids: string[]) => void;
  error: string | undefined;
}) {
  const [filter, setFilter] = useState("");
  const [typed, setTyped] = useState("");
  const summaryId = useId();
  const errorId = useId();
  const choices = props.choices ?? [];
  const shown = filterModelChoices(choices, filter);
  // Until the lists are in, every selected id would look typed by hand.
  const unlisted = props.choices ? unlistedModels(props.selected, props.choices) : [];
  const toggle = (id: string, on: boolean) =>
    props.onChange(on ? [...props.selected, id] : props.selected.filter((s) => s !== id));
  const addTyped = () => {
    const fresh = splitList(typed).filter((id) => !props.selected.includes(id));
    if (fresh.length > 0) props.onChange([...props.selected, ...new Set(fresh)]);
    setTyped("");
  };
  const addOnEnter = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key !== "Enter") return;
    // Enter here means "add this id", not "submit the guardrail".
    event.preventDefault();
    addTyped();
  };
  return (
    <fieldset
      className={`model-picker${props.error ? " field-invalid" : ""}`}
      aria-describedby={[summaryId, props.error ? errorId : ""].filter(Boolean).join(" ")}
    >
      <legend>Allowed models</legend>
      <p className="hint" id={summaryId}>
        {props.selected.length === 0
          ? "None selected: with the allowlist on, every model is denied."
          : `${props.selected.length} selected.`}
      </p>
      <Field label="Filter models" hint="By model, name or provider">
        {(c) => <input {...c} type="search" value={filter} onChange={(e) => setFilter(e.target.value)} />}
      </Field>
      {props.choicesError ? (
        <FormError error={props.choicesError} />
      ) : props.choices === undefined ? (
        <Progress label="Loading the providers' models…" />
      ) : props.choices.length === 0 ? (
        <p className="hint">No providers yet: add one under Providers, or add a model id below.</p>
      ) : shown.length === 0 ? (
        <p className="hint">No model matches “{filter.trim()}”.</p>
      ) : null}
      <div className="model-groups">
        {shown.map((group) => (
          <fieldset key={group.providerId} className="model-group">
            <legend>{group.providerName}</legend>
            <p className="hint">
              {group.models.length === 0
                ? "No models listed."
                : `${group.models.filter((model) => props.selected.includes(model.id)).length} of ${group.models.length} selected`}
            </p>
            {group.models.map((model) => (
              <Check
                key={model.id}
                label={choiceLabel(model)}
                checked={props.selected.includes(model.id)}
                onChange={(on) => toggle(model.id, on)}
              />
            ))}
          </fieldset>
        ))}
      </div>
      <div className="add-model">
        <Field
          label="Another model id"
          hint="A model a provider serves that its list does not name; separate several with commas"
        >
          {(c) => (
            <input {...c} value={typed} onChange={(e) => setTyped(e.target.value)} onKeyDown={addOnEnter} />
          )}
        </Field>
        <button type="button" className="secondary" onClick={addTyped} disabled={typed.trim() === ""}>
          Add model
        </button>
      </div>
      {unlisted.length > 0 ? (
        <ul className="typed-models" aria-label="Models added by id">
          {unlisted.map((id) => (
            <li key={id}>
              <code>{id}</code>
              <button
                type="button"
                className="ghost"
                aria-label={`Remove ${id}`}
                onClick={() => toggle(id, false)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {props.error ? (
        <p className="field-error" id={errorId}>
          {props.error}
        </p>
      ) : null}
    </fieldset>
  );
}
