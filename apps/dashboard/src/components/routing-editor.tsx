import { RetryBounds, RoutingStrategy } from "@agentnet/contracts";
import { parseNumberField } from "../domain/limits";
import { BUDGET_SECONDS, DEFAULT_WEIGHT, type RoutingDraft, STRATEGY_LABELS } from "../domain/routing";
import { Check, Field } from "./ui";

const shown = (n: number) => (Number.isNaN(n) ? "" : String(n));

/**
 * How the policy picks among its providers and retries failures (docs/API.md, "Routing"). The
 * hints give the defaults, which a policy that never changes them routes by. Controls are named by
 * their path in the API's body, so its errors land next to them.
 */
export function RoutingEditor(props: {
  value: RoutingDraft;
  onChange: (routing: RoutingDraft) => void;
  /** The providers the policy grants, in its order. */
  providers: { id: string; label: string }[];
  error: (path: string) => string | undefined;
}) {
  const r = props.value;
  const set = (patch: Partial<RoutingDraft>) => props.onChange({ ...r, ...patch });
  const attempts = RetryBounds.maxAttempts;
  return (
    <fieldset>
      <legend>Routing</legend>
      <div className="grid-3">
        <Field
          label="Strategy"
          name="routing.strategy"
          hint="default: priority; a failed attempt falls back to the next provider"
          error={props.error("routing.strategy")}
        >
          {(c) => (
            <select
              {...c}
              value={r.strategy}
              onChange={(e) => set({ strategy: RoutingStrategy.parse(e.target.value) })}
            >
              {RoutingStrategy.options.map((strategy) => (
                <option key={strategy} value={strategy}>
                  {STRATEGY_LABELS[strategy]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label="Max attempts"
          name="routing.max_attempts"
          hint={`the first included; ${attempts.min}–${attempts.max}, default ${attempts.default}`}
          error={props.error("routing.max_attempts")}
        >
          {(c) => (
            <input
              {...c}
              type="number"
              min={attempts.min}
              max={attempts.max}
              step="1"
              value={shown(r.max_attempts)}
              onChange={(e) => set({ max_attempts: parseNumberField(e.target.value) })}
            />
          )}
        </Field>
        <Field
          label="Time budget (seconds)"
          name="routing.budget_ms"
          hint={`no new attempt after this; ${BUDGET_SECONDS.min}–${BUDGET_SECONDS.max}, default ${BUDGET_SECONDS.default}`}
          error={props.error("routing.budget_ms")}
        >
          {(c) => (
            <input
              {...c}
              type="number"
              min={BUDGET_SECONDS.min}
              max={BUDGET_SECONDS.max}
              step="1"
              value={shown(r.budget_seconds)}
              onChange={(e) => set({ budget_seconds: parseNumberField(e.target.value) })}
            />
          )}
        </Field>
      </div>
      <Check
        label="Retry failures on the next provider"
        name="routing.retries_enabled"
        hint="default on: connect errors, timeouts, 429, 529 and 5xx before the first byte"
        checked={r.retries_enabled}
        onChange={(retries_enabled) => set({ retries_enabled })}
      />
      {r.strategy === "weighted" ? (
        <div className="grid-3">
          {props.providers.length === 0 ? <p className="hint">Pick providers above to weigh them.</p> : null}
          {props.providers.map((provider) => (
            <Field
              key={provider.id}
              label={`Weight of ${provider.label}`}
              name={`routing.weights.${provider.id}`}
              hint={`default ${DEFAULT_WEIGHT}; 0 makes it a fallback only`}
              error={props.error(`routing.weights.${provider.id}`)}
            >
              {(c) => (
                <input
                  {...c}
                  type="number"
                  min={0}
                  step="1"
                  value={shown(r.weights[provider.id] ?? DEFAULT_WEIGHT)}
                  onChange={(e) =>
                    set({ weights: { ...r.weights, [provider.id]: parseNumberField(e.target.value) } })
                  }
                />
              )}
            </Field>
          ))}
        </div>
      ) : null}
    </fieldset>
  );
}
