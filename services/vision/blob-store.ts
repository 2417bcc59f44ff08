import { GridFSBucket, ObjectId, type Collection, type Db, type GridFSFile } from 'mongodb';
import { createIndexesOneByOne } from '../../events/projection.ts';

/**
 * The bytes a capture keeps (PNG, DOM, page report, diff images) in GridFS, beside the projections
 * that name them: any process of the deployment can serve them, and they survive a restart. Ids
 * travel in events as hex strings.
 */
export type BlobKind = 'png' | 'dom' | 'report' | 'diff';

export class BlobStore {
  readonly #bucket: GridFSBucket;
  readonly #files: Collection<GridFSFile>;

  constructor(db: Db, bucketName = 'vision_blobs') {
    this.#bucket = new GridFSBucket(db, { bucketName, chunkSizeBytes: 255 * 1024 });
    this.#files = db.collection<GridFSFile>(`${bucketName}.files`);
  }

  /**
   * What a customer's storage total and the retention sweep read: by customer (with the length, so
   * the sum is read from the index alone), and by age. Plain indexes: no TTL in the core path.
   */
  async ensureIndexes(): Promise<void> {
    await createIndexesOneByOne(this.#files, [
      { key: { 'metadata.customerId': 1, length: 1 }, name: 'by_customer_length' },
      { key: { uploadDate: 1 }, name: 'by_upload_date' },
    ]);
  }

  /** Bytes this customer's blobs take now (screenshots, their DOM and report, diff images). */
  async usedBytes(customerId: string): Promise<number> {
    const [total] = await this.#files
      .aggregate<{ bytes: number }>([
        { $match: { 'metadata.customerId': customerId } },
        { $group: { _id: null, bytes: { $sum: '$length' } } },
      ])
      .toArray();
    return total?.bytes ?? 0;
  }

  /** Removes a blob of this customer's; another's, or one of another kind, is left alone (false). */
  async deleteOwned(id: string, customerId: string, kind: BlobKind): Promise<boolean> {
    if (!/^[0-9a-f]{24}$/i.test(id)) return false;
    const file = await this.#files.findOne(
      { _id: new ObjectId(id), 'metadata.customerId': customerId, 'metadata.kind': kind },
      { projection: { _id: 1 } },
    );
    return file ? this.delete(id) : false;
  }

  /** Removes a blob; true if it was there. */
  async delete(id: string): Promise<boolean> {
    if (!/^[0-9a-f]{24}$/i.test(id)) return false;
    try {
      await this.#bucket.delete(new ObjectId(id));
      return true;
    } catch (err) {
      if (/FileNotFound|not found/i.test((err as Error).message)) return false;
      throw err;
    }
  }

  /** Blobs stored before `before`, oldest first, at most `limit`, from past `after` (the last of the previous page). */
  async storedBefore(before: Date, limit: number, after?: { uploadDate: Date; id: string }): Promise<{ id: string; uploadDate: Date }[]> {
    const filter = after
      ? {
          $or: [
            { uploadDate: { $gt: after.uploadDate, $lt: before } },
            { uploadDate: after.uploadDate, _id: { $gt: new ObjectId(after.id) } },
          ],
        }
      : { uploadDate: { $lt: before } };
    const files = await this.#files
      .find(filter, { projection: { _id: 1, uploadDate: 1 } })
      .sort({ uploadDate: 1, _id: 1 })
      .limit(limit)
      .toArray();
    return files.map((f) => ({ id: f._id.toHexString(), uploadDate: f.uploadDate }));
  }

  async put(bytes: Buffer, meta: { customerId: string; kind: BlobKind; contentType: string }): Promise<string> {
    const upload = this.#bucket.openUploadStream(`${meta.kind}`, {
      metadata: { customerId: meta.customerId, kind: meta.kind, contentType: meta.contentType },
    });
    await new Promise<void>((resolve, reject) => {
      upload.once('finish', () => resolve());
      upload.once('error', reject);
      upload.end(bytes);
    });
    return upload.id.toHexString();
  }

  /** The blob if it is this customer's (stored for them), else null: another's blob is no blob. */
  async getOwned(id: string, customerId: string, kind: BlobKind): Promise<Buffer | null> {
    if (!/^[0-9a-f]{24}$/i.test(id)) return null;
    const file = await this.#bucket
      .find({ _id: new ObjectId(id) })
      .limit(1)
      .next();
    const meta = file?.metadata as { customerId?: unknown; kind?: unknown } | undefined;
    if (meta?.customerId !== customerId || meta.kind !== kind) return null;
    return this.get(id);
  }

  /** The blob's bytes, or null when there is no such blob (a malformed id is no such blob). */
  async get(id: string): Promise<Buffer | null> {
    if (!ObjectId.isValid(id) || !/^[0-9a-f]{24}$/i.test(id)) return null;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of this.#bucket.openDownloadStream(new ObjectId(id))) chunks.push(chunk as Buffer);
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT' || /FileNotFound|not found/i.test((err as Error).message)) return null;
      throw err;
    }
    return Buffer.concat(chunks);
  }
}
