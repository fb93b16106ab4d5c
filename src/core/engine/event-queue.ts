import { ForkcacheError } from '../util/errors.ts';
/**
 * An unbounded async queue with one consumer: producers `push`, the consumer iterates with
 * `for await`. Events pushed before iteration starts are kept; iteration ends after `end()`
 * once the buffer is drained.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  #buffer: T[] = [];
  #waiter: ((result: IteratorResult<T>) => void) | undefined;
  #ended = false;
  #iterating = false;

  push(item: T): void {
    if (this.#ended) return;
    if (this.#waiter) {
      const waiter = this.#waiter;
      this.#waiter = undefined;
      waiter({ value: item, done: false });
    } else this.#buffer.push(item);
  }

  end(): void {
    this.#ended = true;
    if (this.#waiter && this.#buffer.length === 0) {
      const waiter = this.#waiter;
      this.#waiter = undefined;
      waiter({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.#iterating)
      throw new ForkcacheError(
        'INVALID_OPTION',
        'the events of a fan-out can be iterated once: keep one `for await` loop (or use settled())',
      );
    this.#iterating = true;
    return {
      next: () => {
        const item = this.#buffer.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.#waiter = resolve));
      },
      return: () => {
        this.#buffer = [];
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
