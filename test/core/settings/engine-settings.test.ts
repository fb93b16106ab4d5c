import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { engineOptionsOf, manifestEngine } from '../../../src/core/engine/manifest-engine.ts';
import { engineOptionsSchema, resolveEngineOptions } from '../../../src/core/engine/options.ts';
import { manifestSchema } from '../../../src/core/run-dir/manifest.ts';
import {
  ENGINE_SETTINGS,
  keptSettings,
  resolveSettings,
  SETTING_NAMES,
  settingsFromManifest,
} from '../../../src/core/settings/engine-settings.ts';

const local = { baseURL: 'http://127.0.0.1:1', apiKey: 'k' };

/** The engine part of a manifest written by 0.5 (before `concurrency`, `toolSet`, `denyTools`, `maxUsd`, `sparseWorktrees`). */
const OLDER_ENGINE = {
  workspace: '/tmp/ws',
  headers: {},
  maxTurns: 7,
  maxTokens: 900,
  allow: ['read_file'],
  warm: 'prewarm',
  isolation: 'none',
  toolLimits: {},
  sandbox: 'none',
};

describe('the engine settings table', () => {
  it('gives every declared setting its option, validated by its own schema', () => {
    for (const name of SETTING_NAMES) expect(engineOptionsSchema.shape).toHaveProperty(name);
    expect(() => resolveEngineOptions({ ...local, maxTurns: 0 })).toThrow(/maxTurns/);
    expect(() => resolveEngineOptions({ ...local, warm: 'later' as never })).toThrow(/warm/);
  });

  it('resolves an absent setting to its declared default, and never shares an array default', () => {
    const resolved = resolveSettings({});
    for (const name of SETTING_NAMES) expect(resolved[name]).toEqual(ENGINE_SETTINGS[name].default);
    expect(resolved.denyTools).not.toBe(ENGINE_SETTINGS.denyTools.default);
    expect(resolveEngineOptions(local)).toMatchObject({ maxTurns: 200, sandbox: 'auto', sparseWorktrees: false });
  });

  it('keeps in the manifest what its resume mode says: always, only when set, recorded but not read back, or not at all', () => {
    const defaults = keptSettings(resolveSettings({}));
    // `when-set` ones left at their default write the manifest an older version wrote
    expect(Object.keys(defaults).sort()).toEqual([
      'concurrency',
      'isolation',
      'maxTokens',
      'maxTurns',
      'sandbox',
      'warm',
    ]);
    const set = keptSettings(resolveSettings({ sparseWorktrees: true, maxUsd: 3, ttl: '1h', denyTools: ['x'] }));
    expect(set).toMatchObject({ sparseWorktrees: true, maxUsd: 3, denyTools: ['x'] });
    expect(set).not.toHaveProperty('ttl');
    // the spend cap is resume's caller's (`resume --max-usd`); the others come back
    expect(settingsFromManifest(set)).toEqual({ ...defaults, sparseWorktrees: true, denyTools: ['x'] });
  });

  it('a manifest older than some settings still resumes, each missing one at its default, the others as written', () => {
    const read = manifestSchema.shape.engine.parse(OLDER_ENGINE);
    const resumed = resolveEngineOptions({ ...local, ...engineOptionsOf(read) });
    expect(resumed).toMatchObject({
      maxTurns: 7,
      maxTokens: 900,
      warm: 'prewarm',
      sandbox: 'none',
      isolation: 'none',
      sparseWorktrees: false,
      concurrency: 16,
      toolSet: 'auto',
      denyTools: [],
      network: false,
    });
    // and it writes back the manifest it came from, plus the settings it now has
    expect(manifestEngine(resumed)).toMatchObject({ ...OLDER_ENGINE, concurrency: 16 });
  });

  it('a manifest that kept sparse worktrees resumes with them', () => {
    const read = manifestSchema.shape.engine.parse({ ...OLDER_ENGINE, isolation: 'worktree', sparseWorktrees: true });
    const resumed = resolveEngineOptions({ ...local, ...engineOptionsOf(read), runsDir: '/tmp/runs' });
    expect(resumed.sparseWorktrees).toBe(true);
    expect(manifestEngine(resumed)).toMatchObject({ isolation: 'worktree', sparseWorktrees: true });
  });

  it('refuses a manifest whose kept setting its schema refuses', () => {
    expect(manifestSchema.shape.engine.safeParse({ ...OLDER_ENGINE, sandbox: 'docker' }).success).toBe(false);
    expect(manifestSchema.shape.engine.safeParse({ ...OLDER_ENGINE, maxTurns: -1 }).success).toBe(false);
    expect(z.object(manifestSchema.shape.engine.shape).safeParse(OLDER_ENGINE).success).toBe(true);
  });
});
