import type OpenAI from 'openai';
import type { Clock } from '../../core/util/clock.ts';
import type { FrozenPrefix } from '../../core/prefix/freeze.ts';
import { chatWarmup, sendChatWarmup } from './warmup.ts';
import type { WarmUpAccounts } from '../../core/engine/provider.ts';
import { estimateFreshBase } from '../anthropic/measure.ts';
import type { SpendPricing } from '../../core/gate/admission/admission-gate.ts';
import { underSpendCap } from '../../core/engine/fan-out/spend.ts';
import type { WarmGate } from '../../core/engine/warm-gate.ts';
import type { WarmStrategy } from '../../core/settings/engine-settings.ts';

/**
 * What a Chat Completions fan-out does before its forks: the API has no token count, so the
 * warm-up measures the shared prefix as it writes it (see `chatWarmup`). A single fork has no
 * sibling to warm for, and `warm: 'none'` asks for nothing: then nothing is measured.
 */
export async function warmUpChatFanOut(run: {
  client: OpenAI;
  prefix: FrozenPrefix;
  forks: number;
  warm: WarmStrategy;
  gate: WarmGate;
  accounts: WarmUpAccounts;
  clock: Clock;
  log: (record: Record<string, unknown>) => void;
  signal: AbortSignal;
  spend?: SpendPricing | undefined;
}): Promise<void> {
  if (run.warm === 'none' || run.forks < 2) return;
  const measured = await chatWarmup({
    send: (ready) =>
      underSpendCap(
        run.spend,
        // no count endpoint: nothing of it is known, a token per byte
        {
          bytes: run.prefix.byteLength + 256,
          headBytes: 0,
          sharedTokens: undefined,
          maxTokens: run.prefix.responses ? 0 : 1,
          signal: run.signal,
        },
        (began) =>
          sendChatWarmup(
            run.client,
            run.prefix,
            () => {
              began();
              ready();
            },
            run.signal,
          ),
      ),
    gate: run.gate,
    clock: run.clock,
    log: run.log,
  });
  run.accounts.sharedTokens = measured?.sharedTokens;
  // no count endpoint: the fresh-agents baseline's F is estimated at the prefix's tokens per byte
  if (measured) run.accounts.freshBase = estimateFreshBase(measured.sharedTokens / Math.max(1, run.prefix.byteLength));
  if (measured) run.accounts.warmup(measured.usage, measured.at, measured.cachedTokens);
}
