import { z } from 'zod';
import { formatZodIssues } from '../../core/util/validation.ts';
import type { Line } from './claude-tail.ts';
import { malformed } from './claude-wire.ts';

/*
 * `api-request-route` (Claude Code 2.1.333 on): where the session's API requests went. One record
 * when the session starts and one after each response, `{ provider, credential, sessionId }`.
 * `provider` is Claude Code's name for the destination: `anthropic` (Anthropic's API),
 * `customEndpoint` (some other host: ANTHROPIC_BASE_URL, an LLM gateway or proxy, forkcache's
 * proxy or emulator), a cloud's own service (`bedrock`, `vertex`, `foundry`, `anthropicAws`,
 * `mantle`, `anthropic<Cloud>`), `gateway` (Anthropic's sign-in gateway), or `unrecorded` /
 * `other`. `credential` is how it signed in: `login`, `key`, `token`, `cloud`, `gateway`, `none`.
 *
 * For forkcache it says where the session's cached prefix lives: the cache is per endpoint, so
 * forks read what the session wrote only when they are sent to the same one. Read here, not
 * skipped: the import says where the session went, and `run` says when the forks go elsewhere.
 */

export interface SessionRoute {
  provider: string;
  credential: string;
  /** The transcript line of the route record read (the last one of the main session). */
  line: number;
}

export const ROUTE_RECORD_TYPE = 'api-request-route';

const routeRecord = z.looseObject({ provider: z.string().min(1), credential: z.string().min(1) });

/** The providers whose cache is Anthropic's API's (forkcache's `--api real` without a base URL). */
const ANTHROPIC = new Set(['anthropic', 'firstParty']);
const UNKNOWN = new Set(['unrecorded', 'other']);
/** The default Anthropic endpoint, as the SDK and forkcache's `--api real` use it without ANTHROPIC_BASE_URL. */
const ANTHROPIC_ORIGIN = 'https://api.anthropic.com';

/**
 * The session's last route record, or `undefined` when it has none (Claude Code before
 * 2.1.333). Every route record is validated: a malformed one names file and line.
 * @throws ForkcacheError `TRANSCRIPT_INVALID`.
 */
export function sessionRoute(path: string, lines: readonly Line[]): SessionRoute | undefined {
  let last: SessionRoute | undefined;
  for (const { line, value } of lines) {
    if ((value as { type?: unknown }).type !== ROUTE_RECORD_TYPE) continue;
    const parsed = routeRecord.safeParse(value);
    if (!parsed.success) malformed(path, line, ROUTE_RECORD_TYPE, formatZodIssues(parsed.error.issues));
    last = { provider: parsed.data.provider, credential: parsed.data.credential, line };
  }
  return last;
}

/** What the route means for the forks, as a note for the user. */
export function routeNote(route: SessionRoute): string {
  const where = `the session sent its requests to ${route.provider} (credential ${route.credential}, line ${route.line})`;
  if (ANTHROPIC.has(route.provider))
    return `${where}: its cache is on Anthropic's API, where forks sent without ANTHROPIC_BASE_URL read it`;
  if (route.provider === 'customEndpoint')
    return `${where}: a host of its own (ANTHROPIC_BASE_URL, a gateway or a proxy); forks read its cache only when sent to the same base URL`;
  if (UNKNOWN.has(route.provider)) return `${where}: Claude Code did not record where, so the cache's place is unknown`;
  return `${where}, a cloud provider's own service: forks on the Anthropic API cannot read its cache and write their own`;
}

/**
 * A warning when the forks go somewhere the session's cache is not (`undefined` when they may
 * read it): a session through a custom endpoint forked on Anthropic's API, a session on
 * Anthropic's API forked through another base URL, or a session on a cloud's service.
 */
export function routeMismatch(route: SessionRoute, forkBaseURL: string): string | undefined {
  if (UNKNOWN.has(route.provider)) return undefined;
  const toAnthropic = originOf(forkBaseURL) === ANTHROPIC_ORIGIN;
  if (route.provider === 'customEndpoint' && toAnthropic)
    return `the session went through a custom endpoint, and the forks go to ${ANTHROPIC_ORIGIN}: they will not read the cache it wrote there (set ANTHROPIC_BASE_URL to the session's endpoint)`;
  if (ANTHROPIC.has(route.provider) && !toAnthropic)
    return `the session went to Anthropic's API, and the forks go to ${forkBaseURL}: they read its cache only if that endpoint forwards to the same organisation's API`;
  if (!ANTHROPIC.has(route.provider) && route.provider !== 'customEndpoint')
    return `the session went to ${route.provider}, and the forks go to ${forkBaseURL}: they will write a cache of their own`;
  return undefined;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
