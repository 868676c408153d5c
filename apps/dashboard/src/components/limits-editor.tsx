import type { Limits } from "@agentnet/contracts";
import { MIN_WINDOW_SECONDS, parseNumberField } from "../domain/limits";
import { Check, Field } from "./ui";

const shown = (n: number) => (Number.isNaN(n) ? "" : String(n));

/**
 * Token and USD caps per window. `error(path)` gives the message for a path such as
 * "limits.token_limit.window_seconds", from the pre-submit check or the API.
 */
export function LimitsEditor(props: {
  value: Limits;
  onChange: (limits: Limits) => void;
  error: (path: string) => string | undefined;
  disabled?: boolean;
}) {
  const { token_limit: t, budget_limit: b } = props.value;
  const setT = (patch: Partial<Limits["token_limit"]>) =>
    props.onChange({ ...props.value, token_limit: { ...t, ...patch } });
  const setB = (patch: Partial<Limits["budget_limit"]>) =>
    props.onChange({ ...props.value, budget_limit: { ...b, ...patch } });
  const num = (
    label: string,
    path: string,
    value: number,
    onChange: (n: number) => void,
    hint: string,
    step = "1",
  ) => (
    <Field label={label} hint={hint} error={props.error(`limits.${path}`)}>
      {(c) => (
        <input
          {...c}
          type="number"
          min={0}
          step={step}
          value={shown(value)}
          disabled={props.disabled}
          onChange={(e) => onChange(parseNumberField(e.target.value))}
        />
      )}
    </Field>
  );
  return (
    <div className="limits grid-2">
      <fieldset>
        <legend>Token limit</legend>
        <Check
          label="Enforce a token cap"
          checked={t.enabled}
          disabled={props.disabled}
          onChange={(enabled) => setT({ enabled })}
        />
        {num(
          "Tokens per user",
          "token_limit.user_cap",
          t.user_cap,
          (user_cap) => setT({ user_cap }),
          "0 means uncapped",
        )}
        {num(
          "Tokens per group",
          "token_limit.group_cap",
          t.group_cap,
          (group_cap) => setT({ group_cap }),
          "each source group gets its own bucket; 0 means uncapped",
        )}
        {num(
          "Window (seconds)",
          "token_limit.window_seconds",
          t.window_seconds,
          (window_seconds) => setT({ window_seconds }),
          `at least ${MIN_WINDOW_SECONDS} when enforced`,
        )}
      </fieldset>
      <fieldset>
        <legend>Spending limit (USD)</legend>
        <Check
          label="Enforce a spending cap"
          checked={b.enabled}
          disabled={props.disabled}
          onChange={(enabled) => setB({ enabled })}
        />
        {num(
          "USD per user",
          "budget_limit.user_cap_usd",
          b.user_cap_usd,
          (user_cap_usd) => setB({ user_cap_usd }),
          "0 means uncapped",
          "0.01",
        )}
        {num(
          "USD per group",
          "budget_limit.group_cap_usd",
          b.group_cap_usd,
          (group_cap_usd) => setB({ group_cap_usd }),
          "0 means uncapped",
          "0.01",
        )}
        {num(
          "Window (seconds)",
          "budget_limit.window_seconds",
          b.window_seconds,
          (window_seconds) => setB({ window_seconds }),
          `at least ${MIN_WINDOW_SECONDS} when enforced`,
        )}
      </fieldset>
    </div>
  );
}

/** One line about a limits object for lists. */
export function limitsSummary(limits: Limits | undefined): string {
  if (!limits) return "no caps";
  const parts: string[] = [];
  const t = limits.token_limit;
  if (t.enabled)
    parts.push(`tokens ${t.user_cap || "∞"}/user, ${t.group_cap || "∞"}/group per ${t.window_seconds}s`);
  const b = limits.budget_limit;
  if (b.enabled)
    parts.push(`$${b.user_cap_usd || "∞"}/user, $${b.group_cap_usd || "∞"}/group per ${b.window_seconds}s`);
  return parts.length ? parts.join("; ") : "caps off";
}
