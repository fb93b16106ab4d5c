import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ForkcacheError } from '../errors.ts';
import { FORK_LAYOUTS, type ForkLayout } from '../fork/layouts.ts';
import { captureSnapshot, deepFreeze, type ParentSnapshot } from '../fork/snapshot.ts';
import { type FrozenPrefix, MARKER_STRATEGIES, type MarkerStrategy } from '../prefix/freeze.ts';
import { withoutCredentials } from '../provider/headers.ts';
import { permissionPolicySchema } from '../tools/permissions.ts';
import { parseOrThrow } from '../validation.ts';
import type { ResolvedEngineOptions } from './options.ts';

/**
 * What a fan-out directory holds, for `resume` (in this process or another): the fan-out id,
 * the frozen head's hash and how it was frozen, the directives, and the engine settings that
 * shape the forks' requests. Never the API key.
 */
const manifestSchema = z.strictObject({
  v: z.literal(1),
  fanoutId: z.string().min(1),
  createdAt: z.string(),
  prefix: z.strictObject({
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    bytes: z.number().int().nonnegative(),
    layout: z.enum(FORK_LAYOUTS as [ForkLayout, ...ForkLayout[]]),
    ttl: z.enum(['5m', '1h']),
    markers: z.enum(MARKER_STRATEGIES as [MarkerStrategy, ...MarkerStrategy[]]),
    headEnd: z.enum(['content-open', 'messages-open']),
    source: z.enum(['parent', 'fallback']),
  }),
  directives: z.array(z.string()).min(1),
  engine: z.strictObject({
    workspace: z.string(),
    headers: z.record(z.string(), z.string()),
    maxTurns: z.number().int().positive(),
    maxTokens: z.number().int().positive(),
    allow: z.array(z.string()),
    warm: z.string(),
    // what keeps a resumed run as safe and as bounded as the first one
    permissions: permissionPolicySchema.default({}),
    isolation: z.enum(['none', 'worktree']).default('none'),
    toolLimits: z.record(z.string(), z.number()).default({}),
    sandbox: z.enum(['auto', 'bwrap', 'none']).default('auto'),
    turnRetry: z.strictObject({ retries: z.number(), baseMs: z.number(), maxMs: z.number() }).optional(),
    concurrency: z.number().int().positive().optional(),
  }),
  /** Free-form facts of the caller (e.g. which emulator script a CLI run used). */
  meta: z.record(z.string(), z.unknown()).default({}),
});

export type Manifest = z.output<typeof manifestSchema>;


export function writeManifest(dir: string, fanoutId: string, prefix: FrozenPrefix, directives: readonly string[], options: ResolvedEngineOptions, meta: Record<string, unknown>): void {
  mkdirSync(join(dir, 'forks'), { recursive: true });
  writeFileSync(join(dir, 'snapshot.json'), `${JSON.stringify(prefix.snapshot)}\n`);
  const manifest: Manifest = {
    v: 1,
    fanoutId,
    createdAt: new Date().toISOString(),
    prefix: { sha256: prefix.sha256, bytes: prefix.byteLength, layout: prefix.layout, ttl: prefix.ttl, markers: prefix.markers, headEnd: prefix.headEnd, source: prefix.snapshot.source },
    directives: [...directives],
    engine: {
      workspace: options.workspace,
      headers: withoutCredentials(options.api.headers),
      maxTurns: options.maxTurns,
      maxTokens: options.maxTokens,
      allow: [...options.allow],
      warm: options.warm,
      permissions: options.permissions,
      isolation: options.isolation,
      toolLimits: options.toolLimits as Record<string, number>,
      sandbox: options.sandbox,
      turnRetry: options.turnRetry,
      concurrency: options.concurrency,
    },
    meta,
  };
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

function readJson(path: string): unknown {
  if (!existsSync(path)) throw new ForkcacheError('INVALID_ARGUMENT', `${path}: not found (is this a fan-out directory of a forkcache run?)`, { data: { path } });
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new ForkcacheError('INVALID_ARGUMENT', `${path}: not valid JSON (${(cause as Error).message})`, { cause, data: { path } });
  }
}

/** Read a fan-out directory's manifest and snapshot, validated (errors name the file and field). */
export function readFanOutDir(dir: string): { manifest: Manifest; snapshot: ParentSnapshot } {
  const manifestPath = join(dir, 'manifest.json');
  const manifest = parseOrThrow(manifestSchema, readJson(manifestPath), 'INVALID_ARGUMENT', manifestPath);
  const captured = captureSnapshot(readJson(join(dir, 'snapshot.json')));
  const snapshot = captured.source === manifest.prefix.source ? captured : deepFreeze({ ...captured, source: manifest.prefix.source });
  return { manifest, snapshot };
}
