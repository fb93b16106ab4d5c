import { z } from 'zod';

export type PermissionDecision = 'allow' | 'deny' | 'ask';

/**
 * What a fork may do without asking. Checked in the worker before each tool call, on top of
 * the execution allowlist (a tool outside the allowlist never runs, whatever the policy).
 */
export interface PermissionPolicy {
  /** For tools the policy does not name (default `allow`). */
  default?: PermissionDecision;
  tools?: Record<string, PermissionDecision>;
}

export const permissionPolicySchema = z.strictObject({
  default: z.enum(['allow', 'deny', 'ask']).optional(),
  tools: z.record(z.string(), z.enum(['allow', 'deny', 'ask'])).optional(),
});

export function decide(policy: PermissionPolicy, tool: string): PermissionDecision {
  return policy.tools?.[tool] ?? policy.default ?? 'allow';
}

/** A fork's question to whoever may answer it (an embedder's callback, a person at a terminal). */
export interface PermissionRequest {
  forkId: string;
  tool: string;
  input: unknown;
}

export interface PermissionAnswer {
  allow: boolean;
  reason?: string | undefined;
}

export type PermissionHandler = (
  request: PermissionRequest,
) => Promise<PermissionAnswer | boolean> | PermissionAnswer | boolean;

/** Nobody to ask (a non-interactive run without a handler): `ask` means no. */
export const DENY_UNASKED: PermissionHandler = () => ({
  allow: false,
  reason: 'the policy says ask, and nobody can be asked in this run',
});
