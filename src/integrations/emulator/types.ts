/**
 * Wire shapes of the Messages API as the emulator sees them. Requests are kept as the JSON the
 * client sent (key order preserved, unknown fields kept): the cache hashes those bytes, so the
 * emulator never rebuilds a request from a schema's output.
 */

import type { CacheTtl } from '../../core/wire/cache.ts';

export type { CacheTtl };

export interface CacheControl {
  type: 'ephemeral';
  ttl?: CacheTtl;
}

/** Any content block, tool definition or system block: a JSON object with a `type`. */
export interface RequestBlock {
  type: string;
  cache_control?: CacheControl | null;
  [field: string]: unknown;
}

export interface TextBlockParam extends RequestBlock {
  type: 'text';
  text: string;
}

/** `system` turns inside `messages` are GA in API 2026-10-21 (the SDK's `SystemMessageParam`). */
export type Role = 'user' | 'assistant' | 'system';

export interface RequestMessage {
  role: Role;
  /** Optional on a system turn that carries only `output_config`. */
  content: string | RequestBlock[];
  /** System turns only: per-turn effort. */
  output_config?: { effort?: string | null } | null;
  clear_at?: 'next_user_message' | 'never' | null;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  type?: string;
  cache_control?: CacheControl | null;
  [field: string]: unknown;
}

export interface ToolChoice {
  type: 'auto' | 'any' | 'tool' | 'none';
  name?: string;
  disable_parallel_tool_use?: boolean;
}

export interface ThinkingConfig {
  type: 'enabled' | 'disabled' | 'adaptive' | 'between_tools';
  budget_tokens?: number;
  display?: 'summarized' | 'omitted' | 'updates' | null;
  block_binding?: { prefix_mismatch_behavior?: 'error' | 'drop_block' | null } | null;
}

/** A `POST /v1/messages` body (also `count_tokens`, without `max_tokens`). */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: RequestMessage[];
  system?: string | TextBlockParam[];
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  thinking?: ThinkingConfig;
  stop_sequences?: string[];
  stream?: boolean;
  metadata?: Record<string, unknown>;
  cache_control?: CacheControl | null;
  output_config?: Record<string, unknown>;
  diagnostics?: { previous_message_id?: string | null } | null;
  speed?: 'standard' | 'fast' | null;
  inference_geo?: string | null;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  [field: string]: unknown;
}

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

export type ResponseBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface ResponseUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
  /** Output tokens of the thinking block (always ≤ output_tokens). */
  output_tokens_details: { thinking_tokens: number };
  service_tier: 'standard';
  /** Where inference ran: the request's `inference_geo`, else null. */
  inference_geo: string | null;
  speed: 'standard' | 'fast';
  /** The emulator runs no server tools. */
  server_tool_use: null;
}

export type CacheMissReason =
  | {
      type: 'model_changed' | 'system_changed' | 'tools_changed' | 'messages_changed';
      cache_missed_input_tokens: number;
    }
  | { type: 'previous_message_not_found' | 'unavailable' };

export interface ResponseMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ResponseBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  usage: ResponseUsage;
  diagnostics: { cache_miss_reason: CacheMissReason } | null;
}
