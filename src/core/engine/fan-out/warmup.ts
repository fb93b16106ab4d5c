import { toWireError } from '../../util/errors.ts';
import { billedUnreadOf } from '../../../providers/anthropic/send.ts';
import type { FrozenPrefix } from '../../prefix/freeze.ts';
import { warmUpChatFanOut } from '../chat-warmup.ts';
import type { FanOutAccounts } from './accounts.ts';
import type { FanOutDeps } from './types.ts';
import { measureFreshBase, measureSharedTokens, sendPrewarm } from '../measure.ts';
import type { WarmGate } from '../warm-gate.ts';
import type { SpendPricing } from '../../gate/admission/admission-gate.ts';
import { underSpendCap } from './spend.ts';
import { warmUpLlamaFanOut } from '../llama-warmup.ts';
import type { WarmedUp } from '../slot-fill.ts';

/** What a fan-out does before its forks, and what it records of it. */
interface FanOutWarmUp {
  deps: FanOutDeps;
  prefix: FrozenPrefix;
  forks: number;
  /** The fan-out's id (llama.cpp names its slot files after it). */
  fanOutId: string;
  gate: WarmGate;
  accounts: FanOutAccounts;
  log: (record: Record<string, unknown>) => void;
  /** `cancel()` stops the token counts and the pre-warm too. */
  signal: AbortSignal;
  /** The spend cap as the fan-out prices it: the warm-up is a request like any other. */
  spend?: SpendPricing | undefined;
  /**
   * Some fork goes on from earlier turns (`resume`), beside a sibling: its next request carries its whole
   * history, and under `first-child` the first to arrive would hold every sibling until its
   * response began. The prefix alone is written first instead (a pre-warm), and the siblings
   * go once it is readable.
   */
  resumed?: boolean;
}

/** Measure the shared prefix (and the fresh-agent baseline), and warm it when asked. */
export async function warmUpFanOut(run: FanOutWarmUp): Promise<WarmedUp> {
  const { deps, prefix, accounts, signal } = run;
  let llama: WarmedUp = {};
  if (deps.chatClient && prefix.provider === 'llama-cpp' && deps.options.warm !== 'none' && run.forks > 1) {
    llama = await warmUpLlamaFanOut({
      deps,
      client: deps.chatClient,
      prefix,
      forks: run.forks,
      gate: run.gate,
      fanOutId: run.fanOutId,
      accounts,
      log: run.log,
      signal,
    });
    if (llama.slots) return llama;
  }
  if (deps.chatClient) {
    // Chat Completions has no token count: the warm-up measures the prefix as it writes it
    await warmUpChatFanOut({
      client: deps.chatClient,
      prefix,
      forks: run.forks,
      warm: deps.options.warm,
      gate: run.gate,
      accounts,
      clock: deps.clock,
      log: run.log,
      signal,
      spend: run.spend,
    });
    return llama;
  }
  accounts.sharedTokens = await measureSharedTokens(deps.client, prefix, signal);
  // fresh agents are what they are: no fresh-agent baseline to measure for them
  if (!deps.agent) accounts.freshBase = await measureFreshBase(deps.client, prefix.snapshot, signal);
  const warmsFirst = deps.options.warm === 'prewarm' || (deps.options.warm === 'first-child' && run.resumed === true);
  if (warmsFirst && !signal.aborted) await prewarm(run);
  return {};
}

async function prewarm({ deps, prefix, gate, accounts, log, signal, spend }: FanOutWarmUp): Promise<void> {
  // Nothing to pre-warm without shared messages or without a boundary marker: first-child applies.
  if (prefix.headEnd === 'messages-open' || prefix.markers !== 'boundary') return;
  gate.beginWarming();
  const at = deps.clock.now();
  try {
    log({ type: 'warmup-start', at });
    const closing = 64; // the bytes that close the head into a request (`]}]`, `max_tokens`)
    const request = {
      bytes: prefix.byteLength + closing,
      headBytes: prefix.byteLength,
      sharedTokens: accounts.sharedTokens,
      maxTokens: 0,
      signal,
    };
    const message = await underSpendCap(spend, request, (began) =>
      sendPrewarm(
        deps.client,
        prefix,
        () => {
          began();
          gate.markWarm();
        },
        signal,
      ),
    );
    log({ type: 'warmup-end', at: deps.clock.now(), usage: message.usage });
    accounts.warmup(message.usage, at);
  } catch (err) {
    // a 2xx cut on its way was billed: in the ledger, though its usage never arrived
    const usage = billedUnreadOf(err) ? accounts.failedWarmup(at) : undefined;
    log({
      type: 'warmup-failed',
      at: deps.clock.now(),
      error: toWireError(err),
      ...(usage ? { billed: true, usage } : {}),
    });
    gate.warmingFailed(); // the first child warms instead
  }
}
