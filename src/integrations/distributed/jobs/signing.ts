import { createHmac, timingSafeEqual } from 'node:crypto';
import { ForkcacheError } from '../../../core/util/errors.ts';

/** The variable the submitter and every host read the shared job secret from. */
const JOB_SECRET_ENV = 'FORKCACHE_JOB_SECRET';
const MIN_SECRET_CHARS = 32;

/**
 * The secret jobs are signed with: given, or `FORKCACHE_JOB_SECRET`. Without one the backend
 * refuses to start: anyone who can write to Redis (a fork's bash over a shared network, another
 * tenant) could otherwise queue work that a host runs with its own API key. It is never stored
 * in Redis.
 */
export function resolveJobSecret(given: string | undefined, field: string): string {
  const secret = given ?? process.env[JOB_SECRET_ENV];
  if (!secret)
    throw new ForkcacheError(
      'INVALID_OPTION',
      `${field}: the distributed backend signs its jobs: set ${JOB_SECRET_ENV} to the same secret on the submitter and every host (e.g. \`openssl rand -hex 32\`)`,
      { data: { field } },
    );
  if (secret.length < MIN_SECRET_CHARS)
    throw new ForkcacheError(
      'INVALID_OPTION',
      `${field}: the job secret has ${secret.length} characters, at least ${MIN_SECRET_CHARS} are needed (e.g. \`openssl rand -hex 32\`)`,
      { data: { field } },
    );
  return secret;
}

/** What a signed value is: its JSON text, the key it was signed with (an id, not the key) and the MAC. */
export interface Signed {
  v: 2;
  kid: string;
  body: string;
  sig: string;
}

/** `job`: submitter → host; `progress` and `result`: host → submitter. A MAC of one kind never passes for another. */
type SignedKind = 'job' | 'progress' | 'result';

const isSigned = (value: unknown): value is Signed =>
  typeof value === 'object' &&
  value !== null &&
  (value as Signed).v === 2 &&
  typeof (value as Signed).kid === 'string' &&
  typeof (value as Signed).body === 'string' &&
  typeof (value as Signed).sig === 'string';

/**
 * HMAC-SHA256 over everything a value means: its kind, the queue, the BullMQ job id and its
 * JSON text. The job id names the fork (`<forkId>.<time>.<n>`), so a job's data copied to
 * another job (another fork, another run, the same fork again) does not verify there.
 */
export class JobSigner {
  readonly #secret: string;
  readonly #queue: string;
  /** Names the secret without revealing it: tells "another secret" from "tampered". */
  readonly kid: string;

  constructor(secret: string, queue: string) {
    this.#secret = secret;
    this.#queue = queue;
    this.kid = createHmac('sha256', secret).update('forkcache key id').digest('hex').slice(0, 16);
  }

  #mac(kind: SignedKind, jobId: string, body: string): Buffer {
    return createHmac('sha256', this.#secret)
      .update(`forkcache-${kind}\0${this.#queue}\0${jobId}\0`)
      .update(body)
      .digest();
  }

  seal(kind: SignedKind, jobId: string, value: unknown): Signed {
    const body = JSON.stringify(value);
    return { v: 2, kid: this.kid, body, sig: this.#mac(kind, jobId, body).toString('hex') };
  }

  /** The value, once its MAC checks; otherwise `JOB_SIGNATURE_INVALID` saying which check failed. */
  open<T>(kind: SignedKind, jobId: string, value: unknown): T {
    const refuse = (reason: string, why: string): never => {
      throw new ForkcacheError(
        'JOB_SIGNATURE_INVALID',
        `${kind === 'job' ? '' : `the ${kind} of `}job ${jobId} refused: ${why}`,
        {
          data: { jobId, kind, reason },
        },
      );
    };
    if (!isSigned(value))
      return refuse('unsigned', 'it is not signed (forged in Redis, or written by a forkcache without job signing)');
    if (value.kid !== this.kid)
      return refuse(
        'other-key',
        `it is signed with key ${value.kid}, this process's ${JOB_SECRET_ENV} is key ${this.kid}: the submitter and the hosts must share one secret`,
      );
    const expected = this.#mac(kind, jobId, value.body);
    const given = Buffer.from(value.sig, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return refuse(
        'bad-mac',
        'its signature does not match its data (changed in Redis, or copied from another job: another fork or run)',
      );
    return JSON.parse(value.body) as T;
  }
}
