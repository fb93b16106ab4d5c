import type OpenAI from 'openai';
import { LlamaServerApi } from './server-api.ts';
import type { FrozenPrefix } from '../../core/prefix/freeze.ts';
import type { WarmUpAccounts } from '../../core/engine/provider.ts';
import type { ResolvedEngineOptions } from '../../core/engine/options.ts';
import type { Clock } from '../../core/util/clock.ts';
import { fillSlots, type WarmedUp } from './slot-fill.ts';
import type { WarmGate } from '../../core/engine/warm-gate.ts';

/**
 * The warm-up of a `llama-cpp` fan-out: learn the server's slots from `/props`, fill them with
 * the prefix and hand the forks a slot pool. A server without `/props` (not a llama-server: the
 * emulator, a vLLM) gets the ordinary Chat warm-up instead (no `slots` here: the caller falls
 * back), and the summary says so.
 */
export async function warmUpLlamaFanOut(run: {
  options: ResolvedEngineOptions;
  clock: Clock;
  client: OpenAI;
  prefix: FrozenPrefix;
  forks: number;
  gate: WarmGate;
  fanOutId: string;
  accounts: WarmUpAccounts;
  log: (record: Record<string, unknown>) => void;
  signal: AbortSignal;
}): Promise<WarmedUp> {
  const deps = run;
  const server = new LlamaServerApi({ baseURL: deps.options.api.baseURL, apiKey: deps.options.api.apiKey });
  const props = await server.props(run.signal).catch(() => undefined);
  if (!props) {
    const note = `${server.root} has no llama-server /props: no slots to fill or pin; the forks run unpinned`;
    const slotReport = { total: 0, used: 0, fill: 'none', clears_idle: false, note } as const;
    run.log({ type: 'slots', at: deps.clock.now(), ...slotReport });
    return { slotReport };
  }
  const { pool, report, files, policy } = await fillSlots(
    {
      client: run.client,
      server,
      prefix: run.prefix,
      forks: run.forks,
      fill: deps.options.slotFill,
      gate: run.gate,
      accounts: run.accounts,
      clock: deps.clock,
      log: run.log,
      signal: run.signal,
      fanOutId: run.fanOutId,
      saveDir: deps.options.slotSavePath,
      maxBytes: deps.options.slotFilesMaxBytes,
    },
    props.totalSlots,
  );
  return { slots: pool, slotReport: report, slotFiles: files, policy };
}
