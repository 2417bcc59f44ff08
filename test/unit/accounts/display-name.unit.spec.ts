import { expect } from 'chai';
import { cleanName, containsLink, nameForMail } from '../../../services/accounts/display-name.ts';
import { signupInput } from '../../../services/accounts/credentials-input.ts';

describe('display names (unit)', () => {
  const signup = (name: unknown) => signupInput.safeParse({ email: 'a@example.test', password: 'long enough', name });

  it('turns line breaks into spaces and drops control, bidi and zero-width characters', () => {
    expect(cleanName('  Eve\r\nBcc: x\u0000\u202e\u200b  \t Smith ')).to.equal('Eve Bcc: x Smith');
    expect(cleanName('Zoë 李 Ørsted-Ng')).to.equal('Zoë 李 Ørsted-Ng');
  });

  it('sees schemes, www. and domains (e-mail addresses too) as links', () => {
    for (const name of ['https://evil.example', 'javascript://x', 'go to www.example', 'evil.com', 'me@evil.example', 'пример.рф']) {
      expect(containsLink(name), name).to.equal(true);
    }
    for (const name of ['Ada Lovelace', 'J. R. R. Tolkien', 'Dr. No', 'Grace <Hopper>', "O'Brien"])
      expect(containsLink(name), name).to.equal(false);
  });

  it('sign-up stores the cleaned name, refuses links and names that clean to nothing, and keeps the 100 character cap', () => {
    const ok = signup(' Eve\nBcc: x ');
    expect(ok.success && ok.data.name).to.equal('Eve Bcc: x');
    for (const [name, message] of [
      ['visit evil.com', /must not contain a link/],
      ['\u0000\u202e\r\n', /name is required/],
      ['A'.repeat(101), /at most 100 characters/],
    ] as const) {
      const res = signup(name);
      expect(res.success, JSON.stringify(name)).to.equal(false);
      expect(res.error?.issues[0]?.message, JSON.stringify(name)).to.match(message);
    }
  });

  // Found by npm run fuzz: the link search ran on any length, quadratic in it (90 kB: seconds).
  it('refuses a 90 kB name as too long within milliseconds', () => {
    for (const name of ['a'.repeat(90_000), `${'a-'.repeat(45_000)}`, `${'1'.repeat(90_000)}.x`]) {
      const started = performance.now();
      const res = signup(name);
      expect(performance.now() - started, 'ms').to.be.lessThan(100);
      expect(res.error?.issues[0]?.message).to.match(/at most 100 characters/);
    }
  });

  it('mails greet with a capped clean name, or without one', () => {
    expect(nameForMail('A'.repeat(300))).to.equal('A'.repeat(100));
    expect(nameForMail('x\u0000\ny')).to.equal('x y');
    expect(nameForMail('see evil.com')).to.equal(null);
    expect(nameForMail('\u202e')).to.equal(null);
    expect(nameForMail(null)).to.equal(null);
  });
});
