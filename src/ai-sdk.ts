// forkcache/ai-sdk: fork subagents from an AI SDK app's own requests (docs/ai-sdk.md).
export { createForkcache } from './integrations/ai-sdk/fork-tool.ts';
export type {
  AiSdkTool,
  AiSdkToolCallOptions,
  BackgroundStarted,
  ForkcacheAiSdkOptions,
  ForkTool,
  ForkToolOptions,
  ForkToolFork,
  ForkToolOutput,
  ForkToolProgress,
  PendingFanOut,
  ReportMessage,
} from './integrations/ai-sdk/fork-tool.ts';
