import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { bindingHash } from '../../../services/accounts/sso/one-time-codes.ts';
import { BINDING_COOKIE, bindingCookie, bindingHashOf, isBindingSecret, newBindingSecret } from '../../../services/console/sso-binding.ts';

describe('console: the single sign-on browser binding (unit)', () => {
  it('is 32 random bytes, of which the accounts service gets only the SHA-256, as it computes it', () => {
    const secret = newBindingSecret();
    expect(isBindingSecret(secret)).to.equal(true);
    expect(newBindingSecret()).not.to.equal(secret);
    expect(bindingHashOf(secret)).to.equal(createHash('sha256').update(secret).digest('base64url'));
    expect(bindingHashOf(secret)).to.equal(bindingHash(secret));
    expect(bindingHashOf(secret)).not.to.include(secret);
  });

  it('lives in an HttpOnly, Secure, SameSite=Lax cookie on /sso/complete only, ten minutes', () => {
    expect(bindingCookie('x', 600)).to.equal(`${BINDING_COOKIE}=x; Path=/sso/complete; HttpOnly; Secure; SameSite=Lax; Max-Age=600`);
    expect(bindingCookie('', 0)).to.include('Max-Age=0');
  });

  it('takes from a cookie only what can be a secret of its making', () => {
    for (const bad of [undefined, '', 'short', `${'a'.repeat(42)};`, 'a'.repeat(44)])
      expect(isBindingSecret(bad), String(bad)).to.equal(false);
  });
});
