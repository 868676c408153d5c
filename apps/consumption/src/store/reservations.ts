import { AppError, type ReserveReply } from "@agentnet/contracts";
import { newId } from "@agentnet/service-kit";
import { type CapCheck, denyReason } from "../domain/limits";
import {
  type Amount,
  type CounterKey,
  type CounterPlan,
  type CounterState,
  chainId,
  EMPTY_STATE,
  firingCheck,
  fitsUnderCap,
  planReservation,
} from "../domain/reservation";
import { type Actual, applyOp, type Outcome, opOfOutcome } from "../domain/settlement";
import { retryAfterSeconds } from "../domain/windows";
import type { Ledger } from "./ledger";
import { isDuplicateKey, type Models, type OutcomeDoc, type ReservationDoc, rawCollection } from "./models";

export interface ReserveInput {
  account_id: string;
  request_id: string;
  user_id: string;
  checks: CapCheck[];
  amount: Amount;
}

/**
 * Reservations: hold an estimate on every counter in force, or none. Each reservation ends in
 * exactly one outcome, claimed by inserting a document with the reservation id as `_id` (an insert
 * is the one write FerretDB v1 makes atomic), then applied to each counter as an idempotent ledger
 * op. A crash anywhere leaves a state that replaying the outcome (redelivery, or the sweep) completes.
 */
export class Reservations {
  constructor(
    private readonly models: Models,
    private readonly ledger: Ledger,
    private readonly clock: () => number,
    private readonly ttlMs: number,
  ) {}

  async reserve(input: ReserveInput): Promise<ReserveReply> {
    const now = this.clock();
    const plans = planReservation(input.account_id, input.checks, now);
    if (plans.length === 0) return { decision: "allow" };
    // An estimate above a cap can never fit: deny without writing anything.
    for (const plan of plans) {
      if (!fitsUnderCap(EMPTY_STATE, plan, input.amount)) return this.deny(plan, EMPTY_STATE, input, now);
    }
    // Deny early on a read when a counter is already full: a refusal needs no writes, and at a
    // boundary under load most requests are refusals. An allow is still decided by the append.
    const states = await Promise.all(
      plans.map((plan) => this.ledger.peek(plan.key, (state) => fitsUnderCap(state, plan, input.amount))),
    );
    const full = plans.findIndex((plan, i) => !fitsUnderCap(states[i] ?? EMPTY_STATE, plan, input.amount));
    const fullPlan = plans[full];
    if (fullPlan) return this.deny(fullPlan, states[full] ?? EMPTY_STATE, input, now);
    const id = newId();
    // One counter at a time, in one order for everyone: a request only holds counters earlier in the
    // order while it tries the next. Taking them all at once let 50 racers each hold one counter and
    // refuse each other on the other until none was admitted (seen with two replicas under load).
    const ordered = [...plans].sort((a, b) => chainId(a.key).localeCompare(chainId(b.key)));
    const held: CounterKey[] = [];
    for (const plan of ordered) {
      const result = await this.ledger.append(plan.key, `${id}:reserve`, (state) =>
        fitsUnderCap(state, plan, input.amount) ? applyOp(state, "reserve", input.amount) : null,
      );
      if (result.kind === "refused") {
        await this.rollback(id, held, input.amount);
        return this.deny(plan, result.state, input, now);
      }
      held.push(plan.key);
    }
    // The record comes last, so every counter it lists holds the estimate; a crash before it leaves
    // holds nobody releases, which only makes caps stricter until those windows end.
    const doc: ReservationDoc = {
      _id: id,
      account_id: input.account_id,
      request_id: input.request_id,
      user_id: input.user_id,
      counters: held,
      estimate: { tokens: input.amount.tokens, cost_nanos: input.amount.costNanos },
      expires_at: new Date(now + this.ttlMs),
      finished: false,
      created_at: new Date(now),
    };
    try {
      await rawCollection(this.models.Reservation).insertOne(doc);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      await this.rollback(id, held, input.amount);
      return this.retriedReserve(input);
    }
    return { decision: "allow", reservation_id: id, expires_at: doc.expires_at.toISOString() };
  }

  /** Undoes the holds of a reservation that was refused on another counter. */
  private async rollback(id: string, held: CounterKey[], amount: Amount) {
    await Promise.all(
      held.map((key) =>
        this.ledger.append(key, `${id}:release`, (state) => applyOp(state, "release", amount)),
      ),
    );
  }

  /**
   * Ends a reservation with an outcome: claims it (first writer wins), then applies it to every
   * counter. A redelivered event finds its own claim and re-applies (idempotent per counter); an
   * event arriving after expiry is counted as `late` so real usage is never dropped.
   */
  async settle(accountId: string, reservationId: string, outcome: Outcome, eventId: string, actual: Actual) {
    // By `_id` alone (FerretDB looks that up directly; any other field makes it a scan), then scoped.
    const found = await this.models.Reservation.findById(reservationId).lean<ReservationDoc>();
    const reservation = found?.account_id === accountId ? found : null;
    if (!reservation) return "unknown" as const;
    const claimed = await this.claim(reservation, reservationId, { outcome, event_id: eventId, actual });
    if (claimed.event_id === eventId) {
      await this.apply(reservation, claimed);
      return claimed.outcome;
    }
    if (claimed.outcome !== "expired" || outcome !== "settled") return "ignored" as const;
    const late = await this.claim(reservation, `${reservationId}:late`, {
      outcome: "late",
      event_id: eventId,
      actual,
    });
    if (late.event_id === eventId) await this.apply(reservation, late);
    return "late" as const;
  }

  /** Frees every reservation past its expiry that no event settled; returns how many it ended. */
  async sweepExpired(limit = 500): Promise<number> {
    const due = await this.models.Reservation.find({
      finished: false,
      expires_at: { $lte: new Date(this.clock()) },
    })
      .limit(limit)
      .lean<ReservationDoc[]>();
    for (const reservation of due) await this.resolve(reservation, { outcome: "expired" });
    return due.length;
  }

  /** Claims `outcome` for a reservation (or finds the outcome already claimed) and applies it. */
  private async resolve(reservation: ReservationDoc, outcome: Pick<OutcomeDoc, "outcome">) {
    await this.apply(reservation, await this.claim(reservation, reservation._id, outcome));
  }

  private async claim(
    reservation: ReservationDoc,
    outcomeId: string,
    fields: Omit<OutcomeDoc, "_id" | "account_id" | "reservation_id" | "created_at">,
  ): Promise<OutcomeDoc> {
    const doc: OutcomeDoc = {
      _id: outcomeId,
      account_id: reservation.account_id,
      reservation_id: reservation._id,
      ...fields,
      created_at: new Date(this.clock()),
    };
    try {
      await rawCollection(this.models.Outcome).insertOne(doc);
      return doc;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const existing = await this.models.Outcome.findById(outcomeId).lean<OutcomeDoc>();
      if (!existing) throw new Error(`outcome ${outcomeId} vanished`);
      return existing;
    }
  }

  private async apply(reservation: ReservationDoc, outcome: OutcomeDoc) {
    const op = opOfOutcome(outcome.outcome);
    const estimate: Amount = {
      tokens: reservation.estimate.tokens,
      costNanos: reservation.estimate.cost_nanos,
    };
    await Promise.all(
      reservation.counters.map((key: CounterKey) =>
        this.ledger.append(key, `${reservation._id}:${op}`, (state) =>
          applyOp(state, op, estimate, outcome.actual),
        ),
      ),
    );
    if (op !== "late") {
      await this.models.Reservation.updateOne({ _id: reservation._id }, { $set: { finished: true } });
    }
  }

  private async retriedReserve(input: ReserveInput): Promise<ReserveReply> {
    const first = await this.models.Reservation.findOne({
      account_id: input.account_id,
      request_id: input.request_id,
    }).lean<ReservationDoc>();
    const outcome = first ? await this.models.Outcome.findById(first._id).lean<OutcomeDoc>() : null;
    if (!first || outcome) {
      throw new AppError(
        409,
        "consumption.request_reserved",
        `request ${input.request_id} was already decided`,
      );
    }
    return { decision: "allow", reservation_id: first._id, expires_at: first.expires_at.toISOString() };
  }

  private deny(plan: CounterPlan, state: CounterState, input: ReserveInput, now: number): ReserveReply {
    const check = firingCheck(plan, state, input.amount) ?? plan.checks[0];
    if (!check) throw new Error("a refused counter always has a check");
    return {
      decision: "deny",
      reason: denyReason(check),
      limit_source_id: check.source_id,
      dimension_kind: check.dimension_kind,
      dimension_id: check.dimension_id,
      retry_after_seconds: retryAfterSeconds(now, plan.key.window_start, plan.key.window_seconds),
    };
  }
}
