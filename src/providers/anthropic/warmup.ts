import type Anthropic from '@anthropic-ai/sdk';
import { toWireError } from '../../core/util/errors.ts';
import type { FanOutWarmUp, ProviderConnection } from '../../core/engine/provider.ts';
import { underSpendCap } from '../../core/engine/fan-out/spend.ts';
import { billedUnreadOf } from './send.ts';
import { measureFreshBase, measureSharedTokens, sendPrewarm } from './measure.ts';

/** The engine's connection to the Messages API: its warm-ups and token counts go through `client`. */
export function anthropicConnection(client: Anthropic): ProviderConnection {
  return {
    withHeaders: (headers) => anthropicConnection(client.withOptions({ defaultHeaders: headers })),
    warmUp: (run) => warmUpFanOut(run, client),
  };
}

/** Measure the shared prefix (and the fresh-agent baseline) with the API's own count, and warm it when asked. */
async function warmUpFanOut(run: FanOutWarmUp, client: Anthropic): Promise<Record<string, never>> {
  const { prefix, accounts, signal, options } = run;
  accounts.sharedTokens = await measureSharedTokens(client, prefix, signal);
  // fresh agents are what they are: no fresh-agent baseline to measure for them
  if (!run.agents) accounts.freshBase = await measureFreshBase(client, prefix.snapshot, signal);
  const warmsFirst = options.warm === 'prewarm' || (options.warm === 'first-child' && run.resumed === true);
  if (warmsFirst && !signal.aborted) await prewarm(run, client);
  return {};
}

async function prewarm(
  { clock, prefix, gate, accounts, log, signal, spend }: FanOutWarmUp,
  client: Anthropic,
): Promise<void> {
  // Nothing to pre-warm without shared messages or without a boundary marker: first-child applies.
  if (prefix.headEnd === 'messages-open' || prefix.markers !== 'boundary') return;
  gate.beginWarming();
  const at = clock.now();
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
        client,
        prefix,
        () => {
          began();
          gate.markWarm();
        },
        signal,
      ),
    );
    log({ type: 'warmup-end', at: clock.now(), usage: message.usage });
    accounts.warmup(message.usage, at);
  } catch (err) {
    // a 2xx cut on its way was billed: in the ledger, though its usage never arrived
    const usage = billedUnreadOf(err) ? accounts.failedWarmup(at) : undefined;
    log({
      type: 'warmup-failed',
      at: clock.now(),
      error: toWireError(err),
      ...(usage ? { billed: true, usage } : {}),
    });
    gate.warmingFailed(); // the first child warms instead
  }
}
