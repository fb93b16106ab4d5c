/**
 * Which parts of an HTTP exchange carry credentials, and how they are written down: one home
 * for the proxy and the emulator, so that what one masks the other cannot forget (the proxy
 * masked `x-api-key` and `authorization` only, the emulator's log missed `api-key` and query
 * keys). Everything either writes — exchange logs, stderr, reports, `--json` — goes through a
 * `CredentialMask`. Nothing here imports forkcache.
 */

/** Headers whose value is a credential (compared lower-case): Anthropic, OpenAI, Azure, Google, cookies, proxies. */
export const CREDENTIAL_HEADERS: readonly string[] = [
  'x-api-key',
  'authorization',
  'proxy-authorization',
  'api-key',
  'x-goog-api-key',
  'anthropic-api-key',
  'anthropic-admin-api-key',
  'openai-api-key',
  'x-auth-token',
  'x-amz-security-token',
  'x-dashscope-api-key',
  'cookie',
  'set-cookie',
];

/** Query parameters whose value is a credential (compared lower-case, `-` and `_` alike). */
const CREDENTIAL_QUERY_PARAMS: readonly string[] = [
  'key',
  'api_key',
  'apikey',
  'x_api_key',
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'auth',
  'auth_token',
  'sig',
  'signature',
  'x_amz_signature',
  'x_amz_security_token',
  'x_goog_signature',
  'client_secret',
  'secret',
  'password',
  'code',
];

/** A header name as RFC 9110 §5.1 allows it (a token), for options that name headers. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const paramKey = (name: string): string => name.toLowerCase().replace(/-/g, '_');
const QUERY_SET = new Set(CREDENTIAL_QUERY_PARAMS.map(paramKey));

/**
 * `Bearer sk-ant-api03-…wxyz` → `Bearer ****wxyz`: the scheme word and, for a long value, its
 * last four characters (enough to tell two keys apart, never enough to use one).
 */
export function maskSecret(value: string): string {
  const match = /^([A-Za-z][\w-]*)\s+(\S.*)$/s.exec(value);
  const scheme = match ? match[1]! : '';
  const token = match ? match[2]! : value;
  const tail = token.length >= 16 ? token.slice(-4) : '';
  return `${scheme ? `${scheme} ` : ''}****${tail}`;
}

type HeaderValue = string | string[] | number | undefined;

/** Masks credentials out of headers, URLs and free text before they are written anywhere. */
export interface CredentialMask {
  /** Whether a header (any case) carries a credential. */
  isSecretHeader(name: string): boolean;
  /** Headers as written to a log: credential values masked, everything else as text. */
  headers(headers: Readonly<Record<string, HeaderValue>>): Record<string, string | string[]>;
  /** A URL or a request target (`/v1/messages?key=…`): credential query values and userinfo masked. */
  url(target: string): string;
  /**
   * Remember the credential values these headers carry (a request the proxy forwards), so that
   * `text` masks them wherever they turn up again: an upstream answering 401 "invalid
   * x-api-key: <key>" put the key in the log, on stderr and in the report.
   */
  learn(headers: Readonly<Record<string, HeaderValue>>): void;
  /** Free text (a log line, an upstream's error message) with every credential value learnt so far masked. */
  text(text: string): string;
}

// shorter values would mask ordinary words; no real credential is this short
const MIN_LEARNT = 8;
// a proxy sees a few keys; a client sending a new one per request must not grow this for ever
const MAX_LEARNT = 256;

/** The parts of a credential header's value that are secrets: the whole, the token after a scheme, cookie values. */
function secretsOf(value: string): string[] {
  const out = [value];
  const scheme = /^[A-Za-z][\w-]*\s+(\S.*)$/s.exec(value);
  if (scheme) out.push(scheme[1]!);
  for (const pair of value.split(/;\s*/)) {
    const eq = pair.indexOf('=');
    if (eq > 0) out.push(pair.slice(eq + 1));
  }
  return out.map((v) => v.trim()).filter((v) => v.length >= MIN_LEARNT);
}

/**
 * A mask for the built-in credential headers and query parameters, plus `extraHeaders` (a
 * user's own, e.g. `x-corp-gateway-token`; any case).
 */
export function credentialMask(extraHeaders: readonly string[] = []): CredentialMask {
  const secret = new Set([...CREDENTIAL_HEADERS, ...extraHeaders].map((h) => h.toLowerCase()));
  const isSecretHeader = (name: string): boolean => secret.has(name.toLowerCase());
  const learnt = new Map<string, string>(); // value → its masked form, longest first when used
  let ordered: [string, string][] = [];
  return {
    isSecretHeader,
    learn(headers) {
      let added = false;
      for (const [name, value] of Object.entries(headers)) {
        if (value === undefined || !isSecretHeader(name)) continue;
        for (const one of Array.isArray(value) ? value.map(String) : [String(value)])
          for (const part of secretsOf(one)) {
            if (learnt.has(part)) continue;
            if (learnt.size >= MAX_LEARNT) learnt.delete(learnt.keys().next().value!);
            learnt.set(part, maskSecret(part));
            added = true;
          }
      }
      if (added) ordered = [...learnt].sort((a, b) => b[0].length - a[0].length);
    },
    text(text) {
      let out = text;
      for (const [value, masked] of ordered) if (out.includes(value)) out = out.replaceAll(value, masked);
      return out;
    },
    headers(headers) {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(headers)) {
        if (value === undefined) continue;
        const text = Array.isArray(value) ? value.map(String) : String(value);
        out[name] = !isSecretHeader(name) ? text : Array.isArray(text) ? text.map(maskSecret) : maskSecret(text);
      }
      return out;
    },
    url: maskUrl,
  };
}

/** The query string with each credential parameter's value masked (names and order kept). */
function maskQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // a malformed escape: compare the name as written
      }
      return QUERY_SET.has(paramKey(name)) ? `${pair.slice(0, eq)}=${maskSecret(pair.slice(eq + 1))}` : pair;
    })
    .join('&');
}

/** Mask a URL or request target: `user:password@` and credential query values; the fragment too. */
export function maskUrl(target: string): string {
  // userinfo of an absolute URL (`https://user:pass@host/...`)
  let out = target.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, '$1****@');
  const q = out.indexOf('?');
  if (q < 0) return out;
  const hash = out.indexOf('#', q);
  const query = out.slice(q + 1, hash < 0 ? undefined : hash);
  const fragment = hash < 0 ? '' : `#${maskQuery(out.slice(hash + 1))}`;
  out = `${out.slice(0, q)}?${maskQuery(query)}${fragment}`;
  return out;
}
