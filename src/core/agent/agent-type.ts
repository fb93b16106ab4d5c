import { z } from 'zod';
import { EXECUTABLE_TOOL_NAMES, type ExecutableToolName } from '../wire/tool-names.ts';

/** An explicit agent type: its own system prompt, tools and model. Spawning one is not a fork. */
export interface AgentType {
  name: string;
  system: string;
  model: string;
  /** Tools it may run (declared and allowed); default: the engine's allowlist. */
  tools?: ExecutableToolName[];
  description?: string;
}

export const agentTypeSchema = z.strictObject({
  name: z.string().min(1),
  system: z.string().min(1),
  model: z.string().min(1),
  tools: z.array(z.enum(EXECUTABLE_TOOL_NAMES)).optional(),
  description: z.string().optional(),
});
