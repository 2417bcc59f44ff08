/**
 * Page weight: the bytes a capture has received from the network, against its limit. Shared by the
 * connection layer (which counts) and the request layer (which stops asking once it is spent).
 */
export class ByteBudget {
  readonly limit: number;
  #used = 0;
  readonly #listeners: Array<() => void> = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  get used(): number {
    return this.#used;
  }

  get exceeded(): boolean {
    return this.#used > this.limit;
  }

  /** Counts `bytes`; false once the limit is passed (the caller then stops the transfer). */
  add(bytes: number): boolean {
    const before = this.exceeded;
    this.#used += bytes;
    if (!before && this.exceeded) for (const listener of this.#listeners.splice(0)) listener();
    return !this.exceeded;
  }

  onExceeded(listener: () => void): void {
    if (this.exceeded) listener();
    else this.#listeners.push(listener);
  }
}
