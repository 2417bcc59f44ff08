import bcrypt from 'bcryptjs';

/**
 * bcryptjs hashing. A login for an unknown e-mail still compares against a dummy hash of the same
 * cost, so both failures take the same time and an attacker cannot probe for accounts.
 */
export class Passwords {
  private readonly cost: number;
  private dummy: Promise<string> | undefined;

  constructor(cost: number) {
    this.cost = cost;
  }

  hash(password: string): Promise<string> {
    return bcrypt.hash(password, this.cost);
  }

  async verify(password: string, hash: string | undefined): Promise<boolean> {
    this.dummy ??= bcrypt.hash('dummy password for timing', this.cost);
    const matches = await bcrypt.compare(password, hash ?? (await this.dummy));
    return hash !== undefined && matches;
  }
}
