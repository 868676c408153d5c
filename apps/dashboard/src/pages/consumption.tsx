import type { AccessLogEntry, BudgetRule, CapStatus, Group, Policy } from "@agentnet/contracts";
import { EmptyState, LoadState, Meter } from "../components/ui";
import { capsForCounter, usedShare, windowResetAt } from "../domain/caps";
import { denyReasonText } from "../domain/deny-reasons";
import { formatDateTime, formatIn, formatTokens, formatUsd, formatWindow } from "../domain/format";
import { useLoad } from "../hooks";
import { Link } from "../router";
import { userLabel, useSession } from "../session";

/** Each consumption counter against the cap that applies to it, with when its window resets. */
export function ConsumptionPage() {
  const { api, users, accountWide, me } = useSession();
  const loaded = useLoad(async () => {
    const [counters, ownCaps, refusals, rules, policies, groups] = await Promise.all([
      api.consumption(),
      api.consumptionCaps(),
      api.accessLogs({ decision: "deny", user_id: me.id, page_size: LAST_REFUSALS }),
      accountWide ? api.budgetRules.list() : Promise.resolve<BudgetRule[]>([]),
      accountWide ? api.policies.list() : Promise.resolve<Policy[]>([]),
      accountWide ? api.groups() : Promise.resolve<Group[]>([]),
    ]);
    return { counters, ownCaps, refusals: refusals.data, rules, policies, groups };
  }, [accountWide, me.id]);
  const data = loaded.data;
  const allGroup = data?.groups.find((g) => g.name === "All")?.id;
  const groupsOfUser = (id: string) => [
    ...(users.find((u) => u.id === id)?.auto_groups ?? []),
    ...(allGroup ? [allGroup] : []),
  ];
  const dimension = (kind: string, id: string) =>
    kind === "user"
      ? `User ${userLabel(users, id)}`
      : `Group ${data?.groups.find((g) => g.id === id)?.name ?? id}`;
  const now = Date.now();
  return (
    <section aria-labelledby="consumption-title">
      <h1 id="consumption-title">Consumption</h1>
      <p className="lede">
        What each user and group has used in the current windows, against the tightest cap of the budget rules
        and policies that count it.
      </p>
      <LoadState loading={loaded.loading} error={loaded.error} what="consumption counters" />
      {data ? <OwnCaps caps={data.ownCaps} dimension={dimension} /> : null}
      {data ? <LastRefusals refusals={data.refusals} /> : null}
      {data && data.counters.length === 0 ? (
        <EmptyState title="Nothing consumed yet">
          Counters appear once a request goes through a policy or budget rule with limits.{" "}
          {accountWide ? (
            <Link to="/config/budget-rules">Add a budget rule</Link>
          ) : (
            "Send a request through the gateway."
          )}
        </EmptyState>
      ) : null}
      {data && data.counters.length > 0 ? <h2>Counters</h2> : null}
      {data && data.counters.length > 0 ? (
        <ul className="counters">
          {data.counters.map((c) => {
            const caps = capsForCounter(c, { rules: data.rules, policies: data.policies, groupsOfUser });
            const tokens = c.tokens_input + c.tokens_output;
            const reset = windowResetAt(c);
            return (
              <li
                key={`${c.dimension_kind}:${c.dimension_id}:${c.window_seconds}:${c.window_start_utc}`}
                className="card counter"
              >
                <h2>{dimension(c.dimension_kind, c.dimension_id)}</h2>
                <p className="hint">
                  {formatWindow(c.window_seconds)} window from {formatDateTime(c.window_start_utc)} · resets{" "}
                  {formatDateTime(reset.toISOString())} ({formatIn(reset.getTime() - now)})
                </p>
                <Meter
                  label="Tokens"
                  share={caps.tokens ? usedShare(tokens, caps.tokens.cap) : 0}
                  text={
                    caps.tokens
                      ? `${formatTokens(tokens)} of ${formatTokens(caps.tokens.cap)} (${caps.tokens.source})`
                      : `${formatTokens(tokens)} · no token cap`
                  }
                />
                <Meter
                  label="Spend"
                  share={caps.cost ? usedShare(c.cost_usd, caps.cost.cap) : 0}
                  text={
                    caps.cost
                      ? `${formatUsd(c.cost_usd)} of ${formatUsd(caps.cost.cap)} (${caps.cost.source})`
                      : `${formatUsd(c.cost_usd)} · no spending cap`
                  }
                />
              </li>
            );
          })}
        </ul>
      ) : null}
    </section>
  );
}

/** How many of the signed-in user's latest refused requests the page lists. */
const LAST_REFUSALS = 5;

/** The signed-in user's latest refused requests and why, so a member knows what stopped them. */
function LastRefusals(props: { refusals: AccessLogEntry[] }) {
  return (
    <section aria-labelledby="last-refusals-title">
      <h2 id="last-refusals-title">Your last refusals</h2>
      {props.refusals.length === 0 ? (
        <p className="hint">None of your requests was refused.</p>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Model</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {props.refusals.map((entry) => (
              <tr key={entry.id}>
                <td>{formatDateTime(entry.timestamp)}</td>
                <td>{entry.model || "—"}</td>
                <td>{denyReasonText(entry.deny_reason)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const MEASURE_TITLES: Record<CapStatus["measure"], string> = {
  tokens: "Tokens",
  usd: "Spend",
  tool_calls: "Tool calls",
};

/**
 * The caps that apply to the signed-in user now (any role): what each allows, what is used, what
 * requests in flight hold, and what remains, so members see their own budget.
 */
function OwnCaps(props: { caps: CapStatus[]; dimension: (kind: string, id: string) => string }) {
  const amount = (cap: CapStatus, value: number) =>
    cap.measure === "usd"
      ? formatUsd(value)
      : cap.measure === "tool_calls"
        ? String(value)
        : formatTokens(value);
  return (
    <section aria-labelledby="own-caps-title" className="own-caps">
      <h2 id="own-caps-title">Your caps</h2>
      {props.caps.length === 0 ? (
        <p className="hint">No token, spending or tool-call cap applies to you.</p>
      ) : (
        <ul className="counters" aria-label="Caps that apply to you">
          {props.caps.map((cap) => (
            <li
              key={`${cap.source_id}:${cap.measure}:${cap.dimension_kind}:${cap.dimension_id}:${cap.window_seconds}`}
              className="card counter"
            >
              <h3>
                {MEASURE_TITLES[cap.measure]} · {props.dimension(cap.dimension_kind, cap.dimension_id)}
              </h3>
              <p className="hint">
                {cap.source === "budget_rule" ? "Budget rule" : "Policy"} “{cap.source_name}” ·{" "}
                {formatWindow(cap.window_seconds)} window from {formatDateTime(cap.window_start_utc)}
              </p>
              <Meter
                label={`${MEASURE_TITLES[cap.measure]} of ${cap.source_name}`}
                share={usedShare(cap.used + cap.held, cap.limit)}
                text={`${amount(cap, cap.used)} used · ${amount(cap, cap.held)} held · ${amount(cap, cap.remaining)} left of ${amount(cap, cap.limit)}`}
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
