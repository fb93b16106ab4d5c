import { createHash } from 'node:crypto';
import { invalidRequest } from '../api-error.ts';
import { blockJson } from '../cache/render.ts';
import type { MessagesRequest, RequestMessage } from '../types.ts';

/*
 * Thinking-block signatures. The API's are opaque; the emulator's carry what it needs to apply
 * the API's rules offline: the model and a digest of the conversation before the block
 * ("bound to its conversation"), and a MAC over the thinking text (a modified block is a 400).
 * The key is a constant so recorded sessions replay against any emulator, on any machine.
 */

const SIGNATURE_PREFIX = 'fcemu1';
const KEY = 'forkcache-emulator/thinking-signature/v1';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The conversation a block is bound to: the model and the user/assistant turns before it, as
 * received minus cache_control (markers move between requests; they are not conversation).
 * System turns are instructions, not conversation: clients move them (Claude Code re-sends its
 * environment turn last), so they do not bind.
 */
function conversationDigest(model: string, messages: readonly RequestMessage[]): string {
  const parts = [`model\n${model}`];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    parts.push(`${m.role}\n${blocks.map((b) => blockJson(b)).join('\n')}`);
  }
  return sha256(parts.join('\n\n'));
}

function mac(digest: string, thinking: string): string {
  return sha256(`${KEY}\n${digest}\n${thinking}`).slice(0, 32);
}

/** The signature of a thinking block produced after `messages` on `model`. */
export function signThinking(model: string, messages: readonly RequestMessage[], thinking: string): string {
  const digest = conversationDigest(model, messages);
  return Buffer.from(`${SIGNATURE_PREFIX}.${digest}.${mac(digest, thinking)}`).toString('base64');
}

function parseSignature(signature: string): { digest: string; mac: string } | undefined {
  const text = Buffer.from(signature, 'base64').toString('utf8');
  const match = /^fcemu1\.([0-9a-f]{64})\.([0-9a-f]{32})$/.exec(text);
  return match ? { digest: match[1]!, mac: match[2]! } : undefined;
}

interface BindingOptions {
  /** The model binds thinking blocks to their conversation (catalogue `bindsThinkingBlocks`). */
  binds: boolean;
}

/**
 * Replayed thinking blocks: an emulator-signed block whose text was changed is a 400 on every
 * model; on a binding model, an emulator-signed block whose conversation before it differs is
 * the API's 400 — unless `thinking.block_binding.prefix_mismatch_behavior`
 * is `drop_block`, where the API drops it and goes on. The emulator then keeps the block in
 * the prompt (it cannot un-send bytes the cache already hashed) and answers normally.
 */
export function checkThinkingBlocks(req: MessagesRequest, model: string, options: BindingOptions): void {
  const drop = req.thinking?.block_binding?.prefix_mismatch_behavior === 'drop_block';
  req.messages.forEach((message, i) => {
    if (message.role !== 'assistant' || typeof message.content === 'string') return;
    message.content.forEach((block, j) => {
      if (block.type !== 'thinking') return;
      const at = `messages.${i}.content.${j}`;
      const parsed = parseSignature(String(block['signature'] ?? ''));
      if (parsed && parsed.mac !== mac(parsed.digest, String(block['thinking'] ?? ''))) {
        throw invalidRequest(`${at}: Invalid \`signature\` in \`thinking\` block`);
      }
      // A signature the emulator did not make (the real API's, in an imported transcript) cannot
      // be checked here: it is taken as valid rather than failing a request the API would take.
      if (!parsed || !options.binds || drop) return;
      if (parsed.digest !== conversationDigest(model, req.messages.slice(0, i))) {
        throw invalidRequest(
          `${at}: The block is bound to a different conversation: the messages before it differ from those it was created after. Send thinking blocks back only under their original history, or set thinking.block_binding.prefix_mismatch_behavior to "drop_block".`,
        );
      }
    });
  });
}
