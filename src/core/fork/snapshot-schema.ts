import { z } from 'zod';
import { CACHE_TTLS } from '../wire/cache.ts';

/**
 * Validation of a parent request at the edge. These schemas only *check*: the snapshot keeps
 * the caller's own objects (cloned), because zod output re-orders and strips keys, and a
 * single re-ordered key changes the bytes every child's cache hit depends on.
 * Unknown block types and unknown fields pass through untouched (the API grows).
 */

const cacheControl = z.looseObject({ type: z.literal('ephemeral'), ttl: z.enum(CACHE_TTLS).optional() });

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl.nullish() });

const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
});

const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
  is_error: z.boolean().optional(),
});

const thinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });
const otherBlock = z.looseObject({ type: z.string().min(1) });

/** A content block: strict for the kinds forkcache reasons about, loose for the rest. */
const contentBlock = z.custom<unknown>().superRefine((value, ctx) => {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  const schema =
    type === 'text'
      ? textBlock
      : type === 'tool_use'
        ? toolUseBlock
        : type === 'tool_result'
          ? toolResultBlock
          : type === 'thinking'
            ? thinkingBlock
            : type === 'redacted_thinking'
              ? redactedThinkingBlock
              : otherBlock;
  const result = schema.safeParse(value);
  if (!result.success) {
    for (const issue of result.error.issues) ctx.addIssue({ ...issue, path: issue.path } as never);
  }
});

const messageSchema = z.looseObject({
  // `system`: a mid-conversation system turn (Claude Code 2.1.3xx sends them; the API accepts them).
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(contentBlock)]),
});

const toolSchema = z.looseObject({ name: z.string().min(1) });

export const snapshotInputSchema = z.looseObject({
  model: z.string().min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(toolSchema).optional(),
  tool_choice: z.looseObject({ type: z.enum(['auto', 'any', 'tool', 'none']) }).optional(),
  thinking: z.looseObject({ type: z.string().min(1) }).optional(),
  output_config: z.record(z.string(), z.unknown()).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().positive().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  context_management: z.record(z.string(), z.unknown()).nullable().optional(),
  speed: z.string().nullable().optional(),
  messages: z.array(messageSchema),
});
