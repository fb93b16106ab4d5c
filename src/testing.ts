// Test doubles that users may want too (the emulator, scripted models, a clock moved by hand):
// public on purpose, and only here: `forkcache` itself is the engine.
export { ManualClock } from './clock.ts';
export { startEmulator } from './emulator/start.ts';
export { echoModel } from './emulator/scripts/echo.ts';
export { refactorModel } from './emulator/scripts/refactor.ts';
export { ReplayModel } from './emulator/scripts/replay.ts';
export { BUILTIN_SCRIPTS } from './emulator/scripts/registry.ts';
export { SCRIPT_HEADER } from './emulator/scripts/types.ts';
export { FAULT_HEADER, FAULT_KINDS, parseFaultSpec } from './emulator/faults.ts';
export { LATENCY_PROFILES } from './emulator/latency.ts';
export { claudeTokenizer, approximateTokenizer, scaledTokenizer } from './emulator/tokens/tokenizer.ts';
export { parseDirective, formatReport } from './emulator/scripts/directive.ts';
export type { Emulator } from './emulator/start.ts';
export type { EmulatorOptions } from './emulator/options.ts';
export type { EmulatorStats } from './emulator/server/stats.ts';
export type { EmulatorEvent, EmulatorEventName } from './emulator/server/core.ts';
export type { ScriptedModel, ScriptedTurn, ScriptBlock, ScriptInput } from './emulator/scripts/types.ts';
export type { ReplayFixture, ReplayOptions } from './emulator/scripts/replay.ts';
export type { LatencyName, LatencyProfile } from './emulator/latency.ts';
export type { FaultKind, FaultRule } from './emulator/faults.ts';
export type { Tokenizer } from './emulator/tokens/tokenizer.ts';
export type { Directive } from './emulator/scripts/directive.ts';
