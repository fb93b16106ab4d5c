// Test doubles that users may want too (the emulator, scripted models, a clock moved by hand):
// public on purpose, and only here: `forkcache` itself is the engine.
export { ManualClock } from './core/util/clock.ts';
export { startEmulator } from './integrations/emulator/start.ts';
export { echoModel } from './integrations/emulator/scripts/echo.ts';
export { refactorModel } from './integrations/emulator/scripts/refactor.ts';
export { ReplayModel } from './integrations/emulator/scripts/replay.ts';
export { BUILTIN_SCRIPTS } from './integrations/emulator/scripts/registry.ts';
export { SCRIPT_HEADER } from './integrations/emulator/scripts/types.ts';
export { FAULT_HEADER, FAULT_KINDS, parseFaultSpec } from './integrations/emulator/faults.ts';
export { LATENCY_PROFILES } from './integrations/emulator/latency.ts';
export { claudeTokenizer, approximateTokenizer, scaledTokenizer } from './integrations/emulator/tokens/tokenizer.ts';
export { parseDirective, formatReport } from './integrations/emulator/scripts/directive.ts';
export type { Emulator } from './integrations/emulator/start.ts';
export type { EmulatorOptions } from './integrations/emulator/options.ts';
export type { EmulatorStats } from './integrations/emulator/server/stats.ts';
export type { EmulatorEvent, EmulatorEventName } from './integrations/emulator/server/core.ts';
export type { ScriptedModel, ScriptedTurn, ScriptBlock, ScriptInput } from './integrations/emulator/scripts/types.ts';
export type { ReplayFixture, ReplayOptions } from './integrations/emulator/scripts/replay.ts';
export type { LatencyName, LatencyProfile } from './integrations/emulator/latency.ts';
export type { FaultKind, FaultRule } from './integrations/emulator/faults.ts';
export type { Tokenizer } from './integrations/emulator/tokens/tokenizer.ts';
export type { Directive } from './integrations/emulator/scripts/directive.ts';
