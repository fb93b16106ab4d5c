import { tool } from 'ai';
import { z } from 'zod';

export interface AppToolCall {
  tool: string;
  toolCallId: string;
  input: unknown;
  aborts: boolean;
}

/** An AI SDK app's own three tools, as an app writes them; every call is recorded in `calls`. */
export function appTools(calls: AppToolCall[]) {
  const record = (name: string, input: unknown, options: { toolCallId: string; abortSignal?: AbortSignal }): void => {
    calls.push({
      tool: name,
      toolCallId: options.toolCallId,
      input,
      aborts: options.abortSignal instanceof AbortSignal,
    });
  };
  return {
    search_tickets: tool({
      description: 'Search the ticket tracker; returns matching ticket ids and titles.',
      inputSchema: z.object({ query: z.string(), limit: z.number().int().min(3) }),
      execute: async (input, options) => {
        record('search_tickets', input, options);
        return { tickets: [{ id: 'T-17', title: `${input.query}: login fails` }] };
      },
    }),
    lookup_user: tool({
      description: 'Look a user up by name.',
      inputSchema: z.object({ name: z.string() }),
      execute: async (input, options) => {
        record('lookup_user', input, options);
        return `user ${input.name}: plan pro`;
      },
    }),
    add_comment: tool({
      description: 'Add a comment to a ticket.',
      inputSchema: z.object({ ticket: z.string(), body: z.string() }),
      execute: async (input, options) => {
        record('add_comment', input, options);
        return `comment added to ${input.ticket}`;
      },
    }),
  };
}

/** A system prompt long enough to be cached by every provider's rule (over 1,024 tokens). */
export const INSTRUCTIONS = 'You are a support engineer triaging tickets. '.repeat(300);
