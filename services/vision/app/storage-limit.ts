import type { Tier } from '../../kernel/tiers.ts';
import type { Config } from '../../platform/config.ts';
import { ragError, type Caller } from '../../premium/caller.ts';
import type { BlobStore } from '../blob-store.ts';

/**
 * Each capture keeps up to ~27 MB (PNG, DOM, page report) until retention deletes it: without a bound
 * per customer, one customer's loop of captures fills the database everyone shares. The bound is per
 * tier (VISION_STORAGE_MB_PRO / _TEAM); a capture is refused once the customer's stored bytes reach it.
 */

/** A caller of the vision operations; the tier, when the face knows it, chooses the storage bound. */
export interface VisionCaller extends Caller {
  tier?: Tier;
}

type StorageConfig = Pick<Config['vision'], 'storageMb' | 'retentionDays'>;

const MB = 1024 * 1024;

/**
 * Bytes this caller's customer may keep; null for operators (no key: the CLI), who are not bounded.
 * A key whose tier the face did not pass gets the smaller paid bound.
 */
export function storageLimitBytes(vision: StorageConfig, caller: VisionCaller): number | null {
  if (!caller.keyHash) return null;
  if (caller.tier === 'free') return 0;
  return (caller.tier === 'team' ? vision.storageMb.team : vision.storageMb.pro) * MB;
}

const inMb = (bytes: number): string => `${(bytes / MB).toFixed(1)} MB`;

/** Refuses a new capture (403 STORAGE_LIMIT_REACHED, saying how to free space) once the customer's stored bytes reach its bound. */
export async function admitStorage(
  deps: { blobs: Pick<BlobStore, 'usedBytes'>; config: { vision: StorageConfig; urls: { pricing: string } } },
  caller: VisionCaller,
): Promise<void> {
  const limit = storageLimitBytes(deps.config.vision, caller);
  if (limit === null) return;
  const used = await deps.blobs.usedBytes(caller.customerId);
  if (used < limit) return;
  const days = deps.config.vision.retentionDays;
  throw ragError(
    403,
    'STORAGE_LIMIT_REACHED',
    `stored screenshots and diff images take ${inMb(used)} of the ${inMb(limit)} this plan keeps: free space with DELETE /api/glm/screenshots/{id} or DELETE /api/glm/diffs/{id}, ` +
      `or wait: screenshots are deleted ${days} days after capture (a suite's baselines are kept); a larger plan keeps more`,
    { usedBytes: used, limitBytes: limit, retentionDays: days, upgrade: deps.config.urls.pricing },
  );
}
