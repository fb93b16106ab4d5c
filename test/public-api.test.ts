import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { withBenchOptions } from '../src/core/engine/bench-options.ts';
import { resolveEngineOptions } from '../src/core/engine/options.ts';
import { type ForkcacheError, hasCode } from '../src/core/util/errors.ts';
import * as api from '../src/index.ts';
import * as testing from '../src/testing.ts';

/**
 * The names an entry file exports, values and types apart, read from its `export { … }`
 * statements (the entries re-export by name only; `export *` would hide what is public).
 */
function exportedNames(file: string): { values: string[]; types: string[] } {
  const source = ts.createSourceFile(
    file,
    readFileSync(new URL(`../src/${file}`, import.meta.url), 'utf8'),
    ts.ScriptTarget.Latest,
  );
  const values: string[] = [];
  const types: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) {
      expect(
        ts.getModifiers(statement as ts.HasModifiers)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false,
        `${file}: only re-exports`,
      ).toBe(false);
      continue;
    }
    const clause = statement.exportClause;
    if (!clause || !ts.isNamedExports(clause))
      throw new Error(`${file}: \`export *\` hides what is public; name each export`);
    for (const spec of clause.elements) (statement.isTypeOnly || spec.isTypeOnly ? types : values).push(spec.name.text);
  }
  return { values: values.sort(), types: types.sort() };
}

describe('the public API', () => {
  it('exports exactly these names from forkcache (a change here must be deliberate)', () => {
    const { values, types } = exportedNames('index.ts');
    // what the module really exports at run time is what the file says
    expect(Object.keys(api).sort()).toEqual(values);
    expect(values).toMatchInlineSnapshot(`
      [
        "AGENT_PLACEHOLDER_RESULT",
        "AgentTool",
        "BUILTIN_CATALOGUE",
        "DEFAULT_AUTO_BACKGROUND_MS",
        "ERROR_CODES",
        "FORK_END_STATUSES",
        "ForkEngine",
        "ForkcacheError",
        "PROVIDER_IDS",
        "RETRYABLE_STATUSES",
        "TOOL_DECLARATIONS",
        "UsageLedger",
        "VERSION",
        "WARM_STRATEGIES",
        "captureSnapshot",
        "checkModel",
        "costUsd",
        "createToolExecutor",
        "findModel",
        "hasCode",
        "isForkcacheError",
        "loadCatalogue",
        "mergeCatalogue",
        "progressOf",
        "runParentAgent",
        "systemClock",
      ]
    `);
    expect(types).toMatchInlineSnapshot(`
      [
        "AgentKind",
        "AgentStatus",
        "AgentToolOptions",
        "AgentTotals",
        "AgentType",
        "CacheTtl",
        "CheckRecord",
        "Clock",
        "CostBreakdown",
        "EngineSettings",
        "ErrorCode",
        "ExecutableToolName",
        "FanOut",
        "FanOutCacheLine",
        "FanOutCheck",
        "FanOutEvent",
        "FanOutOptions",
        "FanOutProgress",
        "FanOutResult",
        "FanOutSummary",
        "ForkChild",
        "ForkEndStatus",
        "ForkEngineOptions",
        "ForkHandle",
        "ForkLayout",
        "ForkOutcome",
        "ForkPlan",
        "ForkProgressState",
        "ForkResult",
        "ForkStatus",
        "ForkSummary",
        "HostTool",
        "HostToolContext",
        "HostToolOutput",
        "LedgerOptions",
        "LedgerSummary",
        "LoopEvent",
        "ModelCatalogue",
        "ModelCheck",
        "ModelEntry",
        "ModelStatus",
        "ParentAgentOptions",
        "ParentAgentResult",
        "ParentSnapshot",
        "PermissionAnswer",
        "PermissionDecision",
        "PermissionHandler",
        "PermissionPolicy",
        "PermissionRequest",
        "PriceRow",
        "PriceTier",
        "ProviderId",
        "ResumeOptions",
        "RetryableStatus",
        "SpawnCallResult",
        "SpawnTurn",
        "StandardSchemaV1",
        "ToolExecutor",
        "ToolExecutorOptions",
        "ToolLimits",
        "ToolName",
        "Usage",
        "UsageTotals",
        "WarmStrategy",
        "WireError",
      ]
    `);
  });

  it('exports exactly these names from forkcache/ai-sdk, which loads without the ai packages', async () => {
    const { values, types } = exportedNames('ai-sdk.ts');
    const aiSdk = await import('../src/ai-sdk.ts');
    expect(Object.keys(aiSdk).sort()).toEqual(values);
    expect(values).toEqual(['createForkcache']);
    expect(types).toEqual(
      [
        'AiSdkTool',
        'AiSdkToolCallOptions',
        'BackgroundStarted',
        'ForkTool',
        'ForkToolFork',
        'ForkToolOutput',
        'ForkToolProgress',
        'ForkcacheAiSdkOptions',
        'ForkToolOptions',
        'PendingFanOut',
        'ReportMessage',
      ].sort(),
    );
    // no module of it imports `ai` or a provider: a consumer without them compiles and runs
    const sources = ['ai-sdk.ts', 'integrations/ai-sdk/fork-tool.ts', 'integrations/ai-sdk/capture.ts'].map((f) =>
      readFileSync(new URL(`../src/${f}`, import.meta.url), 'utf8'),
    );
    for (const source of sources) expect(source).not.toMatch(/from '(ai|@ai-sdk\/[^']+)'/);
  });

  it('exports exactly these test doubles from forkcache/testing', () => {
    const { values, types } = exportedNames('testing.ts');
    expect(Object.keys(testing).sort()).toEqual(values);
    expect(values).toMatchInlineSnapshot(`
      [
        "BUILTIN_SCRIPTS",
        "FAULT_HEADER",
        "FAULT_KINDS",
        "LATENCY_PROFILES",
        "ManualClock",
        "ReplayModel",
        "SCRIPT_HEADER",
        "approximateTokenizer",
        "claudeTokenizer",
        "echoModel",
        "formatReport",
        "parseDirective",
        "parseFaultSpec",
        "refactorModel",
        "scaledTokenizer",
        "startEmulator",
      ]
    `);
    expect(types).toMatchInlineSnapshot(`
      [
        "Directive",
        "Emulator",
        "EmulatorEvent",
        "EmulatorEventName",
        "EmulatorOptions",
        "EmulatorStats",
        "FaultKind",
        "FaultRule",
        "LatencyName",
        "LatencyProfile",
        "ReplayFixture",
        "ReplayOptions",
        "ScriptBlock",
        "ScriptInput",
        "ScriptedModel",
        "ScriptedTurn",
        "Tokenizer",
      ]
    `);
  });

  it('has no two names that differ only in case', () => {
    const names = [...exportedNames('index.ts').values, ...exportedNames('index.ts').types];
    const lower = names.map((n) => n.toLowerCase());
    expect(lower.filter((n, i) => lower.indexOf(n) !== i)).toEqual([]);
  });

  it('has no testHooks option: a plain option of that name is rejected', () => {
    let caught: unknown;
    try {
      resolveEngineOptions({ testHooks: { exitWorker: { forkIndex: 0, afterTurn: 1 } } } as never);
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'INVALID_OPTION')).toBe(true);
    expect((caught as Error).message).toMatch(/testHooks/);
  });

  it('takes runDir, the deprecated name of runsDir, for one release; both at odds are refused', () => {
    const local = { baseURL: 'http://127.0.0.1:1', apiKey: 'k' };
    expect(resolveEngineOptions({ ...local, runsDir: 'runs' }).runsDir).toBe(resolve('runs'));
    expect(resolveEngineOptions({ ...local, runDir: 'runs' }).runsDir).toBe(resolve('runs'));
    expect(resolveEngineOptions({ ...local, runDir: 'runs', runsDir: 'runs' }).runsDir).toBe(resolve('runs'));
    let caught: unknown;
    try {
      resolveEngineOptions({ ...local, runDir: 'a', runsDir: 'b' });
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'INVALID_OPTION')).toBe(true);
    expect((caught as ForkcacheError).data).toEqual({ field: 'runDir' });
  });

  it('has no bench options: markers and slotFill come only through withBenchOptions', () => {
    const local = { baseURL: 'http://127.0.0.1:1', apiKey: 'k' };
    for (const option of [{ markers: 'none' }, { slotFill: 'copy' }]) {
      let caught: unknown;
      try {
        resolveEngineOptions({ ...local, ...option } as never);
      } catch (err) {
        caught = err;
      }
      expect(hasCode(caught, 'INVALID_OPTION'), JSON.stringify(option)).toBe(true);
    }
    const bench = resolveEngineOptions(withBenchOptions(local, { markers: 'none', slotFill: 'copy' }));
    expect([bench.markers, bench.slotFill]).toEqual(['none', 'copy']);
    const plain = resolveEngineOptions(local);
    expect([plain.markers, plain.slotFill]).toEqual(['boundary', 'auto']);
  });
});
