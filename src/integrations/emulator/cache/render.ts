import { createHash } from 'node:crypto';
import type { BlockTokenCounter } from '../tokens/block-tokens.ts';
import type { CacheControl, MessagesRequest, RequestBlock } from '../types.ts';

export type Segment = 'tools' | 'system' | 'messages';

/** One block position of the prefix, in the API's order: tools → system → messages. */
export interface Position {
  index: number;
  segment: Segment;
  /** Message index, or -1 for tools and system. */
  message: number;
  /** Block index inside its message (or inside tools / system). */
  block: number;
  type: string;
  /** sha256 of everything up to and including this block: the cache key of a marker here. */
  hash: string;
  tokens: number;
  /** Tokens of the prefix up to and including this block. */
  cumTokens: number;
  /** Lookback unit: a run of tool_use blocks (or of tool_result blocks) shares one. */
  unit: number;
  cacheControl: CacheControl | undefined;
  /** Whether a cache marker may sit here (not on thinking blocks). */
  cacheable: boolean;
}

/** Digests of the request's parts, for `diagnostics.cache_miss_reason`. */
export interface PromptFingerprint {
  model: string;
  tools: string;
  system: string;
  settings: string;
  messages: string[];
}

export interface RenderedPrefix {
  model: string;
  positions: Position[];
  totalTokens: number;
  /** Hash of the whole prompt (used to derive deterministic tool_use ids). */
  finalHash: string;
  fingerprint: PromptFingerprint;
  /** The first system block was a billing header, left out of the positions (and the key). */
  billingBlockIgnored: boolean;
}

interface RenderOptions {
  /** Keep a billing-header block in the key and the counts (the emulator's old behaviour). */
  cacheBillingBlock?: boolean;
}

/** How Claude Code's per-session (per-subagent, per-request) metadata block begins. */
const BILLING_HEADER_PREFIX = 'x-anthropic-billing-header:';

/**
 * Claude Code's first system text block `x-anthropic-billing-header: cc_version=…;` changes per
 * session, per subagent and (first-party) per request, yet Claude Code gets cache hits on the
 * API: the API treats it as request metadata, not prompt. So it is no position, no key input and
 * no tokens — unless it carries its own cache_control (then it is prompt by the client's word).
 */
function isBillingBlock(block: RequestBlock | undefined): boolean {
  return (
    block?.type === 'text' &&
    typeof block['text'] === 'string' &&
    block['text'].startsWith(BILLING_HEADER_PREFIX) &&
    block.cache_control == null
  );
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * A block as received minus its own `cache_control`: moving a marker must not change a key.
 * Object rest keeps the received key order, so the rest of the bytes are the client's.
 */
export function blockJson(block: Readonly<Record<string, unknown>>): string {
  const { cache_control: _marker, ...rest } = block;
  return JSON.stringify(rest);
}

// A string `system`/`content` renders exactly like one text block on the API, so it hashes
// like one: switching between the two forms is not a cache miss there either.
function asBlocks(content: string | readonly RequestBlock[] | undefined): readonly RequestBlock[] {
  if (content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content;
}

// Settings that change how the messages are rendered: tool_choice, thinking, effort
// (output_config). Absent values are the API's defaults, so they hash like those defaults.
function settingsDigest(req: MessagesRequest): string {
  return sha256(
    JSON.stringify([
      req.tool_choice ?? { type: 'auto' },
      req.thinking ?? { type: 'disabled' },
      req.output_config ?? null,
    ]),
  );
}

const RUN_TYPES = new Set(['tool_use', 'tool_result']);

/**
 * A system turn with `clear_at: "next_user_message"` is no longer shown to the model once a
 * later user turn exists (it stays in `messages`, sent unchanged): it is then no part of the
 * prompt, so no position either.
 */
function isCleared(messages: MessagesRequest['messages'], m: number): boolean {
  const message = messages[m]!;
  return (
    message.role === 'system' &&
    message.clear_at === 'next_user_message' &&
    messages.slice(m + 1).some((later) => later.role === 'user')
  );
}

/** A system turn's own `output_config` (per-turn effort) renders from that turn on, like effort does. */
function turnSettings(message: MessagesRequest['messages'][number]): string {
  return message.role === 'system' && message.output_config != null ? `\n${JSON.stringify(message.output_config)}` : '';
}

/**
 * Lay the request out as cache positions with chained hashes and token counts. The chain starts
 * from the model id (a different model never shares a cache) and mixes in the settings digest
 * where the messages begin, so tool_choice/thinking/effort changes invalidate only the messages
 * part while a tools change invalidates everything after it, i.e. everything.
 */
export function renderPrefix(
  req: MessagesRequest,
  model: string,
  counter: BlockTokenCounter,
  options: RenderOptions = {},
): RenderedPrefix {
  const positions: Position[] = [];
  let hash = sha256(`forkcache-emulator/v1\nmodel\n${model}`);
  let cum = 0;
  let unit = -1;
  const settings = settingsDigest(req);
  const partDigests: Record<Segment, string[]> = { tools: [], system: [], messages: [] };
  const messageDigests: string[] = [];

  const push = (
    segment: Segment,
    message: number,
    block: number,
    raw: RequestBlock,
    chainTag: string,
    extraTokens = 0,
  ): string => {
    const json = blockJson(raw);
    const digest = sha256(json);
    const asTool = segment === 'tools';
    const tokens = counter.block(`${asTool ? 't' : 'b'}:${digest}`, raw, json, asTool) + extraTokens;
    const prev = positions[positions.length - 1];
    const joinsRun =
      prev !== undefined &&
      prev.message === message &&
      message >= 0 &&
      prev.type === raw.type &&
      RUN_TYPES.has(raw.type);
    if (!joinsRun) unit++;
    hash = sha256(`${hash}\n${chainTag}\n${digest}`);
    cum += tokens;
    positions.push({
      index: positions.length,
      segment,
      message,
      block,
      type: raw.type,
      hash,
      tokens,
      cumTokens: cum,
      unit,
      cacheControl: raw.cache_control ?? undefined,
      cacheable: raw.type !== 'thinking' && raw.type !== 'redacted_thinking',
    });
    partDigests[segment].push(digest);
    return digest;
  };

  (req.tools ?? []).forEach((tool, i) => {
    push('tools', -1, i, tool as RequestBlock, 'tool', i === 0 ? counter.costs.toolPromptTokens : 0);
  });
  // Fast mode is another serving path: a speed change invalidates system and messages (not the
  // tools). `standard` (or absent) leaves the chain as it always was.
  const fast = req['speed'] === 'fast';
  if (fast) hash = sha256(`${hash}\nspeed\nfast`);
  const system = asBlocks(req.system);
  const billingBlockIgnored = options.cacheBillingBlock !== true && isBillingBlock(system[0]);
  // Skipped blocks keep their wire index in `block`, so logs and errors name them as sent.
  system.forEach((block, i) => {
    if (i > 0 || !billingBlockIgnored) push('system', -1, i, block, 'system');
  });
  hash = sha256(`${hash}\nsettings\n${settings}`);
  req.messages.forEach((message, m) => {
    if (isCleared(req.messages, m)) return;
    const tag = `message:${message.role}${turnSettings(message)}`;
    const digests = asBlocks(message.content).map((block, b) => push('messages', m, b, block, b === 0 ? tag : 'block'));
    messageDigests.push(sha256(`${message.role}\n${digests.join('\n')}`));
  });

  return {
    model,
    positions,
    totalTokens: cum,
    finalHash: hash,
    billingBlockIgnored,
    fingerprint: {
      // The API reports a speed change as model_changed.
      model: fast ? `${model} (fast)` : model,
      tools: sha256(partDigests.tools.join('\n')),
      system: sha256(partDigests.system.join('\n')),
      settings,
      messages: messageDigests,
    },
  };
}
