import { expect } from 'chai';
import { setHeapGrowth } from '../../../services/platform/heap-growth.ts';

describe('setHeapGrowth: what it accepts', () => {
  it('refuses anything but a whole percent from 0 to 400, before touching V8', () => {
    for (const bad of [-1, 401, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => setHeapGrowth(bad), String(bad)).to.throw(RangeError, /whole percent from 0 to 400/);
    }
  });
});
