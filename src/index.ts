// The public API of forkcache: named exports only, types with `export type`. Everything not
// listed here (frozen-prefix bytes, the SharedArrayBuffer layout, the worker protocol, the fork
// loop, tool internals, the run directory's files) is internal and may change in any release.
// test/public-api.test.ts snapshots this list: a change to it must be deliberate. An old name of
// a concept stays one release, marked `@deprecated` where it is declared (CHANGELOG.md).

// the provider adapters (src/providers/registry.ts), handed to core as the package loads: core
// never imports a provider (issue 46)
import { useProviders } from './core/engine/providers-registered.ts';
import { PROVIDERS } from './providers/registry.ts';

useProviders(PROVIDERS);

// errors: switch on `code`; `isForkcacheError` works across copies of the package
export { ERROR_CODES, ForkcacheError, hasCode, isForkcacheError } from './core/util/errors.ts';
export type { ErrorCode, WireError } from './core/util/errors.ts';
export { VERSION } from './core/util/version.ts';

// the engine
export { ForkEngine } from './core/engine/engine.ts';
export type { FanOutOptions, ResumeOptions } from './core/engine/fan-out/types.ts';
export type { FanOutCheck } from './core/engine/fan-out/types.ts';
export type { EngineSettings, ForkEngineOptions } from './core/engine/options.ts';
export type { FanOut, FanOutResult, FanOutSummary } from './core/agent/fork-handle.ts';
export type { FanOutEvent, ForkHandle, ForkResult, ForkSummary } from './core/agent/fork-handle.ts';
export { progressOf } from './core/agent/fan-out-progress.ts';
export type { FanOutProgress, ForkProgressState } from './core/agent/fan-out-progress.ts';
export type { CheckRecord, ForkOutcome, LoopEvent } from './core/loop/types.ts';
// how a fork ended: only `completed` is success
export { FORK_END_STATUSES, RETRYABLE_STATUSES } from './core/util/fork-status.ts';
export type { AgentStatus, ForkEndStatus, ForkStatus, RetryableStatus } from './core/util/fork-status.ts';
export { WARM_STRATEGIES } from './core/settings/engine-settings.ts';
export type { WarmStrategy } from './core/settings/engine-settings.ts';
export { PROVIDER_IDS } from './providers/registry.ts';
export type { ProviderId } from './core/wire/providers.ts';
export type { CacheTtl } from './core/wire/cache.ts';
export { systemClock } from './core/util/clock.ts';
export type { Clock } from './core/util/clock.ts';
export type {
  PermissionAnswer,
  PermissionDecision,
  PermissionHandler,
  PermissionPolicy,
  PermissionRequest,
} from './core/tools/permissions.ts';
export type { ExecutableToolName, ToolName } from './core/wire/tool-names.ts';
export type { ToolLimits } from './core/tools/limits.ts';
export type { HostTool, HostToolContext, HostToolOutput } from './core/tools/host-tools.ts';
export type { StandardSchemaV1 } from './core/tools/standard-schema.ts';

// the agent tool, and a parent loop built on it
export { AGENT_PLACEHOLDER_RESULT, AgentTool, DEFAULT_AUTO_BACKGROUND_MS } from './core/agent/agent-tool.ts';
export type { AgentToolOptions, SpawnCallResult, SpawnTurn } from './core/agent/agent-tool.ts';
export type { AgentType } from './core/agent/agent-type.ts';
export { runParentAgent } from './core/agent/parent-agent.ts';
export type { ParentAgentOptions, ParentAgentResult } from './core/agent/parent-agent.ts';
export { createToolExecutor } from './core/tools/executor.ts';
export type { ToolExecutor, ToolExecutorOptions } from './core/tools/executor.ts';
export { TOOL_DECLARATIONS } from './core/tools/declarations.ts';

// the parent snapshot and the fork plan
export { captureSnapshot } from './core/fork/snapshot.ts';
export type { ParentSnapshot } from './core/fork/snapshot.ts';
export type { ForkChild, ForkLayout, ForkPlan } from './core/fork/layouts.ts';

// the ledger and its summary
export { UsageLedger } from './core/ledger/ledger.ts';
export type { AgentTotals, LedgerOptions, UsageTotals } from './core/ledger/ledger.ts';
export type { FanOutCacheLine, LedgerSummary } from './core/ledger/summary.ts';
export type { AgentKind } from './core/ledger/tree.ts';
export type { Usage } from './core/ledger/usage.ts';
export type { CostBreakdown } from './core/ledger/cost.ts';

// the model catalogue: dated prices and limits, overridable
export { BUILTIN_CATALOGUE, findModel, loadCatalogue, mergeCatalogue } from './core/models/catalogue.ts';
export type { ModelCatalogue, ModelEntry, PriceRow, PriceTier } from './core/models/catalogue.ts';
export { checkModel } from './core/models/status.ts';
export type { ModelCheck } from './core/models/status.ts';
export type { ModelStatus } from './core/models/schema.ts';
export { costUsd } from './core/ledger/cost.ts';

// the local emulator, the scripted models and the test clock: `forkcache/testing`
