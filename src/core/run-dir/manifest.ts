import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { FORK_LAYOUTS, type ForkLayout } from '../fork/layouts.ts';
import { deepFreeze } from '../util/deep-freeze.ts';
import { captureSnapshot, type ParentSnapshot } from '../fork/snapshot.ts';
import { readJsonFile } from '../util/json-file.ts';
import { type FrozenPrefix, MARKER_STRATEGIES, type MarkerStrategy } from '../prefix/freeze.ts';
import { HEAD_ENDS } from '../prefix/sab.ts';
import { DEFAULT_PROVIDER, OPENAI_WIRES, providerIdSchema } from '../wire/providers.ts';
import { permissionPolicySchema } from '../tools/permissions.ts';
import { toolFlagShape } from '../tools/tool-flags.ts';
import { manifestSettingShape } from '../settings/engine-settings.ts';
import { parseOrThrow } from '../util/validation.ts';
import { FORKS_DIR, MANIFEST_FILE, SIGNATURE_FILE, SNAPSHOT_FILE } from './files.ts';
import { CACHE_TTLS, RESPONSES_CACHE_TTLS } from '../wire/cache.ts';
import { loadRunKey, type RunKey } from './run-key.ts';
import { signRunFiles } from './run-signature.ts';

/**
 * What a run directory holds, for `resume` (in this process or another): the fan-out id,
 * the frozen head's hash and how it was frozen, the directives, and the engine settings that
 * shape the forks' requests. Never the API key. The one schema of `manifest.json`: the writer
 * below writes it, resume reads it whole, the report reads its core.
 */
/** Where one repository's worktrees start: the repository's top and the commit. */
const worktreeBaseSchema = z.strictObject({
  repo: z.string().min(1),
  base: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/),
});

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
    headEnd: z.enum(HEAD_ENDS),
    /** Older runs have none: they spoke the Messages API. */
    provider: providerIdSchema.default(DEFAULT_PROVIDER),
    source: z.enum(['parent', 'fallback']),
  }),
  directives: z.array(z.string()).min(1),
  engine: z.strictObject({
    workspace: z.string(),
    headers: z.record(z.string(), z.string()),
    allow: z.array(z.string()),
    /**
     * The engine's settings resume keeps (`maxTurns`, `isolation`, `sparseWorktrees`, `maxUsd` …),
     * each under its declared name (`settings/engine-settings.ts`): what keeps a resumed run as
     * safe and as bounded as the first one. One an older run does not have reads as its default.
     */
    ...manifestSettingShape(),
    permissions: permissionPolicySchema.default({}),
    /** A plan over several repositories: their folders, relative to `workspace`. */
    repos: z.array(z.string().min(1)).min(1).optional(),
    toolLimits: z.record(z.string(), z.number()).default({}),
    /**
     * Every tool flag (`network` …), written whole; one an older run does not have is off, the
     * safe default (it resumes without network).
     */
    ...toolFlagShape(() => z.boolean().default(false)),
    turnRetry: z
      .strictObject({ retries: z.number(), baseMs: z.number(), maxMs: z.number(), budgetMs: z.number().optional() })
      .optional(),
    /**
     * OpenAI's API the forks spoke, `responses` only (absent: Chat Completions, as older runs),
     * and the TTL its head was frozen with (the resolved one, never `auto`): resume re-freezes
     * the same bytes from these.
     */
    openaiWire: z.enum(OPENAI_WIRES).optional(),
    responsesTtl: z.enum(RESPONSES_CACHE_TTLS).optional(),
  }),
  /** Free-form facts of the caller (e.g. which emulator script a CLI run used). */
  meta: z.record(z.string(), z.unknown()).default({}),
  /**
   * `isolation: 'worktree'`: the repository and the commit every fork's worktree starts from,
   * recorded before the first worktree is made (a resume recreates one from here, never from
   * the HEAD of the day). Older runs have none.
   */
  worktrees: worktreeBaseSchema.optional(),
  /** A plan over several repositories: `worktrees` of each, by its name in `engine.repos`. */
  repoWorktrees: z.record(z.string(), worktreeBaseSchema).optional(),
  /** The plan's check, as a template (resume substitutes it again for each fork). Older runs: none. */
  check: z
    .strictObject({
      command: z.string().min(1),
      retries: z.number().int().nonnegative(),
      timeoutMs: z.number().int().positive(),
    })
    .optional(),
  /** Each directive's fields (`file` …), in directive order, when the plan gave some. */
  fields: z.array(z.record(z.string(), z.string()).nullable()).optional(),
  /** Every fork must change a file (`requireChange`): a `no_change` fork is not done. Older runs: none. */
  requireChange: z.boolean().optional(),
  /**
   * The fan-out's output schema as JSON Schema (zod 4's form of it, as the children were shown
   * it): resume checks its forks against the same schema. Absent: no schema, a schema with no
   * JSON Schema form (resume then needs it passed again), or an older run.
   */
  outputSchema: z.record(z.string(), z.unknown()).optional(),
});

export type Manifest = z.output<typeof manifestSchema>;
type ManifestWorktrees = NonNullable<Manifest['worktrees']>;
type ManifestRepoWorktrees = NonNullable<Manifest['repoWorktrees']>;

const prefixShape = manifestSchema.shape.prefix.shape;

/**
 * The part of the manifest every run directory has had since the first format, checked as
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
  fanOutId: string,
  prefix: FrozenPrefix,
  directives: readonly string[],
  engine: ManifestEngine,
  meta: Record<string, unknown>,
  forks: {
    check?: Manifest['check'];
    fields?: readonly (Readonly<Record<string, string>> | undefined)[] | undefined;
    requireChange?: boolean | undefined;
    outputSchema?: Record<string, unknown> | undefined;
  } = {},
  key?: RunKey,
): void {
  mkdirSync(join(dir, FORKS_DIR), { recursive: true });
  writeFileSync(join(dir, SNAPSHOT_FILE), `${JSON.stringify(prefix.snapshot)}\n`);
  const manifest: Manifest = {
    v: 1,
    fanoutId: fanOutId,
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
    ...(forks.check ? { check: forks.check } : {}),
    ...(forks.fields?.some((f) => f !== undefined) ? { fields: forks.fields.map((f) => (f ? { ...f } : null)) } : {}),
    ...(forks.requireChange ? { requireChange: true } : {}),
    ...(forks.outputSchema ? { outputSchema: forks.outputSchema } : {}),
  };
  saveManifest(dir, manifest, key);
}

/**
 * The one place `manifest.json` is written: whole, through a rename (a crash leaves the old
 * one), then signed with `key` (run-signature.ts) when one is given.
 */
function saveManifest(dir: string, manifest: Manifest, key: RunKey | undefined): void {
  const path = join(dir, MANIFEST_FILE);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
  if (key) signRunFiles(dir, manifest.fanoutId, key);
}

/** A run directory's manifest alone, validated (errors name the file and field). */
export function readManifest(dir: string): Manifest {
  const manifestPath = join(dir, MANIFEST_FILE);
  return parseOrThrow(manifestSchema, readJsonFile(manifestPath, 'fan-out manifest'), 'INVALID_RUN_DIR', manifestPath);
}

/**
 * Record where the run's worktrees start (once: a recorded base is never moved). A signed run
 * (`signature.json`: this run's writer verified it before it started) is signed again with
 * this machine's run key; an older, unsigned one stays unsigned.
 */
export function recordWorktreeBase(dir: string, worktrees: ManifestWorktrees): ManifestWorktrees {
  const manifest = readManifest(dir);
  if (manifest.worktrees) return manifest.worktrees;
  saveManifest(dir, { ...manifest, worktrees }, existsSync(join(dir, SIGNATURE_FILE)) ? loadRunKey() : undefined);
  return worktrees;
}

/** `recordWorktreeBase` for a plan over several repositories: every repository's base at once. */
export function recordRepoWorktrees(dir: string, repos: ManifestRepoWorktrees): ManifestRepoWorktrees {
  const manifest = readManifest(dir);
  if (manifest.repoWorktrees) return manifest.repoWorktrees;
  saveManifest(
    dir,
    { ...manifest, repoWorktrees: repos },
    existsSync(join(dir, SIGNATURE_FILE)) ? loadRunKey() : undefined,
  );
  return repos;
}

/** Read a run directory's manifest and snapshot, validated (errors name the file and field). */
export function readFanOutDir(dir: string): { manifest: Manifest; snapshot: ParentSnapshot } {
  const manifest = readManifest(dir);
  const captured = captureSnapshot(readJsonFile(join(dir, SNAPSHOT_FILE), 'parent snapshot'));
  const snapshot =
    captured.source === manifest.prefix.source ? captured : deepFreeze({ ...captured, source: manifest.prefix.source });
  return { manifest, snapshot };
}
