// Test doubles that users may want too (the emulator, scripted models, a clock moved by hand):
// public on purpose, and only here: `forkcache` itself is the engine.
export { ManualClock } from './clock.ts';
export {
  startEmulator,
  echoModel,
  refactorModel,
  ReplayModel,
  BUILTIN_SCRIPTS,
  SCRIPT_HEADER,
  FAULT_HEADER,
  FAULT_KINDS,
  parseFaultSpec,
  LATENCY_PROFILES,
  claudeTokenizer,
  approximateTokenizer,
  scaledTokenizer,
  parseDirective,
  formatReport,
} from './emulator/index.ts';
export type {
  Emulator,
  EmulatorOptions,
  EmulatorStats,
  EmulatorEvent,
  EmulatorEventName,
  ScriptedModel,
  ScriptedTurn,
  ScriptBlock,
  ScriptInput,
  ReplayFixture,
  ReplayOptions,
  LatencyName,
  LatencyProfile,
  FaultKind,
  FaultRule,
  Tokenizer,
  Directive,
} from './emulator/index.ts';
