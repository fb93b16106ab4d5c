import { type Clock, systemClock } from '../../../core/util/clock.ts';
import { spendCapError } from '../../../core/gate/admission/scheduler.ts';
import type { GatePermit, RequestGate } from '../../../core/loop/types.ts';
import { RAMP_LIMIT_EXCEEDED, SPEND_LIMIT_REACHED } from '../../../core/rate-limits/headers.ts';
import type { RequestCost, RequestReport } from '../../../core/rate-limits/report.ts';
import { abortable } from '../store/abortable.ts';
import type { SharedBudget } from './budget.ts';

/** What the submitter tells a host about its fork's requests (in the job: no secrets). */
export interface SharedAdmission {
  modelClass: string;
  /** Tokens per request byte, measured on the shared prefix. */
  tokensPerByte: number;
  /** The shared prefix was readable when the job was added (not the warmer): a first request counts only its own bytes. */
  readsShared: boolean;
}

/** A host asks Redis again at least this often while it waits: another host may have refunded tokens. */
const POLL_MS = 1_000;
const OUTPUT_ESTIMATE = 1024;

/**
 * The admission gate of a host in the distributed backend: every request reserves its
 * predicted cost from the budget all hosts share in Redis, learns limits from the response
 * headers, and reports a 429's `retry-after` as one backoff for every host. The spend cap
 * stops every host's admissions. (The ramp control of the in-process scheduler is not
 * shared: each host ramps on its own after a `ramp_limit_exceeded`, behind the shared backoff.)
 */
export function sharedAdmissionGate(
  budget: SharedBudget,
  admission: SharedAdmission,
  clock: Clock = systemClock,
): RequestGate {
  const { modelClass } = admission;
  const costOf = (first: boolean, cost: RequestCost | undefined): { itpm: number; otpm: number } => {
    if (!cost) return { itpm: 0, otpm: 0 };
    const bytes = first && !admission.readsShared ? cost.bytes : cost.freshBytes;
    return { itpm: Math.ceil(bytes * admission.tokensPerByte), otpm: Math.min(cost.maxTokens, OUTPUT_ESTIMATE) };
  };
  return {
    async acquire(request) {
      const cost = costOf(request.first, request.cost);
      for (;;) {
        request.signal?.throwIfAborted();
        // a host whose fork is cancelled (or finds Redis lost) must not stay parked on a dead Redis
        const reserve = budget.reserve(modelClass, cost, clock.now());
        const signal = request.signal;
        const wait = await (signal ? abortable(reserve, [signal], () => signal.reason) : reserve);
        if (wait === 'stopped') throw spendCapError(modelClass);
        if (wait === 0) break;
        await clock.sleep(Math.min(wait, POLL_MS), request.signal);
      }
      const sentAt = clock.now();
      const learn = async (report: RequestReport | undefined): Promise<void> => {
        const now = clock.now();
        for (const kind of ['requests', 'input-tokens', 'output-tokens'] as const) {
          const h = report?.rateLimits?.[kind];
          if (h && h.limit > 0)
            await budget.learn(
              modelClass,
              kind,
              h.limit,
              h.remaining + (Math.max(0, now - sentAt) * h.limit) / 60_000,
              now,
            );
        }
      };
      let released = false;
      // Redis errors must not fail a fork that got its answer: the budget is best effort after admission
      const quietly = (work: Promise<void>): void => void work.catch(() => undefined);
      return {
        started: (report) => quietly(learn(report)),
        release: (report) => {
          if (released) return;
          released = true;
          quietly(
            (async () => {
              await learn(report);
              const now = clock.now();
              if (report?.usage) {
                await budget.adjust(
                  modelClass,
                  'input-tokens',
                  report.usage.input_tokens + report.usage.cache_creation_input_tokens - cost.itpm,
                  now,
                );
                await budget.adjust(modelClass, 'output-tokens', report.usage.output_tokens - cost.otpm, now);
              } else if (report?.status === 429) {
                await budget.adjust(modelClass, 'input-tokens', -cost.itpm, now);
                if (report.errorCode === SPEND_LIMIT_REACHED) await budget.stop(modelClass);
                else
                  await budget.backoff(
                    modelClass,
                    now + (report.retryAfterMs ?? (report.errorCode === RAMP_LIMIT_EXCEEDED ? 10_000 : 1_000)),
                  );
              } else if (report?.status === 529) await budget.backoff(modelClass, now + 1_000);
            })(),
          );
        },
      } satisfies GatePermit;
    },
  };
}
