import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { FORK_LAYOUTS, type ForkLayout } from '../fork/layouts.ts';
import { deepFreeze } from '../deep-freeze.ts';
import { captureSnapshot, type ParentSnapshot } from '../fork/snapshot.ts';
import { readJsonFile } from '../json-file.ts';
import { type FrozenPrefix, MARKER_STRATEGIES, type MarkerStrategy } from '../prefix/freeze.ts';
import { providerIdSchema } from '../wire/providers.ts';
import { permissionPolicySchema } from '../tools/permissions.ts';
import { parseOrThrow } from '../validation.ts';
import { FORKS_DIR, MANIFEST_FILE, SNAPSHOT_FILE } from './files.ts';
import { CACHE_TTLS } from '../wire/cache.ts';

/**
 * What a fan-out directory holds, for `resume` (in this process or another): the fan-out id,
 * the frozen head's hash and how it was frozen, the directives, and the engine settings that
 * shape the forks' requests. Never the API key. The one schema of `manifest.json`: the writer
 * below writes it, resume reads it whole, the report reads its core.
 */
export const manifestSchema = z.strictObject({
  v: z.literal(1),
  fanoutId: z.string().min(1),
  createdAt: z.string(),
  prefix: z.strictObject({
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    bytes: z.number().int().nonnegative(),
    layout: z.enum(FORK_LAYOUTS as [ForkLayout, ...ForkLayout[]]),
    ttl: z.enum(CACHE_TTLS),
    markers: z.enum(MARKER_STRATEGIES as [MarkerStrategy, ...MarkerStrategy[]]),
    headEnd: z.enum(['content-open', 'messages-open', 'message-closed']),
    /** Older runs have none: they spoke the Messages API. */
    provider: providerIdSchema.default('anthropic'),
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
    turnRetry: z
      .strictObject({ retries: z.number(), baseMs: z.number(), maxMs: z.number(), budgetMs: z.number().optional() })
      .optional(),
    concurrency: z.number().int().positive().optional(),
  }),
  /** Free-form facts of the caller (e.g. which emulator script a CLI run used). */
  meta: z.record(z.string(), z.unknown()).default({}),
});

export type Manifest = z.output<typeof manifestSchema>;

const prefixShape = manifestSchema.shape.prefix.shape;

/**
 * The part of the manifest every fan-out directory has had since the first format, checked as
 * `manifestSchema` checks it; other fields may be missing (older runs) or new (newer ones).
 * The report reads this, so it renders runs that resume could not continue.
 */
export const manifestCoreSchema = z.looseObject({
  fanoutId: manifestSchema.shape.fanoutId,
  prefix: z.looseObject({
    sha256: prefixShape.sha256,
    bytes: prefixShape.bytes,
    layout: prefixShape.layout.optional(),
    ttl: prefixShape.ttl.optional(),
    headEnd: prefixShape.headEnd.optional(),
  }),
  directives: manifestSchema.shape.directives,
});

export type ManifestCore = z.output<typeof manifestCoreSchema>;

/** The engine settings a manifest keeps (the engine derives them from its options: `manifestEngine`). */
export type ManifestEngine = Manifest['engine'];

export function writeManifest(
  dir: string,
  fanoutId: string,
  prefix: FrozenPrefix,
  directives: readonly string[],
  engine: ManifestEngine,
  meta: Record<string, unknown>,
): void {
  mkdirSync(join(dir, FORKS_DIR), { recursive: true });
  writeFileSync(join(dir, SNAPSHOT_FILE), `${JSON.stringify(prefix.snapshot)}\n`);
  const manifest: Manifest = {
    v: 1,
    fanoutId,
    createdAt: new Date().toISOString(),
    prefix: {
      sha256: prefix.sha256,
      bytes: prefix.byteLength,
      layout: prefix.layout,
      ttl: prefix.ttl,
      markers: prefix.markers,
      headEnd: prefix.headEnd,
      provider: prefix.provider,
      source: prefix.snapshot.source,
    },
    directives: [...directives],
    engine,
    meta,
  };
  writeFileSync(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Read a fan-out directory's manifest and snapshot, validated (errors name the file and field). */
export function readFanOutDir(dir: string): { manifest: Manifest; snapshot: ParentSnapshot } {
  const manifestPath = join(dir, MANIFEST_FILE);
  const manifest = parseOrThrow(
    manifestSchema,
    readJsonFile(manifestPath, 'fan-out manifest'),
    'INVALID_ARGUMENT',
    manifestPath,
  );
  const captured = captureSnapshot(readJsonFile(join(dir, SNAPSHOT_FILE), 'parent snapshot'));
  const snapshot =
    captured.source === manifest.prefix.source ? captured : deepFreeze({ ...captured, source: manifest.prefix.source });
  return { manifest, snapshot };
}
