import { expect } from 'chai';
import { linkNotice } from '../../../services/console/sso-link-pages.routes.ts';

describe('the SSO link page (unit)', () => {
  it('shows a notice only for its own ?done= names: __proto__ or toString is none (it was a 500 found by the fuzz suite)', () => {
    expect(linkNotice('linked')).to.deep.include({ kind: 'ok' });
    expect(linkNotice('unlinked')?.text).to.match(/link is removed/);
    for (const name of ['__proto__', 'toString', 'constructor', 'hasOwnProperty', 'valueOf', '', 'LINKED'])
      expect(linkNotice(name), name).to.equal(undefined);
    expect(linkNotice(['linked'])).to.equal(undefined);
    expect(linkNotice(undefined)).to.equal(undefined);
  });
});
