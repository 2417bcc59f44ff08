import { expect } from 'chai';
import { requestIdOf } from '../../../services/platform/http/app.ts';
import { newRequestId } from '../../../services/platform/http/request-id.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request ids (unit)', () => {
  it('are random version 4 UUIDs, none repeated, across many refills of the random pool', () => {
    const ids = Array.from({ length: 5000 }, () => newRequestId());
    for (const id of ids) expect(id).to.match(UUID_V4);
    expect(new Set(ids).size).to.equal(ids.length);
    // Every hex digit in every free position: not a counter or a fixed prefix.
    for (const at of [0, 7, 9, 15, 20, 24, 35]) expect(new Set(ids.map((id) => id[at])).size, `position ${at}`).to.equal(16);
  });

  it("keep a caller's plain-token id and replace anything else with a new one", () => {
    expect(requestIdOf('abc.DEF_1-2')).to.equal('abc.DEF_1-2');
    for (const bad of [undefined, '', 'a b', 'x'.repeat(129), 'id\r\nSet-Cookie: a=b', ['a', 'b']])
      expect(requestIdOf(bad)).to.match(UUID_V4);
  });
});
