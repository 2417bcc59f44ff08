import type { Collection, Db } from 'mongodb';
import { findTeam } from './workspaces.projection.ts';

/**
 * One team per single sign-on domain, decided at once and atomically: a claim document whose `_id` is
 * the domain (an insert on `_id` is the one uniqueness MongoDB and FerretDB both make atomic). A team
 * claims a domain when it proves it (the owner confirms the proof e-mail's link), not when it names
 * it: naming a domain holds nothing, so nobody can squat a company's domain by configuring it first,
 * and of two teams that both name one, the first to prove control gets it. The workspaces projection
 * says the same later, from the log; the claim is what makes two owners proving one domain at the same
 * moment get one 200 and one 409, where reading the projection would let both through.
 *
 * A claim can outlive its reason (the process died between claiming and publishing): one older than
 * a minute whose team has not proven the domain is stale, and is taken over.
 *
 * A proof's link is spent here too, once, for every process: `spend` inserts the proof's id.
 */

const COLLECTION = 'sso_domain_claims';
const SPENT_PROOFS = 'sso_domain_proofs_spent';
const STALE_AFTER_MS = 60_000;

interface Claim {
  _id: string;
  subscriptionId: string;
  claimedAt: Date;
}

interface SpentProof {
  _id: string;
  subscriptionId: string;
  spentAt: Date;
}

export class SsoDomainClaims {
  readonly #claims: Collection<Claim>;
  readonly #spent: Collection<SpentProof>;
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    this.#claims = db.collection<Claim>(COLLECTION);
    this.#spent = db.collection<SpentProof>(SPENT_PROOFS);
  }

  async ensureIndexes(): Promise<void> {
    await this.#claims.createIndex({ subscriptionId: 1 });
  }

  /** Spends a proof's link: true the first time, for whichever process asks first; false ever after. */
  async spend(subscriptionId: string, proofId: string, now = new Date()): Promise<boolean> {
    try {
      await this.#spent.insertOne({ _id: proofId, subscriptionId, spentAt: now });
      return true;
    } catch (err) {
      if ((err as { code?: number }).code === 11000) return false;
      throw err;
    }
  }

  /**
   * Claims every domain for the team, or none: the first domain another team holds is answered (and the
   * claims this call made are given back).
   */
  async claim(subscriptionId: string, domains: readonly string[], now = new Date()): Promise<{ taken: string | null }> {
    const made: string[] = [];
    for (const domain of domains) {
      const outcome = await this.#claimOne(subscriptionId, domain, now);
      if (outcome === 'taken') {
        for (const d of made) await this.#claims.deleteOne({ _id: d, subscriptionId });
        return { taken: domain };
      }
      if (outcome === 'made') made.push(domain);
    }
    return { taken: null };
  }

  /** Gives back the team's claims on every domain but `keep`. */
  async release(subscriptionId: string, keep: readonly string[] = []): Promise<void> {
    const held = await this.#claims.find({ subscriptionId }).toArray();
    for (const claim of held) if (!keep.includes(claim._id)) await this.#claims.deleteOne({ _id: claim._id, subscriptionId });
  }

  async #claimOne(subscriptionId: string, domain: string, now: Date): Promise<'made' | 'held' | 'taken'> {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await this.#claims.insertOne({ _id: domain, subscriptionId, claimedAt: now });
        return 'made';
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
      }
      const holder = await this.#claims.findOne({ _id: domain });
      if (!holder) continue;
      if (holder.subscriptionId === subscriptionId) return 'held';
      if (!(await this.#stale(holder, now))) return 'taken';
      // Delete the stale claim (only if it is still that one) and insert ours; a racer's insert in between wins.
      await this.#claims.deleteOne({ _id: domain, subscriptionId: holder.subscriptionId, claimedAt: holder.claimedAt });
    }
    return 'taken';
  }

  async #stale(claim: Claim, now: Date): Promise<boolean> {
    if (now.getTime() - claim.claimedAt.getTime() < STALE_AFTER_MS) return false;
    const team = await findTeam(this.#db, claim.subscriptionId);
    return !(team?.sso?.provenDomains ?? []).includes(claim._id);
  }
}
