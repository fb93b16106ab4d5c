import { captureSnapshot, type ParentSnapshot } from '../../../src/core/fork/snapshot.ts';

/** Three tools of the embedder's own: no built-in executor runs any of them. */
export const HOST_TOOL_DECLARATIONS = [
  {
    name: 'search_tickets',
    description: 'Search the ticket tracker; returns matching ticket ids and titles.',
    input_schema: {
      type: 'object',
      properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 3 } },
      required: ['query'],
    },
  },
  {
    name: 'lookup_user',
    description: 'Look a user up by name.',
    input_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
  {
    name: 'add_comment',
    description: 'Add a comment to a ticket (visible to the customer).',
    input_schema: {
      type: 'object',
      properties: { ticket: { type: 'string' }, body: { type: 'string' }, internal: { type: 'boolean' } },
      required: ['ticket', 'body'],
    },
  },
];

/** A parent whose tool array is the three tools alone, its system prompt long enough to be cached. */
export function hostParent(tag: string): ParentSnapshot {
  return captureSnapshot({
    model: 'claude-sonnet-4-6',
    max_tokens: 4096,
    system: [{ type: 'text', text: `${tag} ${'You are a support engineer triaging tickets. '.repeat(300)}` }],
    tools: HOST_TOOL_DECLARATIONS,
    messages: [{ role: 'user', content: 'Triage the open tickets, one area per helper.' }],
  });
}
