/** Output of one stream, kept up to a byte cap (the rest is counted, not stored). */
export class Capture {
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #dropped = 0;
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  push(chunk: Buffer): void {
    const room = this.#max - this.#kept;
    if (room > 0) this.#chunks.push(chunk.subarray(0, room));
    this.#kept += Math.min(room, chunk.length);
    this.#dropped += Math.max(0, chunk.length - Math.max(room, 0));
  }

  text(): string {
    const body = Buffer.concat(this.#chunks).toString('utf8');
    return this.#dropped > 0 ? `${body}\n[truncated: ${this.#dropped} more bytes]` : body;
  }
}
