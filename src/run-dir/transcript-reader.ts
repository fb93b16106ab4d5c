import { existsSync } from 'node:fs';
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import type { ErrorCode } from '../errors.ts';
import type { RequestRecord } from '../loop/types.ts';
import { parseOrThrow } from '../validation.ts';
import { readJsonl, recordType } from './jsonl.ts';
import type { TranscriptRecord } from './transcript.ts';

export interface TranscriptTool {
  id: string;
  name: string;
  /** Undefined: the tool started and never finished (the process stopped while it ran). */
  result: { isError: boolean; content: string } | undefined;
}

export interface TranscriptTurn {
  turn: number;
  assistant: Anthropic.MessageParam;
  request: RequestRecord;
  tools: TranscriptTool[];
}

export interface ReadTranscript {
  forkId: string | undefined;
  prefixSha256: string | undefined;
  directive: string | undefined;
  turns: TranscriptTurn[];
  end: Extract<TranscriptRecord, { type: 'end' }> | undefined;
}

const count = z.number().int().nonnegative();

/**
 * The records whose fields resume and the report both rely on, checked (loosely: records may
 * gain fields). Turn and tool records are the writer's own and go to the model as written.
 */
const checked = {
  start: z.looseObject({ forkId: z.string(), prefixSha256: z.string(), directive: z.string() }),
  end: z.looseObject({ status: z.enum(['completed', 'failed', 'cancelled']), turns: count, toolCalls: count, finalText: z.string() }),
} as const;

/**
 * Read a fork's JSONL transcript (none yet: no turns). The one reader of transcripts, for
 * resume, the distributed hosts and the report. A last line cut short by a crash is ignored,
 * any other malformed line is an error naming the file and line (the rule of `readJsonl`); a
 * `start` or `end` record with bad fields is an error naming the line, with `code`. A later
 * `start` (a run appended to the file) clears the `end` before it.
 */
export function readTranscript(path: string, code: ErrorCode = 'INVALID_ARGUMENT'): ReadTranscript {
  const out: ReadTranscript = { forkId: undefined, prefixSha256: undefined, directive: undefined, turns: [], end: undefined };
  if (!existsSync(path)) return out;
  for (const { line, value } of readJsonl(path, 'transcript', code)) {
    const type = recordType(value);
    const schema: z.ZodType | undefined = type === 'start' || type === 'end' ? checked[type] : undefined;
    if (schema) parseOrThrow(schema, value, code, `transcript ${path}:${line}`);
    const record = value as TranscriptRecord;
    switch (record.type) {
      case 'start':
        out.forkId = record.forkId;
        out.prefixSha256 = record.prefixSha256;
        out.directive = record.directive;
        out.end = undefined;
        break;
      case 'turn':
        out.turns.push({ turn: record.turn, assistant: record.assistant as Anthropic.MessageParam, request: record.request as RequestRecord, tools: [] });
        break;
      case 'tool-start':
        out.turns.at(-1)?.tools.push({ id: record.id, name: record.name, result: undefined });
        break;
      case 'tool-end': {
        const tool = out.turns.at(-1)?.tools.find((t) => t.id === record.id);
        if (tool) tool.result = { isError: record.isError, content: record.content };
        break;
      }
      case 'end':
        out.end = record;
        break;
      default:
        break; // newer record kinds: not needed here
    }
  }
  return out;
}
