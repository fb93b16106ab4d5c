// The public API of forkcache: named exports only, types with `export type`. Everything not
// listed here (frozen-prefix bytes, the SharedArrayBuffer layout, the worker protocol, the fork
// loop, tool internals, the run directory's files) is internal and may change in any release.
// test/public-api.test.ts snapshots this list: a change to it must be deliberate. Names marked
// `@deprecated` where they are declared (`ForkHandleStatus`, `ForkTotals`, `FanoutCacheSummary`)
// are the old names of one concept, kept for one release (CHANGELOG.md).

// errors: switch on `code`; `isForkcacheError` works across copies of the package
export { ERROR_CODES, ForkcacheError, hasCode, isForkcacheError } from './errors.ts';
export type { ErrorCode, WireError } from './errors.ts';
export { VERSION } from './version.ts';

// the engine
export { ForkEngine } from './engine/engine.ts';
export type { FanOutOptions, ResumeOptions } from './engine/fan-out/types.ts';
export type { FanOutCheck } from './engine/fan-out/types.ts';
export type { EngineSettings, ForkEngineOptions } from './engine/options.ts';
export type { FanOut, FanOutResult, FanOutSummary } from './agent/fork-handle.ts';
export type { FanOutEvent, ForkHandle, ForkHandleStatus, ForkResult, ForkSummary } from './agent/fork-handle.ts';
export { progressOf } from './agent/fan-out-progress.ts';
export type { FanOutProgress, ForkProgressState } from './agent/fan-out-progress.ts';
export type { CheckRecord, ForkOutcome, LoopEvent } from './loop/types.ts';
// how a fork ended: only `completed` is success
export { FORK_END_STATUSES, RETRYABLE_STATUSES } from './fork-status.ts';
export type { AgentStatus, ForkEndStatus, ForkStatus, RetryableStatus } from './fork-status.ts';
export { WARM_STRATEGIES } from './engine/warm-gate.ts';
export type { WarmStrategy } from './engine/warm-gate.ts';
export { PROVIDER_IDS } from './wire/providers.ts';
export type { ProviderId } from './wire/providers.ts';
export type { CacheTtl } from './wire/cache.ts';
export { systemClock } from './clock.ts';
export type { Clock } from './clock.ts';
export type {
  PermissionAnswer,
  PermissionDecision,
  PermissionHandler,
  PermissionPolicy,
  PermissionRequest,
} from './tools/permissions.ts';
export type { ExecutableToolName, ToolName } from './wire/tool-names.ts';
export type { ToolLimits } from './tools/limits.ts';
export type { HostTool, HostToolContext, HostToolOutput } from './tools/host-tools.ts';
export type { StandardSchemaV1 } from './tools/standard-schema.ts';

// the agent tool, and a parent loop built on it
export { AGENT_PLACEHOLDER_RESULT, AgentTool, DEFAULT_AUTO_BACKGROUND_MS } from './agent/agent-tool.ts';
export type { AgentToolOptions, SpawnCallResult, SpawnTurn } from './agent/agent-tool.ts';
export type { AgentType } from './agent/agent-type.ts';
export { runParentAgent } from './agent/parent-agent.ts';
export type { ParentAgentOptions, ParentAgentResult } from './agent/parent-agent.ts';
export { createToolExecutor } from './tools/executor.ts';
export type { ToolExecutor, ToolExecutorOptions } from './tools/executor.ts';
export { TOOL_DECLARATIONS } from './tools/declarations.ts';

// the parent snapshot and the fork plan
export { captureSnapshot } from './fork/snapshot.ts';
export type { ParentSnapshot } from './fork/snapshot.ts';
export type { ForkChild, ForkLayout, ForkPlan } from './fork/layouts.ts';

// the ledger and its summary
export { UsageLedger } from './ledger/ledger.ts';
export type { AgentTotals, ForkTotals, LedgerOptions, UsageTotals } from './ledger/ledger.ts';
export type { FanOutCacheLine, FanoutCacheSummary, LedgerSummary } from './ledger/summary.ts';
export type { AgentKind } from './ledger/tree.ts';
export type { Usage } from './ledger/usage.ts';
export type { CostBreakdown } from './ledger/cost.ts';

// the model catalogue: dated prices and limits, overridable
export { BUILTIN_CATALOGUE, findModel, loadCatalogue, mergeCatalogue } from './models/catalogue.ts';
export type { ModelCatalogue, ModelEntry, PriceRow, PriceTier } from './models/catalogue.ts';
export { checkModel } from './models/status.ts';
export type { ModelCheck } from './models/status.ts';
export type { ModelStatus } from './models/schema.ts';
export { costUsd } from './ledger/cost.ts';

// the local emulator, the scripted models and the test clock: `forkcache/testing`
