// The public API of forkcache. Named exports only; types with `export type`.
export { ForkcacheError, ERROR_CODES, hasCode, toWireError, fromWireError } from './errors.ts';
export type { ErrorCode, WireError } from './errors.ts';
export { DEFAULT_MODEL_TABLE, MODEL_TABLE_DATE, findModel, requireModel, loadModelTable, mergeModelTable } from './ledger/models.ts';
export type { ModelInfo, ModelTable } from './ledger/models.ts';
export { VERSION } from './version.ts';
export {
  FORK_BOILERPLATE_TAG,
  FORK_PLACEHOLDER_RESULT,
  FORK_QUERY_SOURCE,
  SPAWN_TOOL_NAME,
  REPORT_FIELDS,
} from './fork/constants.ts';
export { captureSnapshot, fallbackSnapshot, snapshotOrFallback, CACHE_SETTING_KEYS } from './fork/snapshot.ts';
export type { ParentSnapshot, FallbackOptions } from './fork/snapshot.ts';
export { FORK_BOILERPLATE, wrapDirective, escapeDirective, validateDirective, unwrapDirective } from './fork/directive.ts';
export type { WrapOptions } from './fork/directive.ts';
export { planFork, childMessages, FORK_LAYOUTS } from './fork/layouts.ts';
export type { ForkChild, ForkLayout, ForkPlan, HistoryCase } from './fork/layouts.ts';
export { isForkChild, assertMaySpawn, decideSpawn, FORK_RECURSION_MESSAGE, GENERAL_PURPOSE_AGENT } from './fork/guard.ts';
export type { ForkContext, SpawnDecision, SpawnRequest } from './fork/guard.ts';
export { parseReport } from './fork/report.ts';
export type { ForkReport, ReportField } from './fork/report.ts';
export { FORK_FALLBACK_SYSTEM_PROMPT } from './fork/fallback.ts';
export { freeze, renderHead } from './prefix/freeze.ts';
export type { FreezeOptions, FrozenPrefix } from './prefix/freeze.ts';
export { childRequestBody, childRequestObject, markChild, serializeSuffix } from './prefix/body.ts';
export type { PerRequest, ChildBodyOptions } from './prefix/body.ts';
export { attachFrozenPrefix, attachCount, readFrozenHeader } from './prefix/sab.ts';
export type { AttachedPrefix, HeadEnd } from './prefix/sab.ts';
export { assertStartsWithHead, driftCheckedFetch, firstDifference } from './prefix/drift.ts';
export type { DriftCheckOptions } from './prefix/drift.ts';
export type { CacheTtl } from './prefix/markers.ts';
export { ManualClock, systemClock } from './clock.ts';
export type { Clock } from './clock.ts';
export { TOOL_DECLARATIONS } from './tools/declarations.ts';
export { TOOL_NAMES, FILE_TOOL_NAMES, EXECUTABLE_TOOL_NAMES } from './tools/names.ts';
export type { ToolName, ExecutableToolName } from './tools/names.ts';
export { createToolExecutor } from './tools/executor.ts';
export type { ToolExecutor, ToolExecutorOptions, ExecuteOptions } from './tools/executor.ts';
export type { ToolResult, ToolErrorCode } from './tools/result.ts';
export { DEFAULT_TOOL_LIMITS } from './tools/limits.ts';
export type { ToolLimits } from './tools/limits.ts';
export { WorkspaceJail } from './tools/jail.ts';
export type { JailedPath, JailMode } from './tools/jail.ts';
export { normalizeUsage, addUsage, sumUsage, totalInputTokens, ZERO_USAGE } from './ledger/usage.ts';
export type { Usage, UsageInput, CacheCreationSplit } from './ledger/usage.ts';
export { costUsd, costNano, ratesFor, nanoToUsd } from './ledger/cost.ts';
export type { CostBreakdown, Rates } from './ledger/cost.ts';
export { UsageLedger } from './ledger/ledger.ts';
export type { LedgerOptions, ForkTotals, UsageTotals } from './ledger/ledger.ts';
export type { LedgerRecord, LedgerRecordInput, RequestKind } from './ledger/records.ts';
export type { AgentKind, ForkStatus } from './ledger/tree.ts';
export type { LedgerSummary, FanoutSummary } from './ledger/summary.ts';
export { forkEconomics, breakEvenChildren, DEFAULT_FRESH_AGENT_TOKENS, DEFAULT_ECONOMICS_MODEL } from './ledger/economics.ts';
export type { EconomicsInput, EconomicsResult, ChildCost, StrategyCost, EconomicsConvention, EconomicsTtl } from './ledger/economics.ts';
export { formatEconomics } from './ledger/economics-format.ts';
export { ForkEngine } from './engine/engine.ts';
export type { FanOutOptions } from './engine/engine.ts';
export type { ForkEngineOptions } from './engine/options.ts';
export type { FanOut, FanOutResult, FanOutSummary } from './engine/fan-out.ts';
export type { FanOutEvent, ForkHandle, ForkHandleStatus, ForkResult } from './engine/fork-handle.ts';
export { WARM_STRATEGIES, WarmGate } from './engine/warm-gate.ts';
export type { WarmStrategy } from './engine/warm-gate.ts';
export { formatTaskNotification, escapeXml } from './engine/notification.ts';
export { runParentAgent } from './engine/parent-agent.ts';
export type { ParentAgentOptions, ParentAgentResult } from './engine/parent-agent.ts';
export { AgentTool, AGENT_PLACEHOLDER_RESULT, DEFAULT_AUTO_BACKGROUND_MS } from './engine/agent-tool.ts';
export type { AgentToolOptions, SpawnTurn, SpawnCallResult } from './engine/agent-tool.ts';
export type { AgentType } from './engine/agent-type.ts';
export { readTranscript, resumeMessages, INTERRUPTED_TOOL_MESSAGE, NOT_STARTED_TOOL_MESSAGE } from './engine/transcript-reader.ts';
export { decide as decidePermission, DENY_UNASKED } from './tools/permissions.ts';
export type { PermissionPolicy, PermissionDecision, PermissionRequest, PermissionAnswer, PermissionHandler } from './tools/permissions.ts';
export { runForkLoop, DEFAULT_MAX_TURNS } from './loop/run-fork.ts';
export type { ForkLoopOptions } from './loop/run-fork.ts';
export type { ForkOutcome, ForkStatus as ForkOutcomeStatus, LoopEvent, ModelTransport, RequestGate, GatePermit, RequestRecord } from './loop/types.ts';
export { createAnthropicClient } from './provider/client.ts';
export { streamMessageBytes, sendMessageBytes, countTokensBytes } from './provider/send.ts';
