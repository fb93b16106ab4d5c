import type OpenAI from 'openai';
import type { EngineHooks, ProviderAdapter, ProviderConnection } from '../../core/engine/provider.ts';
import { chatAdapter, chatConnection } from '../openai/adapter.ts';
import { LLAMA_CHAT } from './dialect.ts';
import { createChatClient } from '../openai/client.ts';
import { streamChatBytes } from '../openai/stream.ts';
import { pinToSlot } from './pin-slot.ts';
import { policyLine, slotChoice, switchFigures } from './slot-policy.ts';
import type { WarmedUp } from './slot-fill.ts';
import { warmUpLlamaFanOut } from './warmup.ts';

const chat = chatAdapter(
  'llama-cpp',
  {
    // a prompt is in the slot that computed it once the request is done; matched per token
    readability: 'response-end',
    cacheStepTokens: 1,
    local: true,
    // llama-server serves the one model it loaded, whatever the id: a local id, never priced
    defaultModel: 'local-gguf',
    // its warm-up fills the server's slots (warmup.ts), not one Chat request
    ownWarmUp: true,
    // 8080 is llama-server's usual port; `OPENAI_BASE_URL` names the server, any key is accepted
    endpoint: {
      title: 'llama.cpp',
      keyEnv: ['OPENAI_API_KEY'],
      baseUrlEnv: ['OPENAI_BASE_URL'],
      defaultBaseURL: 'http://127.0.0.1:8080/v1',
    },
    chat: LLAMA_CHAT,
  },
  {
    // the slot is the permit's, known only once the request may leave: it goes into the suffix
    send: (client, body, options) =>
      streamChatBytes(client, options.slot === undefined ? body : pinToSlot(body, options.slot), options),
  },
);

/**
 * llama.cpp's `llama-server`: Chat Completions whose cache is per slot. Its warm-up fills the
 * server's slots with the prefix before any sibling goes (src/providers/llama-cpp/slot-fill.ts),
 * and the fan-out pins each fork request to a slot (its engine hooks, `slotHooks`).
 */
export const llamaCppAdapter: ProviderAdapter = {
  ...chat,
  connect: (api) => llamaConnection(createChatClient({ ...api, provider: chat, defaultHeaders: api.headers })),
};

function llamaConnection(client: OpenAI): ProviderConnection {
  const plain = chatConnection(client);
  return {
    withHeaders: (headers) => llamaConnection(client.withOptions({ defaultHeaders: headers })),
    async warmUp(run) {
      let llama: WarmedUp = {};
      if (run.options.warm !== 'none' && run.forks > 1) {
        llama = await warmUpLlamaFanOut({ ...run, client });
        if (llama.slots) return slotHooks(llama);
      }
      // no slots (a server without /props, one fork, `warm: 'none'`): the ordinary Chat warm-up
      await plain.warmUp(run);
      return slotHooks(llama);
    },
  };
}

/** The fan-out's hooks into the slots its warm-up filled: a request waits for a server slot, which its permit names (`id_slot`). */
function slotHooks(warmed: WarmedUp): EngineHooks {
  const { slots: pool, slotReport } = warmed;
  if (!pool) return { slotReport };
  return {
    slotReport,
    pin: (forkId, gate) => pool.gate(forkId, gate),
    forkEnded: (forkId) => pool.forkEnded(forkId),
    close: () => closeSlots(warmed),
  };
}

/** The fan-out's slot files are deleted, whatever happened; the slots line says what the policy did. */
function closeSlots({ slots, slotFiles, slotReport, policy }: WarmedUp): void {
  if (!slots || !slotFiles || !slotReport || slotReport.switching !== undefined) return;
  let left: string[];
  try {
    left = slotFiles.close();
  } catch (err) {
    left = [];
    slotReport.note ??= `the slot files could not be deleted (${(err as Error).message})`;
  }
  slotReport.switching = switchFigures(slots, left.length);
  slotReport.choice = slotChoice(slotReport, slots, policy);
  slotReport.policy = policyLine(slotReport, slots, slotReport.choice, slots.stopped);
  if (left.length > 0 && slots.figures.saves > 0)
    slotReport.note ??= `${left.length} slot files stay in the server's --slot-save-path (${slotFiles.stem}-*.bin): give forkcache the same folder (--slot-save-path, FORKCACHE_LLAMA_SLOT_SAVE_PATH) and it deletes them`;
}
