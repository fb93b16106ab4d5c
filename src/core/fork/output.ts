import { parseReport } from './report.ts';

/*
 * Typed fork results: a fan-out with an output schema asks each child for one JSON value in its
 * report, and reads it back from the child's final text. The schema itself is checked by the
 * embedder's code on the engine's thread (a Standard Schema is a function: it cannot cross into a
 * worker); this module only finds the value in the text and words what the child is told.
 */

// a ```json (or bare ```) fenced block; the last one wins: a report may quote earlier attempts first
const FENCE = /```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n[ \t]*```/gi;

/** The JSON value of a child's report, or why there is none (a sentence the child is shown). */
type ExtractedOutput = { ok: true; value: unknown } | { ok: false; message: string };

function parseJson(text: string): ExtractedOutput {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, message: `the JSON does not parse: ${(err as Error).message}` };
  }
}

/**
 * The value a child reported: the last ```json fenced block of its final text; else its
 * `Result:` field, or the whole text, when that is JSON by itself.
 */
export function extractOutput(finalText: string): ExtractedOutput {
  const fences = [...finalText.matchAll(FENCE)];
  const last = fences.at(-1);
  if (last) return parseJson(last[1]!.trim());
  for (const candidate of [parseReport(finalText).result, finalText]) {
    const text = candidate?.trim() ?? '';
    if (text.startsWith('{') || text.startsWith('[')) return parseJson(text);
  }
  return { ok: false, message: 'the report has no ```json block holding the result' };
}

/**
 * What a child of a fan-out with an output schema is told after its directive: where the value
 * goes, and the schema as JSON Schema when the embedder's schema can give one.
 */
export function outputInstruction(jsonSchema: unknown): string {
  const shape =
    jsonSchema === undefined
      ? ''
      : ` It must match this JSON Schema:\n\`\`\`json\n${JSON.stringify(jsonSchema)}\n\`\`\``;
  return `\n\nOutput: your report's Result: field is one JSON value in a \`\`\`json fenced block.${shape}`;
}
