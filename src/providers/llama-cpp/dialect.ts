import type { ChatDialect } from '../../core/wire/chat-dialect.ts';
import { PLAIN_CHAT } from '../openai/adapter.ts';

/**
 * llama-server's Chat Completions: automatic caching per slot, no markers. `cache_prompt` is
 * the default on recent builds and is sent anyway: an older server would otherwise recompute
 * every prompt.
 */
export const LLAMA_CHAT: ChatDialect = { ...PLAIN_CHAT, requestFields: { cache_prompt: true } };
