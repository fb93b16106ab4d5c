import type Anthropic from '@anthropic-ai/sdk';
import type { ForkPlan } from '../fork/layouts.ts';
import { CACHE_SETTING_KEYS, type ParentSnapshot } from '../fork/snapshot.ts';
import type { CacheTtl } from '../wire/cache.ts';
import { isMarkable, markerOf, ttlOf, withMarker, withoutMarker } from './markers.ts';

/**
 * The shared part of every child's request as an object, with its cache markers placed:
 * top-level keys in a fixed order (model, system, tools, cache-relevant settings, messages),
 * nested objects exactly as the parent sent them.
 */
export interface SharedRequest {
  readonly object: Readonly<Record<string, unknown>>;
  /** Paths of the markers in the head, in prefix order (tools → system → messages). */
  readonly markers: readonly string[];
  /** Where the shared-boundary marker sits (undefined when there is nothing to cache). */
  readonly boundaryPath: string | undefined;
}

type Block = Anthropic.ContentBlockParam;
type Position = { path: string; get(): unknown; set(value: unknown): void };

/**
 * Place the head's markers:
 * - markers inside the parent's history are dropped (they were the parent's moving markers);
 * - of the parent's system/tools markers only the last is kept (its stable-prefix marker);
 * - one marker goes on the last shared block (the last markable one), so that siblings can
 *   read each other's shared part: reads only find what a marker wrote.
 * At most two markers, leaving room for the child's own moving marker (the API allows four).
 */
export function buildSharedRequest(snapshot: ParentSnapshot, plan: ForkPlan, ttl: CacheTtl | false): SharedRequest {
  const tools = snapshot.tools ? [...snapshot.tools] : undefined;
  let system: string | Anthropic.TextBlockParam[] | undefined =
    typeof snapshot.system === 'string' || snapshot.system === undefined ? snapshot.system : [...snapshot.system];
  // Shared messages keep string content as sent (no marker can sit there); block content loses
  // the parent's markers.
  const messages = plan.shared.map((m) =>
    typeof m.content === 'string' ? m : { ...m, content: m.content.map((b) => withoutMarker(b)) },
  );

  // Prefix order, as the API renders it: tools, then system, then message blocks.
  const positions: Position[] = [];
  tools?.forEach((_, i) =>
    positions.push({ path: `tools[${i}]`, get: () => tools[i], set: (v) => (tools[i] = v as Anthropic.ToolUnion) }),
  );
  // A string system prompt stays a string unless a marker has to go on it.
  const getSystem = (i: number): unknown => (typeof system === 'string' ? { type: 'text', text: system } : system![i]);
  const setSystem = (i: number, value: unknown): void => {
    if (typeof system === 'string') system = [{ type: 'text', text: system }];
    system![i] = value as Anthropic.TextBlockParam;
  };
  const systemCount = typeof system === 'string' ? (system === '' ? 0 : 1) : (system?.length ?? 0);
  for (let i = 0; i < systemCount; i++)
    positions.push({ path: `system[${i}]`, get: () => getSystem(i), set: (v) => setSystem(i, v) });
  messages.forEach((m, i) => {
    const content = m.content;
    if (typeof content === 'string') return;
    content.forEach((_, j) =>
      positions.push({
        path: `messages[${i}].content[${j}]`,
        get: () => content[j],
        set: (v) => (content[j] = v as Block),
      }),
    );
  });

  const stable = positions.filter((p) => !p.path.startsWith('messages') && markerOf(p.get()));
  const kept = stable.at(-1);
  let keptTtl = kept ? ttlOf(markerOf(kept.get())!) : undefined;
  for (const p of stable) p.set(withoutMarker(p.get()));

  if (ttl === false) return finish(snapshot, system, tools, messages, positions, undefined); // no markers in the head
  const boundary = [...positions].reverse().find((p) => isMarkable(p.get()));
  if (kept && kept !== boundary) {
    // 1h markers must precede 5m ones: raise the kept marker rather than drop it.
    if (keptTtl === '5m' && ttl === '1h') keptTtl = '1h';
    kept.set(withMarker(kept.get(), keptTtl!));
  }
  const boundaryTtl: CacheTtl = kept === boundary && keptTtl === '1h' ? '1h' : ttl;
  if (boundary) boundary.set(withMarker(boundary.get(), boundaryTtl));
  return finish(snapshot, system, tools, messages, positions, boundary?.path);
}

function finish(
  snapshot: ParentSnapshot,
  system: string | Anthropic.TextBlockParam[] | undefined,
  tools: Anthropic.ToolUnion[] | undefined,
  messages: readonly unknown[],
  positions: Position[],
  boundaryPath: string | undefined,
): SharedRequest {
  const object: Record<string, unknown> = { model: snapshot.model };
  if (system !== undefined) object['system'] = system;
  if (tools !== undefined) object['tools'] = tools;
  for (const key of CACHE_SETTING_KEYS) if (snapshot[key] !== undefined) object[key] = snapshot[key];
  object['messages'] = messages;
  const markers = positions.filter((p) => markerOf(p.get())).map((p) => p.path);
  return { object, markers, boundaryPath };
}
