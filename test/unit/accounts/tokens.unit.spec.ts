import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { issueToken, verifyToken, type TokenSettings } from '../../../services/accounts/tokens.ts';

const settings: TokenSettings = { secret: 'unit-secret-0123456789abcdef-0123456789', issuer: 'svc', audience: 'svc-api' };
const subject = { id: 'user-1', email: 'a@example.test', tier: 'free' as const, tokenVersion: 0 };

describe('session tokens (unit)', () => {
  it('gives every token an id of its own (jti), so one can be logged out without the others', () => {
    const ids = new Set(Array.from({ length: 50 }, () => (jwt.decode(issueToken(settings, subject)) as jwt.JwtPayload).jti));
    expect(ids.size).to.equal(50);
    for (const id of ids) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const claims = verifyToken(settings, issueToken(settings, subject));
    expect(claims).to.be.an('object');
    expect((claims as { jti?: string }).jti).to.be.a('string');
  });

  it('accepts a token from before jti (log-out then refuses all of the account), refuses a jti issueToken never writes', () => {
    const iat = Math.floor(Date.now() / 1000);
    const base = { sub: 'user-1', email: 'a@example.test', tier: 'free', ver: 0, iss: 'svc', aud: 'svc-api', iat, exp: iat + 60 };
    const sign = (extra: object) => jwt.sign({ ...base, ...extra }, settings.secret, { algorithm: 'HS256' });
    expect(verifyToken(settings, sign({}))).to.include({ sub: 'user-1' });
    for (const jti of ['', 'x'.repeat(500), 'not-a-uuid', 42, { $ne: null }])
      expect(verifyToken(settings, sign({ jti })), String(jti)).to.equal('invalid');
  });
});
