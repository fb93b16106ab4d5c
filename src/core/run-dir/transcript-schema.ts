import { z } from 'zod';
import { FORK_END_STATUSES } from '../util/fork-status.ts';

// The records of a fork's JSONL transcript as the resume reader needs them (transcript.ts
// writes them). Loose objects: extra fields from newer versions are kept, never refused.
const count = z.number().int().nonnegative();
const turnNumber = z.number().int().positive();
const usage = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_read_input_tokens: count,
  cache_creation_input_tokens: count,
});
const request = z.looseObject({ turn: turnNumber, messageId: z.string(), usage });

export const transcriptRecordSchemas = {
  start: z.looseObject({ forkId: z.string().min(1), prefixSha256: z.string().min(1), directive: z.string() }),
  'request-start': z.looseObject({ turn: turnNumber, attempt: count }),
  attempt: z.looseObject({
    turn: turnNumber,
    attempt: count,
    status: z.enum(['billed', 'not-billed']),
    request: request.optional(),
  }),
  turn: z.looseObject({
    turn: turnNumber,
    assistant: z.looseObject({
      role: z.literal('assistant'),
      content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
    }),
    request,
  }),
  'tool-start': z.looseObject({ turn: turnNumber, id: z.string().min(1), name: z.string() }),
  'tool-end': z.looseObject({ turn: turnNumber, id: z.string().min(1), isError: z.boolean(), content: z.string() }),
  prompt: z.looseObject({
    turn: count,
    reason: z.enum(['continue', 'check', 'retry', 'fixup', 'output']),
    text: z.string(),
  }),
  check: z.looseObject({
    turn: turnNumber,
    attempt: turnNumber,
    command: z.string(),
    exitCode: z.number().int().nullable(),
    timedOut: z.boolean(),
    durationMs: z.number().nonnegative(),
    outputTail: z.string(),
    passed: z.boolean(),
  }),
  end: z.looseObject({
    status: z.enum(FORK_END_STATUSES),
    turns: count,
    toolCalls: count,
    finalText: z.string(),
    error: z.looseObject({ code: z.string(), message: z.string() }).optional(),
    job: z.string().optional(),
  }),
} as const;

export type TranscriptRecordType = keyof typeof transcriptRecordSchemas;
