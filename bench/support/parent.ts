import { BUILTIN_CATALOGUE } from '../../src/core/models/catalogue.ts';
import { DEFAULT_MODEL } from '../../src/core/models/defaults.ts';
import type Anthropic from '@anthropic-ai/sdk';
import { DEMO_SYSTEM_PROMPT } from '../../src/cli/demo/system-prompt.ts';
import { measureSharedTokens } from '../../src/providers/anthropic/measure.ts';
import { SPAWN_TOOL_NAME } from '../../src/core/wire/fork-text.ts';
import { captureSnapshot, type ParentSnapshot } from '../../src/core/fork/snapshot.ts';
import { freeze } from '../../src/core/prefix/freeze.ts';
import { TOOL_DECLARATIONS } from '../../src/core/tools/declarations.ts';

/** The model every bench request uses. */
export const BENCH_MODEL = DEFAULT_MODEL;

/** Emulated time of the economics sweeps starts here: the model catalogue's date. */
export const BENCH_EPOCH = Date.parse(`${BUILTIN_CATALOGUE.date}T00:00:00Z`);

/** A seeded generator (mulberry32): the same seed always builds the same history. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOUNS = [
  'user',
  'order',
  'invoice',
  'session',
  'token',
  'cart',
  'report',
  'payment',
  'account',
  'address',
  'product',
  'review',
];
const VERBS = ['load', 'save', 'find', 'update', 'remove', 'validate', 'format', 'parse', 'merge', 'sync'];
const cap = (s: string): string => s[0]!.toUpperCase() + s.slice(1);

/** `lines` lines of TypeScript-like source, different for every (seed, file). */
export function sourceFile(seed: number, file: number, lines: number): string {
  const next = random(seed * 7919 + file);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const out: string[] = [`// src/${pick(NOUNS)}s/module-${file}.ts`];
  while (out.length < lines) {
    const noun = pick(NOUNS);
    const name = `${pick(VERBS)}${cap(noun)}${Math.floor(next() * 100)}`;
    out.push(
      `export async function ${name}(id: string, limit = ${Math.floor(next() * 500)}): Promise<${cap(noun)}[]> {`,
      `  const rows = await db.${pick(NOUNS)}s.where({ ${pick(NOUNS)}Id: id }).limit(limit);`,
      `  if (rows.length === 0) throw new NotFoundError(\`${noun} \${id} not found\`);`,
      `  return rows.map((row) => ${pick(VERBS)}${cap(pick(NOUNS))}(row, { strict: ${next() < 0.5} }));`,
      '}',
    );
  }
  return out.slice(0, lines).join('\n');
}

export interface ParentShape {
  /** Directives of the parent's spawning message (one `agent` call each). */
  spawn: readonly string[];
  /** Full files the parent read (one read_file round trip each), and the lines of a last, partial one. */
  files: number;
  partialLines: number;
  seed: number;
  /** Default BENCH_MODEL. */
  model?: string;
}

const FILE_LINES = 150;

/**
 * A parent's last request: the demo system prompt (with the parent's stable marker), the real
 * tool declarations, a task, `files` read_file round trips with generated sources, then one
 * assistant message that calls `agent` once per directive — what a fan-out freezes.
 */
export function parentRequest(shape: ParentShape): Record<string, unknown> {
  const messages: Anthropic.MessageParam[] = [
    {
      role: 'user',
      content: 'Survey this repository module by module and summarise what each part does. Fork one child per part.',
    },
  ];
  const reads = shape.files + (shape.partialLines > 0 ? 1 : 0);
  for (let i = 0; i < reads; i++) {
    const id = `toolu_bench_read_${i}`;
    const path = `src/module-${i}.ts`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading ${path}.` },
        { type: 'tool_use', id, name: 'read_file', input: { path } },
      ],
    });
    const lines = i < shape.files ? FILE_LINES : shape.partialLines;
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: sourceFile(shape.seed, i, lines) }],
    });
  }
  messages.push({
    role: 'assistant',
    content: [
      { type: 'text', text: `I have read the code; forking ${shape.spawn.length} children, one per part.` },
      ...shape.spawn.map((directive, i): Anthropic.ToolUseBlockParam => ({
        type: 'tool_use',
        id: `toolu_bench_spawn_${i}`,
        name: SPAWN_TOOL_NAME,
        input: { directive, description: `part ${i + 1}` },
      })),
    ],
  });
  return {
    model: shape.model ?? BENCH_MODEL,
    max_tokens: 8192,
    system: [
      { type: 'text', text: DEMO_SYSTEM_PROMPT },
      { type: 'text', text: 'Environment: repository at the workspace root.', cache_control: { type: 'ephemeral' } },
    ],
    tools: TOOL_DECLARATIONS,
    messages,
  };
}

export interface SizedParent {
  snapshot: ParentSnapshot;
  /** Shared-prefix tokens of a fork of this parent, counted by the emulator's count_tokens. */
  sharedTokens: number;
}

/**
 * A parent whose forks share about `target` tokens (±1%), as the emulator's count_tokens
 * counts the closed head: full files are added, then the last file's length is fitted.
 */
export async function parentOfSize(
  client: Anthropic,
  target: number,
  spawn: readonly string[],
  seed = 6,
  model = BENCH_MODEL,
): Promise<SizedParent> {
  const measure = async (files: number, partialLines: number): Promise<SizedParent> => {
    const snapshot = captureSnapshot(parentRequest({ spawn, files, partialLines, seed, model }));
    const sharedTokens = await measureSharedTokens(client, freeze(snapshot));
    if (sharedTokens === undefined) throw new Error('count_tokens failed while sizing the bench parent');
    return { snapshot, sharedTokens };
  };
  const base = await measure(0, 0);
  if (base.sharedTokens >= target) return base;
  const perFile = (await measure(1, 0)).sharedTokens - base.sharedTokens;
  const files = Math.floor((target - base.sharedTokens) / perFile);
  let lines = Math.round(((target - base.sharedTokens - files * perFile) / perFile) * FILE_LINES);
  let best = await measure(files, lines);
  for (let i = 0; i < 4 && Math.abs(best.sharedTokens - target) > target * 0.01; i++) {
    lines = Math.max(1, lines + Math.round(((target - best.sharedTokens) / perFile) * FILE_LINES));
    best = await measure(files, lines);
  }
  return best;
}
