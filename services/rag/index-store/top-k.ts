/**
 * The k best of n scores without sorting all n: a min-heap of size k (n log k). Equal scores keep
 * the lower index, so results do not depend on the order the heap saw them in.
 */
export class TopK {
  readonly #k: number;
  readonly #scores: Float64Array;
  readonly #indexes: Int32Array;
  #size = 0;

  constructor(k: number) {
    this.#k = Math.max(0, Math.floor(k));
    this.#scores = new Float64Array(this.#k);
    this.#indexes = new Int32Array(this.#k);
  }

  /** Whether `score` at `index` would enter the heap now (a cheap pre-check for tight loops). */
  wouldTake(score: number, index: number): boolean {
    if (this.#size < this.#k) return true;
    if (this.#k === 0) return false;
    return better(score, index, this.#scores[0] as number, this.#indexes[0] as number);
  }

  push(score: number, index: number): void {
    if (this.#k === 0) return;
    if (this.#size < this.#k) {
      let i = this.#size++;
      // sift up: the root holds the worst entry
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!better(this.#scores[parent] as number, this.#indexes[parent] as number, score, index)) break;
        this.#scores[i] = this.#scores[parent] as number;
        this.#indexes[i] = this.#indexes[parent] as number;
        i = parent;
      }
      this.#scores[i] = score;
      this.#indexes[i] = index;
      return;
    }
    if (!better(score, index, this.#scores[0] as number, this.#indexes[0] as number)) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.#size) break;
      const right = left + 1;
      let worst = left;
      if (
        right < this.#size &&
        better(this.#scores[left] as number, this.#indexes[left] as number, this.#scores[right] as number, this.#indexes[right] as number)
      )
        worst = right;
      if (!better(score, index, this.#scores[worst] as number, this.#indexes[worst] as number)) break;
      this.#scores[i] = this.#scores[worst] as number;
      this.#indexes[i] = this.#indexes[worst] as number;
      i = worst;
    }
    this.#scores[i] = score;
    this.#indexes[i] = index;
  }

  /** Best first. */
  sorted(): Array<{ index: number; score: number }> {
    const out: Array<{ index: number; score: number }> = [];
    for (let i = 0; i < this.#size; i++) out.push({ index: this.#indexes[i] as number, score: this.#scores[i] as number });
    return out.sort((a, b) => (better(a.score, a.index, b.score, b.index) ? -1 : 1));
  }
}

function better(scoreA: number, indexA: number, scoreB: number, indexB: number): boolean {
  return scoreA > scoreB || (scoreA === scoreB && indexA < indexB);
}
