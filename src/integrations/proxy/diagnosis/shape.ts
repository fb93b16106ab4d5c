import { collectMarkers, type Marker } from '../../emulator/cache/markers.ts';
import { blockJson, renderPrefix, type Position, type PromptFingerprint } from '../../emulator/cache/render.ts';
import { BlockTokenCounter } from '../../emulator/tokens/block-tokens.ts';
import { claudeTokenizer } from '../../emulator/tokens/tokenizer.ts';
import type { MessagesRequest, RequestBlock } from '../../emulator/types.ts';
import { FORK_BOILERPLATE_OPEN } from '../../../core/wire/fork-text.ts';

/** Claude Code's per-session/per-subagent system block (see the facts file). */
const BILLING_PREFIX = 'x-anthropic-billing-header:';

export interface BillingBlock {
  /** Index of the block in `system`. */
  index: number;
  text: string;
  /** `cc_is_subagent=true;`: the request comes from one of Claude Code's subagents. */
  subagent: boolean;
}

/** What the proxy reads from a `POST /v1/messages` body, without changing it. */
export interface RequestShape {
  model: string;
  stream: boolean;
  /** The request as parsed (key order kept). */
  request: MessagesRequest;
  /** Cache positions with chained hashes, as the API keys them (the billing block left out). */
  positions: Position[];
  /** The block at each position, for token estimates. */
  blocks: KeyedBlock[];
  markers: Marker[];
  fingerprint: PromptFingerprint;
  finalHash: string;
  billing: BillingBlock | undefined;
  /** The last user message carries the fork boilerplate: a fork child's request. */
  fork: boolean;
  /** A fork's name: its spawning call's `description` (Claude Code) or its directive (forkcache). */
  label: string | undefined;
}

/** A block as the layout keyed it, kept so that counting its tokens later needs no new layout. */
export interface KeyedBlock {
  /** The counter's memo key (the block's digest, tool or not). */
  key: string;
  block: Record<string, unknown>;
  asTool: boolean;
}

/**
 * Hashes only: the gate runs before forwarding, so no tokenizing on that path (tokens are
 * estimated after the response, off the request's critical path). It notes each block the
 * layout counts, in position order, so the estimate does not hash the prefix a second time.
 */
class KeyRecorder extends BlockTokenCounter {
  blocks: KeyedBlock[] = [];

  constructor() {
    super({ count: () => 0 }, { toolPromptTokens: 0, imageTokens: 0 });
  }

  override block(digest: string, block: Record<string, unknown>, _json: string, asTool = false): number {
    this.blocks.push({ key: digest, block, asTool });
    return 0;
  }
}
const recorder = new KeyRecorder();

function findBilling(system: MessagesRequest['system']): BillingBlock | undefined {
  if (!Array.isArray(system)) return undefined;
  const index = system.findIndex(
    (b) => b?.type === 'text' && typeof b.text === 'string' && b.text.startsWith(BILLING_PREFIX),
  );
  if (index < 0) return undefined;
  const text = system[index]!.text;
  return { index, text, subagent: /\bcc_is_subagent=true\b/.test(text) };
}

/** The request without its billing block (the same object when there is none). */
function withoutBilling(request: MessagesRequest, billing: BillingBlock | undefined): MessagesRequest {
  if (!billing || !Array.isArray(request.system)) return request;
  const system = request.system.filter((_, i) => i !== billing.index);
  const { system: _dropped, ...rest } = request;
  return (system.length > 0 ? { ...rest, system } : rest) as MessagesRequest;
}

function lastUserHasBoilerplate(request: MessagesRequest): boolean {
  const last = [...request.messages].reverse().find((m) => m?.role === 'user');
  if (!last) return false;
  if (typeof last.content === 'string') return last.content.includes(FORK_BOILERPLATE_OPEN);
  return last.content.some(
    (b: RequestBlock) =>
      b?.type === 'text' && typeof b['text'] === 'string' && (b['text'] as string).includes(FORK_BOILERPLATE_OPEN),
  );
}

const clip = (text: string): string => {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
};

// Claude Code's fork repeats only its own spawning call in the last assistant turn; forkcache's
// children carry `Directive: ...` after the boilerplate.
function forkLabel(request: MessagesRequest): string | undefined {
  const messages = request.messages;
  const user = messages[messages.length - 1];
  const text =
    user && Array.isArray(user.content)
      ? user.content.map((b) => (b?.type === 'text' ? String(b['text']) : '')).join('\n')
      : String(user?.content ?? '');
  const directive = /Directive:\s*(.+)/.exec(text)?.[1];
  const assistant = messages[messages.length - 2];
  const calls =
    assistant?.role === 'assistant' && Array.isArray(assistant.content)
      ? assistant.content.filter((b) => b?.type === 'tool_use')
      : [];
  const input = calls.length === 1 ? (calls[0]!['input'] as Record<string, unknown> | undefined) : undefined;
  const named = input?.['description'] ?? input?.['prompt'];
  if (typeof named === 'string') return clip(named);
  return directive === undefined ? undefined : clip(directive);
}

function looksLikeMessages(json: unknown): json is MessagesRequest {
  if (typeof json !== 'object' || json === null) return false;
  const r = json as Record<string, unknown>;
  return (
    typeof r['model'] === 'string' &&
    Array.isArray(r['messages']) &&
    r['messages'].every(
      (m) =>
        typeof m === 'object' &&
        m !== null &&
        (typeof (m as { content?: unknown }).content === 'string' ||
          Array.isArray((m as { content?: unknown }).content)),
    )
  );
}

/**
 * Read a Messages request. Undefined when the body is not one the proxy can lay out (it is
 * forwarded all the same: the upstream is the judge of what is valid).
 */
export function shapeOf(body: Buffer): RequestShape | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!looksLikeMessages(json)) return undefined;
  const billing = findBilling(json.system);
  try {
    const keyed = withoutBilling(json, billing);
    recorder.blocks = [];
    const rendered = renderPrefix(keyed, json.model, recorder);
    const markers = collectMarkers(rendered.positions, json.cache_control);
    const fork = lastUserHasBoilerplate(json);
    return {
      model: json.model,
      stream: json.stream === true,
      request: json,
      positions: rendered.positions,
      blocks: recorder.blocks,
      markers,
      fingerprint: rendered.fingerprint,
      finalHash: rendered.finalHash,
      billing,
      fork,
      label: fork ? forkLabel(json) : undefined,
    };
  } catch {
    // More than 4 markers, a malformed block...: the upstream will answer 400 itself.
    return undefined;
  }
}

/** The body with the billing block removed (re-serialized: key order kept, no whitespace). */
export function stripBillingBody(shape: RequestShape): Buffer {
  return Buffer.from(JSON.stringify(withoutBilling(shape.request, shape.billing)));
}

/** Token estimates with the emulator's tokenizer (exact against the emulator), memoized per block. */
export class PrefixTokenCounter extends BlockTokenCounter {
  constructor() {
    super(claudeTokenizer);
  }
}

/**
 * Cumulative estimated tokens per position; exact up to `upTo`, flat beyond it: the blocks after
 * the last one a diagnosis or a fan-out needs (a new question, a fork's own directive) are never
 * tokenized, which keeps the tokenizer off the proxy's per-request bill. Counted as the layout
 * does (the tool prompt on the first tool), from the blocks it keyed: no second layout.
 */
export function estimateTokens(shape: RequestShape, counter: PrefixTokenCounter, upTo: number): number[] {
  if (upTo < 0) return [];
  const cum: number[] = [];
  let total = 0;
  shape.blocks.forEach(({ key, block, asTool }, i) => {
    if (i <= upTo) {
      total += counter.known(key) ?? counter.block(key, block, blockJson(block), asTool);
      if (i === 0 && asTool) total += counter.costs.toolPromptTokens;
    }
    cum.push(total);
  });
  return cum;
}

/**
 * The positions a request's cache lookup visits, in the API's order: from the last marker
 * back, at most `limit` positions (a run of tool_use or tool_result blocks is one), then from
 * the previous marker. Callers stop at the first entry that answers.
 */
export function* lookbackWalk(shape: RequestShape, limit: number): Generator<number> {
  const { positions, markers } = shape;
  for (let k = markers.length - 1; k >= 0; k--) {
    let units = 0;
    let unit: number | undefined;
    for (let i = markers[k]!.position; i >= 0; i--) {
      const p = positions[i]!;
      if (p.unit !== unit) {
        unit = p.unit;
        if (++units > limit) break;
      }
      yield i;
    }
  }
}
